import Foundation
import Glibc
import KinesiaSystem
import Testing

/// Lines from a descriptor, with a time limit per wait, over a real pipe (issue 9, item 9: an
/// over-long line is one error and the lines after it keep their numbers; memory stays bounded
/// when the writer's writes never end on a newline).
struct LineReaderTests {
    @Test func numbersLinesKeepsALastLineWithoutNewlineThenEnds() throws {
        let pipe = try FileDescriptor.pipe()
        let readEnd = pipe.readEnd
        let writeEnd = pipe.writeEnd
        #expect(write(writeEnd.rawValue, "a\n\nb", 4) == 4)
        try writeEnd.close()
        let reader = LineReader(readEnd)
        #expect(reader.nextLine(timeout: .seconds(5)) == .line(number: 1, text: "a"))
        #expect(reader.nextLine(timeout: .seconds(5)) == .line(number: 2, text: ""))
        #expect(reader.nextLine(timeout: .seconds(5)) == .line(number: 3, text: "b"))
        #expect(reader.nextLine(timeout: .seconds(5)) == .end)
    }

    @Test func isIdleWhenNothingCompleteArrivesInTime() throws {
        let pipe = try FileDescriptor.pipe()
        let readEnd = pipe.readEnd
        let writeEnd = pipe.writeEnd
        #expect(write(writeEnd.rawValue, "part", 4) == 4)
        let reader = LineReader(readEnd)
        #expect(reader.nextLine(timeout: .milliseconds(20)) == .idle)
        #expect(write(writeEnd.rawValue, "ial\n", 4) == 4)
        #expect(reader.nextLine(timeout: .seconds(5)) == .line(number: 1, text: "partial"))
    }

    /// A reader of a pipe that a thread fills with `bytes`, in writes of `sizes` bytes (cycled),
    /// then closes.
    private static func reader(
        fedWith bytes: [UInt8], writes sizes: [Int] = [65_536], maximumLine: Int = 1 << 20
    ) throws -> LineReader {
        let pipe = try FileDescriptor.pipe()
        let writeEnd = dup(pipe.writeEnd.rawValue)
        #expect(writeEnd >= 0)
        let readEnd = pipe.readEnd  // the pipe's own write end closes here
        let thread = Thread {
            var offset = 0
            var turn = 0
            while offset < bytes.count {
                let size = min(sizes[turn % sizes.count], bytes.count - offset)
                turn += 1
                var written = 0
                while written < size {
                    let count = bytes.withUnsafeBytes {
                        write(writeEnd, $0.baseAddress! + offset + written, size - written)
                    }
                    if count < 0 {
                        if errno == EINTR { continue }
                        close(writeEnd)
                        return
                    }
                    written += count
                }
                offset += size
            }
            close(writeEnd)
        }
        thread.start()
        return LineReader(readEnd, maximumLine: maximumLine)
    }

    /// Every result until the end (idle results skipped).
    private static func readAll(_ reader: LineReader, check: (LineReader) -> Void = { _ in }) -> [LineReader
        .Result]
    {
        var results: [LineReader.Result] = []
        while true {
            let result = reader.nextLine(timeout: .seconds(10))
            check(reader)
            switch result {
            case .idle: continue
            case .end: return results
            default: results.append(result)
            }
        }
    }

    @Test func anOverlongLineIsOneErrorAndTheLinesAfterItKeepTheirNumbers() throws {
        // 5 MiB without a newline between two short lines, then a line exactly at the limit.
        let limit = 1 << 20
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 5 << 20)
        let exact = String(repeating: "y", count: limit)
        let input = Array("first\n".utf8) + long + Array("\nsecond\n\(exact)\nthird".utf8)
        let results = Self.readAll(try Self.reader(fedWith: input, writes: [65_536, 1000, 7]))
        #expect(
            results == [
                .line(number: 1, text: "first"), .tooLong(number: 2, limit: limit),
                .line(number: 3, text: "second"), .line(number: 4, text: exact),
                .line(number: 5, text: "third"),
            ])
    }

    @Test func anOverlongLineIsOneErrorWhateverTheWritesAndWhereverItEnds() throws {
        // A small limit, so that every split of the writes shows: over-long lines that arrive
        // whole, in pieces, or last in the input without a newline.
        let input = Array("ok\n0123456789abcdef\nok2\n0123456789abcdefXYZ\nok3\n0123456789abcdef".utf8)
        for size in [1, 2, 3, 5, 8, 13, 64] {
            let results = Self.readAll(try Self.reader(fedWith: input, writes: [size], maximumLine: 8))
            #expect(
                results == [
                    .line(number: 1, text: "ok"), .tooLong(number: 2, limit: 8),
                    .line(number: 3, text: "ok2"),
                    .tooLong(number: 4, limit: 8), .line(number: 5, text: "ok3"),
                    .tooLong(number: 6, limit: 8),
                ], "writes of \(size) bytes")
        }
    }

    @Test func memoryStaysBoundedWhenNoWriteEndsOnANewline() throws {
        // 40,000 lines of 100 bytes in writes of 1,037 bytes: no read ends on a newline.
        let line = Array(String(repeating: "p", count: 99).utf8) + [UInt8(ascii: "\n")]
        let count = 40_000
        var input: [UInt8] = []
        input.reserveCapacity(line.count * count)
        for _ in 0..<count { input += line }
        var largest = 0
        let reader = try Self.reader(fedWith: input, writes: [1037], maximumLine: 4096)
        let results = Self.readAll(reader) { largest = max(largest, $0.bufferCapacity) }
        #expect(results.count == count)
        #expect(results.last == .line(number: count, text: String(repeating: "p", count: 99)))
        // One line and one read at most (with the array's growth), never the 4 MB written.
        #expect(largest <= 2 * (4096 + 65_536), "buffer grew to \(largest) bytes")
    }

    @Test func aLineCutAcrossManyWritesIsWholeAndAnEmptyInputEnds() throws {
        let text = String(repeating: "abc", count: 30_000)
        let results = Self.readAll(try Self.reader(fedWith: Array((text + "\n\nlast").utf8), writes: [4097]))
        #expect(
            results == [
                .line(number: 1, text: text), .line(number: 2, text: ""), .line(number: 3, text: "last"),
            ])
        #expect(Self.readAll(try Self.reader(fedWith: [])).isEmpty)
    }
}
