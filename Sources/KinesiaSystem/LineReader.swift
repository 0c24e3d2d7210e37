import Glibc

/// Reads lines from a file descriptor without blocking longer than asked (`poll` then `read`),
/// so a loop reading standard input still sees a stop request.
///
/// ```swift
/// let reader = try LineReader(FileDescriptor.duplicate(0))
/// while case .line(let number, let text) = reader.nextLine(timeout: .seconds(1)) { ... }
/// ```
///
/// A read error ends the input like the end of the file does. Lines longer than 1 MiB are cut
/// into pieces of 1 MiB.
package final class LineReader {
    /// One step of the reader.
    package enum Result: Hashable, Sendable {
        /// A line (without its `\n`) and its number, counted from 1.
        case line(number: Int, text: String)
        /// Nothing complete arrived in time: ask again.
        case idle
        /// The input is exhausted.
        case end
    }

    private let descriptor: FileDescriptor
    private var buffer: [UInt8] = []
    private var start = 0
    private var isAtEnd = false
    private var lineNumber = 0
    /// The longest line kept (longer ones are cut and then fail to decode).
    private let maximumLine = 1 << 20

    /// Reads from `descriptor`, which it closes when it goes away.
    package init(_ descriptor: consuming FileDescriptor) {
        self.descriptor = descriptor
    }

    /// Reads the process's standard input (through a duplicate of descriptor 0, so closing the
    /// reader leaves descriptor 0 alone). A closed standard input reads as an empty one.
    package static func standardInput() -> LineReader {
        if let input = try? FileDescriptor.duplicate(0) { return LineReader(input) }
        // swift-format-ignore: NeverForceUnwrap
        return LineReader(try! FileDescriptor.open("/dev/null", O_RDONLY))
    }

    /// The next line, waiting at most `timeout` for more input.
    package func nextLine(timeout: Duration) -> Result {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                return take(upTo: newline, skipping: 1)
            }
            if isAtEnd {
                if start < buffer.count { return take(upTo: buffer.count, skipping: 0) }
                return .end
            }
            if buffer.count - start > maximumLine { return take(upTo: start + maximumLine, skipping: 0) }
            do {
                guard try descriptor.waitUntilReadable(timeout: timeout) else { return .idle }
            } catch {
                isAtEnd = true
                continue
            }
            if start > 0, start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
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
        start = end + skipping
        if start >= buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        return .line(number: lineNumber, text: text)
    }
}
