import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaWire
import Testing

struct BusKeyFileTests {
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "kinesia-keys-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func permissions(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    @Test func aNewKeyIsAPrivateSecretFileAndAPublicFileThatReadBack() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = BusKey(name: "cam0", role: .ingest, keyPair: try CurveKeyPair.generate())
        let (secret, publicPath) = try key.write(to: directory + "/keys")
        #expect(secret == directory + "/keys/cam0.key" && publicPath == directory + "/keys/cam0.pub")
        #expect(try Self.permissions(secret) == 0o600)
        #expect(try Self.permissions(publicPath) == 0o644)
        #expect(try Self.permissions(directory + "/keys") == 0o700)
        #expect(try BusKey.load(secret, role: .ingest) == key)
        #expect(try BusPublicKey.load(publicPath) == key.publicKey)
        // The public file holds no secret.
        let publicText = try String(contentsOfFile: publicPath, encoding: .utf8)
        #expect(!publicText.contains(key.keyPair.secretKey) && !publicText.contains("secret-key"))
        #expect(!key.description.contains(key.keyPair.secretKey))
        // Never replaced.
        #expect(throws: BusKeyError.exists(secret)) { try key.write(to: directory + "/keys") }
    }

    @Test(arguments: [0o640, 0o604, 0o660, 0o666, 0o620])
    func aSecretKeyThatOthersMayAccessIsRefused(_ mode: Int) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = BusKey(name: "w1", role: .worker, keyPair: try CurveKeyPair.generate())
        let (secret, publicPath) = try key.write(to: directory)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: secret)
        #expect(throws: BusKeyError.notPrivate(secret, permissions: UInt32(mode))) {
            try BusKey.load(secret)
        }
        let message = BusKeyError.notPrivate(secret, permissions: UInt32(mode)).description
        #expect(message.contains("chmod 600 \(secret)"))
        // A public file may be read by anyone.
        #expect(try BusPublicKey.load(publicPath).role == .worker)
    }

    @Test func aKeyOfAnotherRoleIsRefusedWithBothRolesNamed() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (secret, _) = try BusKey(name: "tablet", role: .consumer, keyPair: try CurveKeyPair.generate())
            .write(to: directory)
        let error = BusKeyError.wrongRole(secret, found: .consumer, needed: .worker)
        #expect(throws: error) { try BusKey.load(secret, role: .worker) }
        #expect(error.description.contains("is a consumer key; this process needs a worker key"))
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: BusKeyError.missing("/nonexistent/k.key")) { try BusKey.load("/nonexistent/k.key") }
        #expect(BusKeyError.missing("/x.key").description.contains("kinesia keys new"))
    }

    @Test(arguments: [
        ("role = worker\npublic-key = x\n", "no secret-key line"),
        ("name = a\nrole = worker\nsecret-key = tooshort\n", "secret-key is not 40 Z85 characters"),
        (
            "name = a\nrole = admin\nsecret-key = \(String(repeating: "a", count: 40))\n",
            "unknown role \"admin\""
        ),
        ("name = a\nrole = worker\nrole = worker\n", "role given twice"),
        ("just text\n", "line 1 is not 'field = value'"),
        ("name = a\ncolour = red\n", "unknown field \"colour\""),
    ])
    func badKeyTextIsRefusedWithTheReason(_ text: String, _ reason: String) {
        do {
            _ = try BusKey(parsing: text, source: "k.key")
            Issue.record("accepted \(text.debugDescription)")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
            #expect(error.description.hasPrefix("k.key is not a Kinesia key file"))
        }
    }

    @Test func aPublicFileGivenAsTheSecretKeySaysSo() throws {
        let text = BusPublicKey(name: "a", role: .worker, key: try CurveKeyPair.generate().publicKey).fileText
        #expect(
            throws: BusKeyError.malformed(
                "a.pub", reason: "it is a public key file (no secret-key line); give the .key file")
        ) {
            try BusKey(parsing: text, source: "a.pub")
        }
    }

    @Test func aPublicKeyThatIsNotTheSecretsIsRefused() throws {
        let one = try CurveKeyPair.generate()
        let other = try CurveKeyPair.generate()
        let text = "name = a\nrole = worker\npublic-key = \(other.publicKey)\nsecret-key = \(one.secretKey)\n"
        #expect(throws: BusKeyError.malformed("a.key", reason: "public-key does not belong to secret-key")) {
            try BusKey(parsing: text, source: "a.key")
        }
    }

    @Test func allowedKeysTakeTheRoleOfTheirDirectoryAndRefuseAKeyWithTwoRoles() throws {
        let worker = BusPublicKey(name: "w1", role: .worker, key: try CurveKeyPair.generate().publicKey)
        let ingest = BusPublicKey(name: "cam0", role: .ingest, key: try CurveKeyPair.generate().publicKey)
        var twice = worker
        twice.role = .consumer
        twice.name = "w1-again"
        let allowed = AllowedKeys(files: [
            (.worker, "allowed/worker/w1.pub", worker.fileText),
            (.consumer, "allowed/consumer/w1-again.pub", twice.fileText),
            (.worker, "allowed/worker/cam0.pub", ingest.fileText),
        ])
        #expect(allowed.entries.isEmpty)
        #expect(allowed.problems.count == 2)
        #expect(allowed.problems.contains { $0.contains("one key cannot have two roles") })
        #expect(allowed.problems.contains { $0.contains("ingest key in the worker directory") })

        let good = AllowedKeys(files: [
            (.worker, "w1.pub", worker.fileText), (.ingest, "cam0.pub", ingest.fileText),
        ])
        #expect(good.entry(for: worker.key)?.role == .worker && good.entry(for: ingest.key)?.name == "cam0")
        #expect(good.entry(for: try CurveKeyPair.generate().publicKey) == nil)
    }

    @Test func allowingAndRevokingRewritesTheDirectoryTheBrokerReads() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let old = BusPublicKey(name: "w1", role: .worker, key: try CurveKeyPair.generate().publicKey)
        let new = BusPublicKey(name: "w1-2027", role: .worker, key: try CurveKeyPair.generate().publicKey)
        try AllowedKeys.allow(old, in: directory)
        try AllowedKeys.allow(new, in: directory)
        // Both admitted during the rotation.
        #expect(Set(AllowedKeys.load(directory: directory).entries.keys) == [old.key, new.key])
        try AllowedKeys.revoke(name: "w1", role: .worker, in: directory)
        #expect(Set(AllowedKeys.load(directory: directory).entries.keys) == [new.key])
        #expect(throws: BusKeyError.missing(directory + "/worker/w1.pub")) {
            try AllowedKeys.revoke(name: "w1", role: .worker, in: directory)
        }
    }

    // Issue 19, item 16: key texts from other editors, and a key file of the other kind.

    @Test func aKeyFileWithCRLFLineEndsReadsLikeOneWithLF() throws {
        let key = BusKey(name: "cam0", role: .ingest, keyPair: try CurveKeyPair.generate())
        let crlf = key.secretFileText.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try BusKey(parsing: crlf, source: "cam0.key") == key)
        let publicCRLF = key.publicKey.fileText.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try BusPublicKey(parsing: publicCRLF, source: "cam0.pub") == key.publicKey)
    }

    @Test func aSecretKeyFileGivenWhereAPublicKeyBelongsIsRefused() throws {
        let directory = try BusKeyFileTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = BusKey(name: "broker", role: .broker, keyPair: try CurveKeyPair.generate())
        let (secret, publicPath) = try broker.write(to: directory)
        // --server-key broker.key
        let error = #expect(throws: BusKeyError.self) { try BusPublicKey.load(secret, role: .broker) }
        guard case .malformed(secret, let reason) = error else {
            Issue.record("expected a malformed key file, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("it is a secret key file") && reason.contains("give its .pub file"))
        #expect(try BusPublicKey.load(publicPath, role: .broker) == broker.publicKey)
        // A secret file copied into the allowed directory is not admitted either.
        let allowed = AllowedKeys(files: [(.broker, secret, broker.secretFileText)])
        #expect(allowed.entries.isEmpty && allowed.problems.count == 1)
    }
}
