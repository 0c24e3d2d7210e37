import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Synchronization
import Testing

/// Key paths that are not regular files: a FIFO, a device, a directory (issue 19, item 9).
struct KeyFileKindTests {
    /// A FIFO named `name` in a new directory, with no writer, given to `load`: whether `load`
    /// returned promptly, and the error it threw.
    static func loadingAFIFO(
        named name: String, _ load: @escaping @Sendable (String) throws(BusKeyError) -> Void
    ) throws -> (prompt: Bool, error: BusKeyError?, path: String) {
        let directory = try BusKeyFileTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/" + name
        #expect(mkfifo(fifo, 0o600) == 0)
        let thrown = Mutex<BusKeyError?>(nil)
        let prompt = FIFOProbe.returnsPromptly(unblocking: fifo) {
            do throws(BusKeyError) {
                try load(fifo)
            } catch {
                thrown.withLock { $0 = error }
            }
        }
        return (prompt, thrown.withLock { $0 }, fifo)
    }

    /// `--key cam0.key` (a secret key) and `--server-key broker.pub` (a public one) on a FIFO.
    @Test(arguments: ["cam0.key", "broker.pub"])
    func aKeyPathThatIsAFIFOIsRefusedAtOnceNamingWhatItIs(_ name: String) throws {
        let (prompt, error, fifo) = try Self.loadingAFIFO(named: name) { (path) throws(BusKeyError) in
            if name.hasSuffix(".key") {
                _ = try BusKey.load(path, role: .ingest)
            } else {
                _ = try BusPublicKey.load(path, role: .broker)
            }
        }
        #expect(prompt, "loading \(name) waited on a FIFO with no writer")
        #expect(error == .unreadable(fifo, reason: "it is a FIFO, not a regular file"))
    }

    @Test func aDeviceOrADirectoryAsAKeyIsRefusedNamingWhatItIs() throws {
        let directory = try BusKeyFileTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: BusKeyError.unreadable("/dev/null", reason: "it is a device, not a regular file")) {
            try BusPublicKey.load("/dev/null")
        }
        #expect(throws: BusKeyError.unreadable(directory, reason: "it is a directory, not a regular file")) {
            try BusKey.load(directory)
        }
    }

    @Test func aFIFOInTheAllowedDirectoryIsSkippedAtOnceAndTheOtherKeysStillAdmitted() throws {
        let directory = try BusKeyFileTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = BusPublicKey(name: "w1", role: .worker, key: try CurveKeyPair.generate().publicKey)
        try AllowedKeys.allow(good, in: directory)
        let fifo = directory + "/worker/a-fifo.pub"
        #expect(mkfifo(fifo, 0o644) == 0)
        let loaded = Mutex<AllowedKeys?>(nil)
        // The broker's ZAP handler reads the directory at every connection: a read that waits
        // refuses every connection after it.
        let prompt = FIFOProbe.returnsPromptly(unblocking: fifo) {
            let keys = AllowedKeys.load(directory: directory)
            loaded.withLock { $0 = keys }
        }
        #expect(prompt, "AllowedKeys.load waited on a FIFO in the allowed directory")
        let keys = try #require(loaded.withLock { $0 })
        #expect(keys.entry(for: good.key)?.name == "w1")
        #expect(keys.problems == ["skipped: cannot read key file \(fifo): it is a FIFO, not a regular file"])
    }
}
