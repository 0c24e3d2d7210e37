import Foundation
import KinesiaBus
import Testing

struct SocketPatternTests {
    @Test func publisherReachesASubscriberOfTheTopicOnly() throws {
        let context = try ZMQContext()
        let publisher = try ZMQSocket(.pub, context: context)
        defer { publisher.close() }
        let subscriber = try ZMQSocket(.sub, context: context)
        defer { subscriber.close() }
        let endpoint = try publisher.bind("tcp://127.0.0.1:*")
        try subscriber.subscribe("event/cam1/")
        try subscriber.connect(endpoint)

        let first = try publishUntilReceived(
            [bytes("event/cam1/left/"), bytes("rep")], publisher: publisher, subscriber: subscriber)
        #expect(first == [bytes("event/cam1/left/"), bytes("rep")])
        try publisher.send([bytes("event/cam2/left/"), bytes("other camera")])
        try publisher.send([bytes("event/cam1/right/"), bytes("last")])
        var received: [[UInt8]]? = nil
        repeat {
            received = try subscriber.receive(timeout: .seconds(2))
        } while received?[1] == bytes("rep")
        #expect(received == [bytes("event/cam1/right/"), bytes("last")])
        try subscriber.unsubscribe("event/cam1/")
    }

    @Test func waitingForTheSubscriptionOnXPUBLosesNoMessage() throws {
        let context = try ZMQContext()
        let publisher = try ZMQSocket(.xpub, context: context)
        defer { publisher.close() }
        let subscriber = try ZMQSocket(.sub, context: context)
        defer { subscriber.close() }
        let endpoint = try publisher.bind("tcp://127.0.0.1:*")
        try subscriber.connect(endpoint)
        try subscriber.subscribe(bytes("pose/cam0/"))

        // The XPUB receives the subscription: 0x01 then the prefix.
        let subscription = try #require(try publisher.receive(timeout: .seconds(5)))
        #expect(subscription == [[1] + bytes("pose/cam0/")])
        for sequence in 0..<100 {
            try publisher.send([bytes("pose/cam0/"), [UInt8(sequence)]])
        }
        for sequence in 0..<100 {
            #expect(try subscriber.receive(timeout: .seconds(5)) == [bytes("pose/cam0/"), [UInt8(sequence)]])
        }
        try subscriber.unsubscribe("pose/cam0/")
        #expect(try publisher.receive(timeout: .seconds(5)) == [[0] + bytes("pose/cam0/")])
    }

    @Test func xsubSubscribesByMessageAndXPUBVerboseSeesEverySubscription() throws {
        let context = try ZMQContext()
        let xpub = try ZMQSocket(.xpub, context: context)
        defer { xpub.close() }
        try xpub.set(.xpubVerbose, true)
        try xpub.set(.xpubNoDrop, true)
        let xsub = try ZMQSocket(.xsub, context: context)
        defer { xsub.close() }
        let second = try ZMQSocket(.xsub, context: context)
        defer { second.close() }
        let endpoint = try xpub.bind("tcp://127.0.0.1:*")
        try xsub.connect(endpoint)
        try second.connect(endpoint)
        try xsub.send([[1] + bytes("health/")])
        try second.send([[1] + bytes("health/")])
        // Verbose: the duplicate subscription is passed up too.
        #expect(try xpub.receive(timeout: .seconds(5)) == [[1] + bytes("health/")])
        #expect(try xpub.receive(timeout: .seconds(5)) == [[1] + bytes("health/")])
        try xpub.send([bytes("health/broker/"), bytes("ok")])
        #expect(try xsub.receive(timeout: .seconds(5)) == [bytes("health/broker/"), bytes("ok")])
        #expect(try second.receive(timeout: .seconds(5)) == [bytes("health/broker/"), bytes("ok")])
    }

    @Test func routerAddressesADealerByItsRoutingID() throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(.router, context: context)
        defer { router.close() }
        let dealer = try ZMQSocket(.dealer, context: context)
        defer { dealer.close() }
        try dealer.set(.routingID, bytes("worker-1"))
        #expect(try dealer.get(.routingID) == bytes("worker-1"))
        try dealer.connect(try router.bind("tcp://127.0.0.1:*"))

        try dealer.send([bytes("replay from"), bytes("42")])
        #expect(
            try router.receive(timeout: .seconds(5)) == [
                bytes("worker-1"), bytes("replay from"), bytes("42"),
            ])
        try router.send([bytes("worker-1"), bytes("record 42")])
        #expect(try dealer.receive(timeout: .seconds(5)) == [bytes("record 42")])
    }

    @Test func requestAndReplyAlternateStrictly() throws {
        let (reply, request) = try connectedSockets(.rep, .req, at: "tcp://127.0.0.1:*")

        try request.send([bytes("ping")])
        #expect(throws: ZMQError.wrongState) { try request.send([bytes("again")]) }
        #expect(try reply.receive(timeout: .seconds(5)) == [bytes("ping")])
        try reply.send([bytes("pong")])
        #expect(try request.receive(timeout: .seconds(5)) == [bytes("pong")])
    }

    @Test func pushAndPullOverIPCInAPrivateDirectory() throws {
        let directory = try IPCDirectory.makeTemporary()
        defer { directory.remove() }
        let context = try ZMQContext()
        let pull = try ZMQSocket(.pull, context: context)
        defer { pull.close() }
        let push = try ZMQSocket(.push, context: context)
        defer { push.close() }
        let endpoint = try directory.endpoint("work")
        #expect(try pull.bindRestricted(endpoint) == endpoint)
        try push.connect(endpoint)
        for index in 0..<10 { try push.send([[UInt8(index)]]) }
        for index in 0..<10 { #expect(try pull.receive(timeout: .seconds(5)) == [[UInt8(index)]]) }

        let directoryMode = try #require(
            try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int)
        #expect(directoryMode == 0o700)
        let socketFile = String(endpoint.dropFirst("ipc://".count))
        let socketMode = try #require(
            try FileManager.default.attributesOfItem(atPath: socketFile)[.posixPermissions] as? Int)
        #expect(socketMode & 0o077 == 0)
    }

    @Test func pairTalksBothWaysOverInproc() throws {
        let (left, right) = try connectedSockets(.pair, .pair, at: "inproc://pair")
        try left.send([bytes("to right")])
        try right.send([bytes("to left")])
        #expect(try right.receive() == [bytes("to right")])
        #expect(try left.receive() == [bytes("to left")])
        #expect(left.type == .pair)
    }
}
