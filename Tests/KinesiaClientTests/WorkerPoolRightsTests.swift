import Foundation
import KinesiaClient
import Testing

/// A worker key's pools: the names of its `.pools` file beside its `.pub`, comments and blank
/// lines skipped; no file, any pool.
struct WorkerPoolRightsTests {
    @Test func aPoolsFileNamesThePoolsItsKeyMayJoin() throws {
        #expect(AllowedKeys.pools(parsing: "# ward A\nclinic\n\n  gym  # evenings\n") == ["clinic", "gym"])
        #expect(AllowedKeys.pools(parsing: "# nothing\n").isEmpty)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pools-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(
            atPath: directory + "/worker", withIntermediateDirectories: true)
        #expect(AllowedKeys.pools(ofWorker: "ward", in: directory) == nil)
        try "clinic\n".write(toFile: directory + "/worker/ward.pools", atomically: true, encoding: .utf8)
        #expect(AllowedKeys.pools(ofWorker: "ward", in: directory) == ["clinic"])
        // A file that is there but cannot be read (a directory by that name here) admits no pool.
        try FileManager.default.createDirectory(
            atPath: directory + "/worker/locked.pools", withIntermediateDirectories: true)
        #expect(AllowedKeys.pools(ofWorker: "locked", in: directory) == [])
    }
}
