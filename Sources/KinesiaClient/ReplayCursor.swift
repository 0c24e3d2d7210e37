import KinesiaWire

/// The durable position of an exactly-once consumer: per stream, the last sequence number
/// delivered to the application. Store ``description`` (one line per stream) and give it back
/// with ``init(parsing:)`` to resume where the application stopped, with nothing twice.
///
/// ```swift
/// try cursor.description.write(toFile: path, atomically: true, encoding: .utf8)
/// let resumed = try ReplayCursor(parsing: String(contentsOfFile: path, encoding: .utf8))
/// ```
public struct ReplayCursor: Hashable, Sendable, CustomStringConvertible {
    /// The last sequence number delivered, per stream.
    public var delivered: [ReplayStreamKey: UInt64]

    /// A cursor with the given positions (empty: nothing delivered yet).
    public init(delivered: [ReplayStreamKey: UInt64] = [:]) {
        self.delivered = delivered
    }

    /// Lines `TOPIC STREAM SEQUENCE` (stream in 16 hex digits), sorted.
    public var description: String {
        delivered.keys.sorted().map { "\($0.topic) \($0.stream) \(delivered[$0]!)\n" }.joined()
    }

    /// Reads the lines ``description`` writes (blank lines are ignored).
    /// - Throws: ``ReplayCursorError`` naming the line that does not read.
    public init(parsing text: String) throws(ReplayCursorError) {
        var delivered: [ReplayStreamKey: UInt64] = [:]
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fields = line.split(separator: " ")
            if fields.isEmpty { continue }
            guard fields.count == 3, let topic = try? Topic(parsing: String(fields[0])),
                fields[1].utf8.count == 16, let stream = UInt64(fields[1], radix: 16), stream != 0,
                let sequence = UInt64(fields[2])
            else { throw ReplayCursorError(line: index + 1) }
            delivered[ReplayStreamKey(topic: topic, stream: StreamID(stream))] = sequence
        }
        self.init(delivered: delivered)
    }
}

/// A cursor line that does not read as `TOPIC STREAM SEQUENCE`.
public struct ReplayCursorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The line (from 1).
    public var line: Int

    /// The error of line `line`.
    public init(line: Int) {
        self.line = line
    }

    /// A sentence.
    public var description: String {
        "cursor line \(line) is not 'TOPIC STREAM SEQUENCE' (a topic, 16 hex digits, a number)"
    }
}
