public import Foundation
import KinesiaSystem
import Synchronization

/// Where a command writes text: standard output or error, or a buffer in tests.
public protocol TextSink: Sendable {
    /// Writes `text` as is (add the newline yourself).
    func write(_ text: String)
    /// Pushes out anything buffered.
    func flush()
}

/// A file descriptor, buffered: writes reach the descriptor when 64 KiB accumulate, at the end
/// of each line when the sink is line-buffered (by default, when the descriptor is a terminal),
/// on ``flush()``, and when the sink is released.
///
/// Long-running commands that stream to a pipe (`listen`, `watch`) call ``flush()`` after each
/// message so that the reader sees it at once.
public final class FileDescriptorSink: TextSink {
    private let handle: FileHandle
    private let buffer = Mutex([UInt8]())
    private let capacity = 1 << 16
    private let lineBuffered: Bool

    /// Standard output.
    public static let standardOutput = FileDescriptorSink(handle: .standardOutput)
    /// Standard error.
    public static let standardError = FileDescriptorSink(handle: .standardError)

    /// Wraps an open file handle (not closed by the sink).
    /// - Parameters:
    ///   - handle: The file handle.
    ///   - lineBuffered: Write out at the end of each line; `nil` for "when it is a terminal".
    public init(handle: FileHandle, lineBuffered: Bool? = nil) {
        self.handle = handle
        self.lineBuffered = lineBuffered ?? TerminalWindow.isTerminal(handle.fileDescriptor)
    }

    deinit { flush() }

    /// Buffers `text`, writing out when the buffer is full (or at a line end when line-buffered).
    public func write(_ text: String) {
        let full = buffer.withLock { buffer -> [UInt8]? in
            buffer.append(contentsOf: text.utf8)
            guard buffer.count >= capacity || (lineBuffered && buffer.last == UInt8(ascii: "\n")) else {
                return nil
            }
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        if let full { try? handle.write(contentsOf: full) }
    }

    /// Writes out everything buffered.
    public func flush() {
        let pending = buffer.withLock { buffer -> [UInt8] in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        if !pending.isEmpty { try? handle.write(contentsOf: pending) }
    }
}

/// Keeps everything written, for tests.
public final class CapturedText: TextSink {
    private let storage = Mutex("")

    /// Creates an empty buffer.
    public init() {}

    /// Everything written so far.
    public var text: String { storage.withLock { $0 } }

    /// The text split into lines (without the final empty one).
    public var lines: [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    /// Appends `text`.
    public func write(_ text: String) { storage.withLock { $0 += text } }

    /// Nothing to do: the text is kept in memory.
    public func flush() {}
}
