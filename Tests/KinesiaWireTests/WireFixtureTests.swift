import Foundation
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// The committed test vectors: the Swift encoder still writes them byte for byte, and the
/// Python client (`python -m kinesia.fixtures`, clients/python) reads and writes the same bytes.
///
/// After a deliberate format change, regenerate with
/// `KINESIA_UPDATE_FIXTURES=1 swift test --filter WireFixtureTests` and review the diff.
@Suite(.serialized)
struct WireFixtureTests {
    static let updating = ProcessInfo.processInfo.environment["KINESIA_UPDATE_FIXTURES"] == "1"

    func committed(_ file: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixturesDirectory.appendingPathComponent(file)))
    }

    func compareOrUpdate(_ file: String, _ bytes: [UInt8]) throws {
        let url = fixturesDirectory.appendingPathComponent(file)
        if Self.updating {
            try FileManager.default.createDirectory(at: fixturesDirectory, withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        } else {
            let stored = try committed(file)
            #expect(
                stored == bytes,
                "\(file) differs from what the encoder writes now:\n\(stored.hex)\n\(bytes.hex)")
        }
    }

    @Test func committedFixturesEqualWhatTheEncoderWritesNow() throws {
        for vector in try WireFixtures.valid() {
            try compareOrUpdate(vector.file, try vector.message.encode().payload)
        }
        for vector in try WireFixtures.invalid() {
            try compareOrUpdate(vector.file, vector.payload)
        }
    }

    @Test func validFixturesDecodeToTheirMessages() throws {
        for vector in try WireFixtures.valid() {
            let decoded = try WireMessage.decode(
                topic: vector.message.topic.bytes, payload: try committed(vector.file))
            #expect(decoded == vector.message, "\(vector.file)")
        }
    }

    @Test func invalidFixturesAreRefusedWithTheirError() throws {
        for vector in try WireFixtures.invalid() {
            let payload = try committed(vector.file)
            do {
                _ = try WireMessage.decode(topic: Array(vector.topic.utf8), payload: payload)
                Issue.record("\(vector.file) decoded")
            } catch {
                #expect(error.code == vector.code, "\(vector.file): \(error)")
            }
        }
    }

    @Test func expectedJSONDescribesEveryFixture() throws {
        let url = fixturesDirectory.appendingPathComponent("expected.json")
        let document = try WireFixtures.expectedDocument()
        if Self.updating {
            var data = try JSONSerialization.data(
                withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            data.append(0x0A)
            try data.write(to: url)
        }
        let stored = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! NSDictionary
        let fresh =
            try JSONSerialization.jsonObject(with: JSONSerialization.data(withJSONObject: document))
            as! NSDictionary
        #expect(stored.isEqual(fresh))
    }

    @Test(.tags(.process)) func pythonDecoderReadsEveryFixtureAndEncodesTheSameBytes() throws {
        let (status, output) = try runPython(["check", fixturesDirectory.path])
        #expect(status == 0, "python -m kinesia.fixtures check failed:\n\(output)")
        let checked = try WireFixtures.valid().count + WireFixtures.invalid().count
        #expect(output.contains("\(checked) fixtures ok"), "\(output)")
    }

    @Test(.tags(.process)) func pythonEncodedMessagesDecodeInSwift() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kinesia-wire-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let expected = fixturesDirectory.appendingPathComponent("expected.json").path
        let (status, output) = try runPython(["encode-fixtures", expected, directory.path])
        #expect(status == 0, "python -m kinesia.fixtures encode-fixtures failed:\n\(output)")
        for vector in try WireFixtures.valid() {
            let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(vector.file)))
            let decoded = try WireMessage.decode(topic: vector.message.topic.bytes, payload: bytes)
            #expect(decoded == vector.message, "\(vector.file)")
            #expect(
                bytes == (try vector.message.encode().payload), "\(vector.file): Python wrote other bytes")
        }
    }

    /// Runs `python -m kinesia.fixtures ARGUMENTS` with the clone's Python, returning its status
    /// and its output.
    func runPython(_ arguments: [String]) throws -> (Int32, String) {
        try TestProcess.run(
            try PackagePaths.python(), ["-m", "kinesia.fixtures"] + arguments,
            environment: ProcessInfo.processInfo.environment)
    }
}
