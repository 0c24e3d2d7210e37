import KinesiaBus
import Testing

struct CurveTests {
    @Test func keyPairsAreZ85AndThePublicKeyDerivesFromTheSecret() throws {
        let keys = try CurveKeyPair.generate()
        #expect(keys.publicKey.utf8.count == 40)
        #expect(keys.secretKey.utf8.count == 40)
        #expect(keys != (try CurveKeyPair.generate()))
        #expect(try CurveKeyPair(secretKey: keys.secretKey) == keys)
        #expect(!keys.description.contains(keys.secretKey))
        #expect(throws: ZMQError.invalidArgument) { try CurveKeyPair(secretKey: "short") }
        #expect(throws: ZMQError.invalidArgument) {
            try CurveKeyPair(secretKey: String(repeating: "~", count: 40))
        }
    }

    @Test func clientWithTheServersKeyExchangesMessages() throws {
        let context = try ZMQContext()
        let serverKeys = try CurveKeyPair.generate()
        let server = try ZMQSocket(.pull, context: context)
        defer { server.close() }
        try server.makeCurveServer(secretKey: serverKeys.secretKey)
        let client = try ZMQSocket(.push, context: context)
        defer { client.close() }
        try client.makeCurveClient(serverKey: serverKeys.publicKey, keyPair: try .generate())
        try client.connect(try server.bind("tcp://127.0.0.1:*"))

        try client.send([bytes("encrypted"), pattern(count: 1000)])
        #expect(try server.receive(timeout: .seconds(5)) == [bytes("encrypted"), pattern(count: 1000)])
    }

    @Test func clientWithAWrongServerKeyFailsTheHandshakeAndDeliversNothing() throws {
        let context = try ZMQContext()
        let serverKeys = try CurveKeyPair.generate()
        let impostor = try CurveKeyPair.generate()
        let server = try ZMQSocket(.pull, context: context)
        defer { server.close() }
        try server.makeCurveServer(secretKey: serverKeys.secretKey)
        let monitor = try server.monitor(.handshakeFailed)
        defer { monitor.close() }
        let client = try ZMQSocket(.push, context: context)
        defer { client.close() }
        try client.makeCurveClient(serverKey: impostor.publicKey, keyPair: try .generate())
        try client.connect(try server.bind("tcp://127.0.0.1:*"))
        try client.send([bytes("must not arrive")])

        let failure = try #require(try monitor.next(timeout: .seconds(5)))
        #expect(failure.kind.isHandshakeFailure)
        #expect(try server.receive(timeout: .milliseconds(100)) == nil)
    }
}
