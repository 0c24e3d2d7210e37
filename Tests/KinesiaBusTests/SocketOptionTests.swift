import KinesiaBus
import Testing

struct SocketOptionTests {
    @Test func numericAndDurationOptionsReadBackWhatWasWritten() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(.dealer, context: context)
        defer { socket.close() }
        try socket.set(.sendHighWaterMark, 5000)
        try socket.set(.receiveHighWaterMark, 7)
        try socket.set(.linger, nil)
        try socket.set(.sendTimeout, .milliseconds(250))
        try socket.set(.receiveTimeout, .microseconds(1500))  // rounded up to 2 ms
        try socket.set(.heartbeatInterval, .seconds(1))
        try socket.set(.heartbeatTimeout, .seconds(3))
        try socket.set(.heartbeatTTL, .seconds(6))
        try socket.set(.reconnectInterval, .milliseconds(50))
        try socket.set(.reconnectIntervalMax, .seconds(2))
        try socket.set(.immediate, true)

        #expect(try socket.get(.sendHighWaterMark) == 5000)
        #expect(try socket.get(.receiveHighWaterMark) == 7)
        #expect(try socket.get(.linger) == nil)
        #expect(try socket.get(.sendTimeout) == .milliseconds(250))
        #expect(try socket.get(.receiveTimeout) == .milliseconds(2))
        #expect(try socket.get(.heartbeatInterval) == .seconds(1))
        #expect(try socket.get(.heartbeatTimeout) == .seconds(3))
        #expect(try socket.get(.heartbeatTTL) == .seconds(6))
        #expect(try socket.get(.reconnectInterval) == .milliseconds(50))
        #expect(try socket.get(.reconnectIntervalMax) == .seconds(2))
        #expect(try socket.get(.immediate))
        try socket.set(.linger, .zero)
        #expect(try socket.get(.linger) == .zero)
    }

    @Test func textOptionsAndReadinessReadBack() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(.pull, context: context)
        defer { socket.close() }
        try socket.set(.zapDomain, "kinesia")
        #expect(try socket.get(.zapDomain) == "kinesia")
        #expect(try socket.get(.readiness) == [])
        #expect(try socket.get(.fileDescriptor) >= 0)
        #expect(try socket.get(.lastEndpoint) == "")
    }

    @Test func curveKeysAreWrittenAndReadAsZ85() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(.sub, context: context)
        defer { socket.close() }
        let server = try CurveKeyPair.generate()
        let client = try CurveKeyPair.generate()
        try socket.makeCurveClient(serverKey: server.publicKey, keyPair: client)
        #expect(try socket.get(.curveServerKey) == server.publicKey)
        #expect(try socket.get(.curvePublicKey) == client.publicKey)
        #expect(try socket.get(.curveSecretKey) == client.secretKey)
        #expect(try socket.get(.curveServer) == false)
        #expect(throws: ZMQError.invalidArgument) { try socket.set(.curveServerKey, "too short") }
    }

    @Test func anOptionThatDoesNotApplyIsAnInvalidArgument() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(.push, context: context)
        defer { socket.close() }
        #expect(throws: ZMQError.invalidArgument) { try socket.subscribe("pose/") }
        #expect(throws: ZMQError.invalidArgument) { try socket.set(.routingID, []) }
    }
}
