import Foundation
import KinesiaTestSupport
import KinesiaWeb
import Testing

struct WebTokensTests {
    @Test func aNewTokenIsGrantedItsRoleAndKeptOnlyAsItsHash() throws {
        let scratch = try ScratchDirectory("web-tokens")
        let tokens = try WebTokens(directory: scratch.path("tokens"))
        var generator = SplitMix64(seed: 7)
        let token = try tokens.issue(name: "tablet-1", role: .viewer, using: &generator)
        #expect(token.hasPrefix("kw1_") && token.utf8.count == 68)

        let snapshot = tokens.load()
        #expect(snapshot.grant(for: token) == WebTokens.Grant(name: "tablet-1", role: .viewer))
        #expect(snapshot.grant(for: token + "x") == nil)
        #expect(snapshot.grant(for: "") == nil)
        #expect(snapshot.problems.isEmpty)

        // The file holds the role and the hash, never the token; only its owner reads it.
        let file = scratch.path("tokens/tablet-1.token")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text == "role viewer\nsha256 \(SHA256.hex(Array(token.utf8)))\n")
        #expect(!text.contains(token))
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let directoryMode =
            try FileManager.default.attributesOfItem(atPath: scratch.path("tokens"))[.posixPermissions]
            as? Int
        #expect(directoryMode == 0o700)
    }

    @Test func aTokenMadeAgainUnderTheSameNameReplacesTheOldOne() throws {
        let scratch = try ScratchDirectory("web-tokens")
        let tokens = try WebTokens(directory: scratch.path("tokens"))
        let first = try tokens.issue(name: "desk", role: .viewer)
        let second = try tokens.issue(name: "desk", role: .therapist)
        #expect(first != second)
        let snapshot = tokens.load()
        #expect(snapshot.grant(for: first) == nil)
        #expect(snapshot.grant(for: second)?.role == .therapist)
    }

    @Test func aRevokedTokenIsRefusedAndRevokingAnUnknownOneSaysSo() throws {
        let scratch = try ScratchDirectory("web-tokens")
        let tokens = try WebTokens(directory: scratch.path("tokens"))
        let token = try tokens.issue(name: "desk", role: .viewer)
        try tokens.revoke(name: "desk")
        #expect(tokens.load().grant(for: token) == nil)
        #expect(throws: WebTokenError.unknown("desk")) { try tokens.revoke(name: "desk") }
    }

    @Test(arguments: ["", ".hidden", "a/b", "with space", String(repeating: "x", count: 65)])
    func namesThatCannotNameAFileAreRefused(name: String) throws {
        let scratch = try ScratchDirectory("web-tokens")
        let tokens = try WebTokens(directory: scratch.path("tokens"))
        #expect(throws: WebTokenError.invalidName(name)) { try tokens.issue(name: name, role: .viewer) }
    }

    @Test func aDamagedFileIsNamedAndGrantsNothing() throws {
        let scratch = try ScratchDirectory("web-tokens")
        let tokens = try WebTokens(directory: scratch.path("tokens"))
        let token = try tokens.issue(name: "good", role: .viewer)
        try Data("role admin\nsha256 \(String(repeating: "0", count: 64))\n".utf8).write(
            to: URL(fileURLWithPath: scratch.path("tokens/bad.token")))
        try Data("role viewer\nsha256 short\n".utf8).write(
            to: URL(fileURLWithPath: scratch.path("tokens/short.token")))
        let snapshot = tokens.load()
        #expect(snapshot.grants.count == 1)
        #expect(snapshot.grant(for: token)?.name == "good")
        #expect(snapshot.problems.count == 2)
        #expect(snapshot.problems.allSatisfy { $0.hasSuffix("not a token file") })
    }

    @Test func aDirectoryOthersCanReadIsRefused() throws {
        let scratch = try ScratchDirectory("web-tokens")
        try FileManager.default.createDirectory(
            atPath: scratch.path("open"), withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o755])
        #expect(throws: WebTokenError.self) { try WebTokens(directory: scratch.path("open")) }
    }
}
