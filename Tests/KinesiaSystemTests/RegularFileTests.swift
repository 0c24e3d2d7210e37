import Foundation
import Glibc
import KinesiaSystem
import KinesiaTestSupport
import Testing

/// Files read by name that must be regular files, never waited on (issue 19, item 9): key
/// files through ``FileDescriptor/openRegularFile(_:_:)``, state files through
/// ``PrivateDirectory/openFile(_:_:)``.
struct RegularFileTests {
    @Test func aFIFOIsRefusedAtOnceWithoutAWriter() throws {
        let root = PrivateDirectoryTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fifo = root + "/key"
        #expect(mkfifo(fifo, 0o600) == 0)
        let prompt = FIFOProbe.returnsPromptly(unblocking: fifo) {
            #expect(throws: RegularFileError.notRegular(.fifo)) {
                _ = try FileDescriptor.openRegularFile(fifo)
            }
        }
        #expect(prompt, "openRegularFile waited on a FIFO with no writer")
    }

    @Test func aDeviceADirectoryAndAMissingFileAreRefusedAndARegularFileReads() throws {
        let root = PrivateDirectoryTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(throws: RegularFileError.notRegular(.device)) {
            _ = try FileDescriptor.openRegularFile("/dev/null")
        }
        #expect(throws: RegularFileError.notRegular(.directory)) {
            _ = try FileDescriptor.openRegularFile(root)
        }
        #expect(throws: RegularFileError.system(.noSuchFile)) {
            _ = try FileDescriptor.openRegularFile(root + "/x")
        }
        #expect(RegularFileError.notRegular(.fifo).description == "it is a FIFO, not a regular file")
        try "abc".write(toFile: root + "/file", atomically: false, encoding: .utf8)
        let file = try FileDescriptor.openRegularFile(root + "/file")
        #expect(try file.read(upTo: 10) == Array("abc".utf8))
    }

    @Test(arguments: [FileAccess.read, FileAccess.write.creating.truncating])
    func aFIFOInAPrivateDirectoryIsRefusedAtOnce(_ flags: FileAccess) throws {
        let root = PrivateDirectoryTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fifo = root + "/state.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let prompt = FIFOProbe.returnsPromptly(unblocking: fifo) {
            guard let directory = try? PrivateDirectory.open(root, creating: false) else {
                Issue.record("the directory does not open")
                return
            }
            #expect(throws: PrivateDirectoryError.self) { _ = try directory.openFile("state.json", flags) }
        }
        #expect(prompt, "PrivateDirectory.openFile waited on a FIFO (flags \(flags))")
    }
}
