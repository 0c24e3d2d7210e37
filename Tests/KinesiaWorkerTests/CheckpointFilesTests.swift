import Foundation
import KinesiaWire
import Testing

@testable import KinesiaWorker

/// A worker's checkpoint files: the newest that reads back wins; a torn, damaged or refused one
/// is passed over for an older one, never trusted.
@Suite struct CheckpointFilesTests {
    private let sessions = [StreamID(0x1111)]

    private func withFiles(_ body: (CheckpointFiles, String) throws -> Void) throws {
        let state = SessionStartsTests.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        try body(
            try CheckpointFiles(state: state),
            state + "/checkpoints/" + CheckpointFiles.folderName(camera: "cam0", sessions: sessions))
    }

    private func files(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".ckpt") }.sorted()
    }

    @Test func theNewestOfTheKeptFilesIsRead() throws {
        try withFiles { files, folder in
            for index in 1...5 {
                try files.save(Array("payload \(index)".utf8), camera: "cam0", sessions: sessions)
            }
            #expect(try self.files(folder).count == CheckpointFiles.kept)
            let found = files.newest(camera: "cam0", sessions: sessions) {
                String(decoding: $0, as: UTF8.self)
            }
            #expect(found.value == "payload 5")
            #expect(found.passedOver == 0)
            #expect(files.newest(camera: "cam1", sessions: sessions) { $0 }.value == nil)
        }
    }

    /// Once the kept files are there, the oldest is written over (no file made, none deleted: a
    /// worker of 64 cameras checkpoints 32 times a second), and a shorter checkpoint written
    /// over a longer one reads back whole.
    @Test func theOldestFileIsWrittenOverAndAShorterCheckpointReadsBackWhole() throws {
        try withFiles { files, folder in
            func inodes() throws -> Set<UInt64> {
                Set(
                    try self.files(folder).map {
                        try #require(
                            (try FileManager.default.attributesOfItem(atPath: folder + "/" + $0))[
                                .systemFileNumber]
                                as? UInt64)
                    })
            }
            for index in 1...CheckpointFiles.kept {
                let long = String(repeating: "x", count: 4000)
                try files.save(Array("payload \(index) \(long)".utf8), camera: "cam0", sessions: sessions)
            }
            let kept = try inodes()
            for index in 4...7 {
                try files.save(Array("payload \(index)".utf8), camera: "cam0", sessions: sessions)
                #expect(try inodes() == kept, "the files written over are the same files")
            }
            #expect(try self.files(folder).count == CheckpointFiles.kept)
            let found = files.newest(camera: "cam0", sessions: sessions) {
                String(decoding: $0, as: UTF8.self)
            }
            #expect(found.value == "payload 7")
            #expect(found.passedOver == 0)
        }
    }

    @Test(arguments: ["torn", "flipped", "foreign", "refused"])
    func aCheckpointThatDoesNotReadBackIsPassedOverForAnOlderOne(damage: String) throws {
        try withFiles { files, folder in
            for index in 1...3 {
                try files.save(Array("payload \(index)".utf8), camera: "cam0", sessions: sessions)
            }
            let newest = folder + "/" + (try self.files(folder).last!)
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: newest)))
            switch damage {
            case "torn": bytes.removeLast(3)
            case "flipped": bytes[bytes.count - 2] ^= 0x10
            case "foreign": bytes = Array("{\"not\":\"a checkpoint\"}".utf8)
            default: break
            }
            try Data(bytes).write(to: URL(fileURLWithPath: newest))
            let found = files.newest(camera: "cam0", sessions: sessions) { payload -> String? in
                let text = String(decoding: payload, as: UTF8.self)
                return damage == "refused" && text == "payload 3" ? nil : text
            }
            #expect(found.value == "payload 2")
            #expect(found.passedOver == 1)
        }
    }
}
