import Foundation
import Glibc
import KinesiaSystem
import Synchronization
import Testing

/// The trust rule of a directory that holds sockets and a lock: a real directory of the running
/// user without group or other permissions, its files likewise, no symbolic link followed, and
/// nothing changed that it did not make.
struct PrivateDirectoryTests {
    /// A new private directory (`mkdtemp`, mode 0700), removed by the caller.
    static func temporaryDirectory() -> String {
        var template = Array("/tmp/kinesia-private.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        #expect(made)
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func mode(_ path: String) throws -> mode_t {
        try FileStatus(path: path).permissions
    }

    @Test func aMissingDirectoryIsMadeWith0700AndItsParents() throws {
        let root = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/a/b/bus"
        let directory = try PrivateDirectory.open(path)
        let created = directory.wasCreated
        #expect(created)
        #expect(try Self.mode(path) == 0o700)
        #expect(try FileStatus(path: path).kind == .directory)
        let again = try PrivateDirectory.open(path)
        let createdAgain = again.wasCreated
        #expect(!createdAgain)
    }

    @Test func anExistingLooseDirectoryIsRefusedAndLeftAsItIs() throws {
        let root = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        for mode: mode_t in [0o1777, 0o777, 0o755, 0o750, 0o701] {
            let path = root + "/loose-\(String(mode, radix: 8))"
            #expect(mkdir(path, 0o700) == 0)
            #expect(chmod(path, mode) == 0)
            let error = #expect(throws: PrivateDirectoryError.self) { _ = try PrivateDirectory.open(path) }
            #expect(error?.reason == .loosePermissions(mode))
            #expect(error?.description.contains("mode 0\(String(mode, radix: 8))") == true)
            #expect(try Self.mode(path) == mode, "the directory's mode was changed")
        }
    }

    @Test func aSymbolicLinkToADirectoryIsRefused() throws {
        let root = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(mkdir(root + "/real", 0o700) == 0)
        #expect(symlink(root + "/real", root + "/link") == 0)
        let error = #expect(throws: PrivateDirectoryError.self) {
            _ = try PrivateDirectory.open(root + "/link")
        }
        #expect(error?.reason == .symbolicLink)
        #expect(FileManager.default.createFile(atPath: root + "/file", contents: nil))
        let notDirectory = #expect(throws: PrivateDirectoryError.self) {
            _ = try PrivateDirectory.open(root + "/file")
        }
        #expect(notDirectory?.reason == .notADirectory)
    }

    @Test func aPlantedLinkInsideIsNeverFollowedAndItsTargetStaysUntouched() throws {
        let root = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let victim = root + "/victim"
        #expect(FileManager.default.createFile(atPath: victim, contents: Data("precious\n".utf8)))
        let directory = try PrivateDirectory.open(root + "/bus")
        #expect(symlink(victim, root + "/bus/broker.lock") == 0)
        let error = #expect(throws: PrivateDirectoryError.self) {
            _ = try directory.openFile("broker.lock", .readWrite.creating)
        }
        #expect(error?.reason == .symbolicLink)
        #expect(error?.path == root + "/bus/broker.lock")
        #expect(throws: PrivateDirectoryError.self) { try directory.checkEntry("broker.lock") }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
    }

    @Test func aLooseFileInsideIsRefused() throws {
        let root = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = try PrivateDirectory.open(root + "/bus")
        #expect(try directory.checkEntry("pid") == nil)
        _ = try directory.openFile("pid", .readWrite.creating)
        #expect(try Self.mode(root + "/bus/pid") == 0o600)
        #expect(chmod(root + "/bus/pid", 0o644) == 0)
        let error = #expect(throws: PrivateDirectoryError.self) { try directory.checkEntry("pid") }
        #expect(error?.reason == .loosePermissions(0o644))
    }

    /// Processes sharing a directory (the workers of one state directory) change its entries
    /// while others open it: that is not a replacement. Before, the change time was compared,
    /// and an open raced by another process's rename failed with "was replaced".
    @Test func anotherProcessChangingEntriesIsNotAReplacement() throws {
        let root = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let stop = Atomic<Bool>(false)
        let writer = Thread {
            var turn = 0
            while !stop.load(ordering: .relaxed) {
                let name = root + "/entry-\(turn % 2)"
                _ = FileManager.default.createFile(atPath: name, contents: nil)
                _ = rename(name, root + "/renamed")
                turn += 1
            }
        }
        writer.start()
        defer { stop.store(true, ordering: .relaxed) }
        var failures: [String] = []
        for _ in 0..<5000 {
            do {
                try PrivateDirectory.open(root, creating: false).close()
            } catch {
                failures.append("\(error)")
            }
        }
        let failed = failures.count
        #expect(failed == 0, "opens that failed, the first: \(failures.first ?? "")")
    }

    @Test func anEntryIsRemovedOnlyIfItIsStillTheSameFile() throws {
        let root = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = try PrivateDirectory.open(root + "/bus")
        _ = try directory.openFile("mine", .readWrite.creating)
        let mine = try #require(try directory.checkEntry("mine"))
        #expect(unlink(root + "/bus/mine") == 0)
        _ = try directory.openFile("mine", .readWrite.creating)  // another file, same name
        let removedTheirs = directory.removeEntry("mine", ifStill: mine)
        #expect(!removedTheirs)
        #expect(FileManager.default.fileExists(atPath: root + "/bus/mine"))
        let theirs = try #require(try directory.checkEntry("mine"))
        let removedSame = directory.removeEntry("mine", ifStill: theirs)
        #expect(removedSame)
        #expect(!FileManager.default.fileExists(atPath: root + "/bus/mine"))
    }

    /// Needs root: only root can give a directory to another user (uid 65534, `nobody`).
    @Test(.enabled(if: geteuid() == 0, "needs root to chown a directory to another user"))
    func aDirectoryOfAnotherUserIsRefusedEvenWith0700() throws {
        let root = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/theirs"
        #expect(mkdir(path, 0o700) == 0)
        #expect(chown(path, 65534, 65534) == 0)
        let error = #expect(throws: PrivateDirectoryError.self) { _ = try PrivateDirectory.open(path) }
        #expect(error?.reason == .owner(65534, user: 0))
        #expect(try FileStatus(path: path).owner == 65534)
        #expect(try Self.mode(path) == 0o700)
    }
}
