import Foundation
import Glibc
import KinesiaSystem
import Testing

/// The descriptor owner and the errno funnel: would-block is a value, failures carry the C
/// library's words, a lock taken through one descriptor is refused through another.
struct FileDescriptorTests {
    /// A new empty file in a private directory.
    static func temporaryFile() -> String {
        var template = Array("/tmp/kinesia-fd.XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        #expect(fd >= 0)
        close(fd)
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func aMissingFileFailsWithTheCLibrarysWords() {
        let error = #expect(throws: Errno.self) {
            _ = try FileDescriptor.open("/nonexistent/kinesia/file", .read)
        }
        #expect(error == .noSuchFile)
        #expect(error?.description == "No such file or directory")
    }

    @Test func anEmptyNonBlockingPipeWouldBlockThenReadsThenEnds() throws {
        let pipe = try FileDescriptor.pipe()
        let readEnd = pipe.readEnd
        let writeEnd = pipe.writeEnd
        try readEnd.setNonBlocking()
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(try readEnd.read(into: &buffer) == .wouldBlock)
        #expect(try !readEnd.waitUntilReadable(timeout: .milliseconds(1)))
        #expect(write(writeEnd.rawValue, "hi", 2) == 2)
        #expect(try readEnd.waitUntilReadable(timeout: .seconds(5)))
        #expect(try readEnd.read(into: &buffer) == .bytes(2))
        #expect(Array(buffer.prefix(2)) == Array("hi".utf8))
        try writeEnd.close()
        // The end comes once every copy of the write end is closed: a process another test forks
        // meanwhile holds one until its exec (close-on-exec), long on a loaded machine.
        #expect(try readEnd.waitUntilReadable(timeout: .seconds(30)))
        #expect(try readEnd.read(into: &buffer) == .end)
    }

    @Test func aPipeIsClosedOnExec() throws {
        let pipe = try FileDescriptor.pipe()
        #expect(fcntl(pipe.readEnd.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(pipe.writeEnd.rawValue, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func aLockIsRefusedThroughASecondDescriptorUntilTheFirstIsClosed() throws {
        let path = Self.temporaryFile()
        defer { unlink(path) }
        let first = try FileDescriptor.open(path, .readWrite)
        let second = try FileDescriptor.open(path, .readWrite)
        #expect(try first.tryLock())
        #expect(try !second.tryLock())
        try first.close()
        #expect(try second.tryLock())
    }

    @Test func writesAndReadsBackAtAnOffset() throws {
        let path = Self.temporaryFile()
        defer { unlink(path) }
        let file = try FileDescriptor.open(path, .readWrite)
        try file.write(Array("hello world".utf8), at: 0)
        try file.truncate(to: 5)
        #expect(try file.read(upTo: 32) == Array("hello".utf8))
        #expect(try file.read(upTo: 32, at: 3) == Array("lo".utf8))
    }
}
