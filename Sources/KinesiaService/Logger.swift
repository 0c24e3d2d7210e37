import Foundation
import KinesiaJSON

/// A tiny logger for the `kinesia` processes: one line per message on standard error.
///
/// ```swift
/// let log = Logger(label: "worker", level: .info, sink: FileDescriptorSink.standardError)
/// log.info("subscribed to pose/cam0/")
/// // worker: info: subscribed to pose/cam0/
/// ```
///
/// Messages under ``level`` are not even built (the message is an autoclosure). A message is
/// always one line, whatever it quotes: its control characters are escaped
/// (`String.escapingControlCharacters`), so a topic or a name from the bus never reaches the
/// operator's terminal as an escape sequence.
public struct Logger: Sendable {
    /// How important a message is.
    public enum Level: String, CaseIterable, Comparable, Sendable {
        /// Details for debugging.
        case debug
        /// Normal progress (the default level).
        case info
        /// Worth noticing: a restart, a gap.
        case notice
        /// Something went wrong, work goes on.
        case warning
        /// Something failed.
        case error

        private var rank: Int { Self.allCases.firstIndex(of: self)! }

        /// Whether `lhs` is less important than `rhs`.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    /// The name that starts each line (e.g. the subcommand).
    public var label: String
    /// The least important level that is written.
    public var level: Level
    private let sink: any TextSink

    /// Creates a logger.
    /// - Parameters:
    ///   - label: Starts each line.
    ///   - level: Messages below it are dropped (`KINESIA_LOG_LEVEL` sets it for the CLI).
    ///   - sink: Where lines go (standard error for the CLI).
    public init(label: String, level: Level = .info, sink: any TextSink) {
        self.label = label
        self.level = level
        self.sink = sink
    }

    /// Writes `message` when `level` is at or above the logger's level.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        sink.write("\(label): \(level.rawValue): \(message().escapingControlCharacters)\n")
        sink.flush()
    }

    /// A debugging detail.
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    /// Normal progress.
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    /// Something worth noticing (a restart, a gap).
    public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    /// Something went wrong but work goes on (a dropped message).
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    /// Something failed.
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
