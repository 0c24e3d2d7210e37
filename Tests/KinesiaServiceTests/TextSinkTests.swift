import Foundation
import KinesiaService
import Testing

struct TextSinkTests {
    @Test func aLineBufferedSinkWritesOutEachCompleteLine() {
        let pipe = Pipe()
        let sink = FileDescriptorSink(handle: pipe.fileHandleForWriting, lineBuffered: true)
        sink.write("partial")
        sink.write(" line\n")
        let data = pipe.fileHandleForReading.availableData
        #expect(String(decoding: data, as: UTF8.self) == "partial line\n")
    }

    @Test func aBufferedSinkWritesEverythingOnFlush() throws {
        let pipe = Pipe()
        let sink = FileDescriptorSink(handle: pipe.fileHandleForWriting, lineBuffered: false)
        for index in 0..<3 { sink.write("line \(index)\n") }
        sink.flush()
        try pipe.fileHandleForWriting.close()
        let data = try pipe.fileHandleForReading.readToEnd() ?? Data()
        #expect(String(decoding: data, as: UTF8.self) == "line 0\nline 1\nline 2\n")
    }

    @Test func capturedTextKeepsEverythingInOrder() {
        let sink = CapturedText()
        sink.write("a\nb")
        sink.write("\n")
        #expect(sink.text == "a\nb\n")
        #expect(sink.lines == ["a", "b"])
    }
}
