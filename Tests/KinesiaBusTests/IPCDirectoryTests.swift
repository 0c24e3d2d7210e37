import Foundation
import KinesiaBus
import Testing

struct IPCDirectoryTests {
    @Test func temporaryDirectoriesArePrivateAndUnique() throws {
        let first = try IPCDirectory.makeTemporary(in: NSTemporaryDirectory())
        defer { first.remove() }
        let second = try IPCDirectory.makeTemporary(in: NSTemporaryDirectory())
        defer { second.remove() }
        #expect(first.path != second.path)
        let mode = try FileManager.default.attributesOfItem(atPath: first.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        first.remove()
        #expect(!FileManager.default.fileExists(atPath: first.path))
    }

    @Test func endpointsRejectBadNamesAndPathsOverTheIPCLimit() throws {
        let directory = try IPCDirectory.makeTemporary()
        defer { directory.remove() }
        #expect(try directory.endpoint("broker") == "ipc://\(directory.path)/broker")
        #expect(throws: ZMQError.invalidArgument) { try directory.endpoint("") }
        #expect(throws: ZMQError.invalidArgument) { try directory.endpoint("../escape") }
        let room = IPCDirectory.maximumPathLength - directory.path.utf8.count - 1
        #expect(try directory.endpoint(String(repeating: "a", count: room)).utf8.count == 6 + 107)
        #expect(throws: ZMQError.nameTooLong) {
            try directory.endpoint(String(repeating: "a", count: room + 1))
        }
    }
}
