import Glibc

/// Reads lines from a file descriptor without blocking longer than asked (`poll` then `read`),
/// so a loop reading standard input still sees a stop request.
///
/// ```swift
/// let reader = try LineReader(FileDescriptor.duplicate(0))
/// while case .line(let number, let text) = reader.nextLine(timeout: .seconds(1)) { ... }
/// ```
///
/// A read error ends the input like the end of the file does. Memory is bounded whatever the
/// writer does: the reader keeps at most one line of ``maximumLine`` bytes and one read, and
/// moves the unread part of its buffer to the front before reading more. A line longer than
/// ``maximumLine`` is one ``Result/tooLong(number:limit:)``, reported as soon as it is known;
/// the rest of it, up to its newline, is read and dropped. Every line, kept or too long, counts
/// once in the line numbers.
package final class LineReader {
    /// One step of the reader.
    package enum Result: Hashable, Sendable {
        /// A line (without its `\n`) and its number, counted from 1.
        case line(number: Int, text: String)
        /// The line `number` is longer than `limit` bytes: it is dropped (what is left of it, up
        /// to its newline, is skipped).
        case tooLong(number: Int, limit: Int)
        /// Nothing complete arrived in time: ask again.
        case idle
        /// The input is exhausted.
        case end
    }

    /// The longest line kept, in bytes (its newline not counted).
    package let maximumLine: Int

    private let descriptor: FileDescriptor
    /// Unread bytes are `buffer[start...]`; never more than ``maximumLine`` plus one read.
    private var buffer: [UInt8] = []
    private var start = 0
    /// `buffer[start..<scanned]` holds no newline (so each byte is searched once).
    private var scanned = 0
    /// Inside a line already reported as too long: its bytes are dropped up to its newline.
    private var skippingLine = false
    private var isAtEnd = false
    private var lineNumber = 0
    /// Where each read lands before it is appended (allocated once).
    private var chunk = [UInt8](repeating: 0, count: 65_536)

    /// Reads from `descriptor`, which it closes when it goes away.
    /// - Parameters:
    ///   - descriptor: The input.
    ///   - maximumLine: The longest line kept, in bytes (1 MiB by default; at least 1).
    package init(_ descriptor: consuming FileDescriptor, maximumLine: Int = 1 << 20) {
        self.descriptor = descriptor
        self.maximumLine = max(1, maximumLine)
    }

    /// Reads the process's standard input (through a duplicate of descriptor 0, so closing the
    /// reader leaves descriptor 0 alone). A closed standard input reads as an empty one.
    package static func standardInput() -> LineReader {
        if let input = try? FileDescriptor.duplicate(0) { return LineReader(input) }
        // swift-format-ignore: NeverForceUnwrap
        return LineReader(try! FileDescriptor.open("/dev/null", .read))
    }

    /// The bytes the reader holds now (its buffer's capacity): at most about ``maximumLine``
    /// plus one read of 64 KiB, whatever the input.
    package var bufferCapacity: Int { buffer.capacity }

    /// The descriptor it reads, to wait for with others (`poll(2)`: readable when a line may
    /// come; ``nextLine(timeout:)`` with a zero timeout then reads it). Valid while it lives.
    package var waitableDescriptor: Int32 { descriptor.rawValue }

    /// The next line, waiting at most `timeout` for more input.
    package func nextLine(timeout: Duration) -> Result {
        while true {
            if let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                if skippingLine {
                    // The end of a line already reported.
                    skippingLine = false
                    consume(through: newline)
                    continue
                }
                if newline - start > maximumLine {
                    lineNumber += 1
                    consume(through: newline)
                    return .tooLong(number: lineNumber, limit: maximumLine)
                }
                return take(upTo: newline, skipping: 1)
            }
            scanned = buffer.count
            if skippingLine {
                consume(through: buffer.count - 1)
            } else if buffer.count - start > maximumLine {
                // Too long already: said now, the rest dropped as it comes.
                lineNumber += 1
                skippingLine = true
                consume(through: buffer.count - 1)
                return .tooLong(number: lineNumber, limit: maximumLine)
            }
            if isAtEnd {
                skippingLine = false
                if start < buffer.count { return take(upTo: buffer.count, skipping: 0) }
                return .end
            }
            do {
                guard try descriptor.waitUntilReadable(timeout: timeout) else { return .idle }
            } catch {
                isAtEnd = true
                continue
            }
            compact()
            do {
                switch try descriptor.read(into: &chunk) {
                case .bytes(let count): buffer.append(contentsOf: chunk[..<count])
                case .end: isAtEnd = true
                case .wouldBlock: continue
                }
            } catch {
                isAtEnd = true
            }
        }
    }

    private func take(upTo end: Int, skipping: Int) -> Result {
        lineNumber += 1
        let text = String(decoding: buffer[start..<end], as: UTF8.self)
        consume(through: end + skipping - 1)
        return .line(number: lineNumber, text: text)
    }

    /// Drops the bytes up to and including `last`.
    private func consume(through last: Int) {
        start = last + 1
        scanned = max(scanned, start)
        if start >= buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
            scanned = 0
        }
    }

    /// Moves the unread bytes to the front of the buffer, so that it never grows past one line
    /// and one read.
    private func compact() {
        guard start > 0 else { return }
        buffer.removeSubrange(0..<start)
        scanned -= start
        start = 0
    }
}

extension LineReader {
    /// Why a ``Result/tooLong(number:limit:)`` line was dropped, for a person to read.
    package static func tooLongReason(limit: Int) -> String {
        let size = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
        return "the line is longer than \(size): skipped up to its end"
    }
}
