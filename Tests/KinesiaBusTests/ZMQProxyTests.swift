import Dispatch
import Foundation
import KinesiaBus
import Testing

struct ZMQProxyTests {
    @Test func proxyForwardsPublishersToSubscribersAndCountsMessages() throws {
        let context = try ZMQContext()
        let proxy = try ZMQProxy(
            context: context, frontend: "tcp://127.0.0.1:*", backend: "tcp://127.0.0.1:*")
        defer { proxy.stop() }
        let publisher = try ZMQSocket(.pub, context: context)
        defer { publisher.close() }
        let subscriber = try ZMQSocket(.sub, context: context)
        defer { subscriber.close() }
        try publisher.connect(proxy.frontendEndpoint)
        try subscriber.subscribe("pose/cam0/")
        try subscriber.connect(proxy.backendEndpoint)

        let probe = [bytes("pose/cam0/"), bytes("probe")]
        #expect(try publishUntilReceived(probe, publisher: publisher, subscriber: subscriber) == probe)
        while try subscriber.receive(timeout: .milliseconds(50)) != nil {}
        let before = try proxy.statistics()

        for index in 0..<100 {
            try publisher.send([bytes("pose/cam0/"), pattern(count: 256, seed: UInt8(index))])
        }
        for index in 0..<100 {
            #expect(
                try subscriber.receive(timeout: .seconds(5)) == [
                    bytes("pose/cam0/"), pattern(count: 256, seed: UInt8(index)),
                ])
        }
        let after = try proxy.statistics()
        // Whole messages are counted; the bytes of both frames (10 + 256).
        #expect(after.frontend.messagesReceived - before.frontend.messagesReceived == 100)
        #expect(after.frontend.bytesReceived - before.frontend.bytesReceived == 100 * 266)
        #expect(after.backend.messagesSent - before.backend.messagesSent == 100)
        #expect(after.backend.bytesSent - before.backend.bytesSent == 100 * 266)
        // The subscription went up: backend received it, frontend sent it.
        #expect(after.backend.messagesReceived >= 1)
        #expect(after.frontend.messagesSent >= 1)
    }

    @Test func proxyStopsCleanlyFromAnotherThread() throws {
        let context = try ZMQContext()
        let directory = try IPCDirectory.makeTemporary()
        defer { directory.remove() }
        let proxy = try ZMQProxy(
            context: context, frontend: directory.endpoint("frontend"), backend: directory.endpoint("backend")
        )
        #expect(proxy.isRunning)
        let socketFile = String(proxy.frontendEndpoint.dropFirst("ipc://".count))
        let mode = try FileManager.default.attributesOfItem(atPath: socketFile)[.posixPermissions] as? Int
        #expect(mode.map { $0 & 0o077 } == 0)
        let stopped = onThread { proxy.stop() }
        #expect(stopped.wait(timeout: .now() + 5) == .success)
        #expect(!proxy.isRunning)
        #expect(proxy.endingError == nil)
        #expect(throws: ZMQError.terminated) { try proxy.statistics() }
        proxy.stop()
        // Every socket the proxy had is closed: the context terminates without waiting.
        let terminated = onThread { context.terminate() }
        #expect(terminated.wait(timeout: .now() + 5) == .success)
    }

    @Test func proxyEndsWhenItsContextIsTerminated() throws {
        let context = try ZMQContext()
        let proxy = try ZMQProxy(context: context, frontend: "inproc://front", backend: "inproc://back")
        let terminated = onThread { context.terminate() }
        #expect(terminated.wait(timeout: .now() + 5) == .success)
        proxy.wait()
        #expect(!proxy.isRunning)
        #expect(proxy.endingError == .terminated)
    }

    @Test func pausedProxyHoldsMessagesUntilResumed() throws {
        let context = try ZMQContext()
        let front = try ZMQSocket(.pull, context: context)
        let back = try ZMQSocket(.push, context: context)
        try front.bind("inproc://paused-front")
        try back.bind("inproc://paused-back")
        let proxy = try ZMQProxy(frontend: front, backend: back)
        defer { proxy.stop() }
        let producer = try ZMQSocket(.push, context: context)
        defer { producer.close() }
        let consumer = try ZMQSocket(.pull, context: context)
        defer { consumer.close() }
        try producer.connect("inproc://paused-front")
        try consumer.connect("inproc://paused-back")

        try producer.send([bytes("first")])
        #expect(try consumer.receive(timeout: .seconds(5)) == [bytes("first")])
        proxy.pause()
        _ = try proxy.statistics()  // the control socket is ordered: the pause is in effect now
        try producer.send([bytes("held")])
        #expect(try consumer.receive(timeout: .milliseconds(50)) == nil)
        proxy.resume()
        #expect(try consumer.receive(timeout: .seconds(5)) == [bytes("held")])
    }

    @Test func captureSocketReceivesACopyOfEveryMessage() throws {
        let context = try ZMQContext()
        let front = try ZMQSocket(.xsub, context: context)
        let back = try ZMQSocket(.xpub, context: context)
        let capture = try ZMQSocket(.push, context: context)
        try front.bind("inproc://capture-front")
        try back.bind("inproc://capture-back")
        try capture.bind("inproc://capture")
        let tap = try ZMQSocket(.pull, context: context)
        defer { tap.close() }
        try tap.connect("inproc://capture")
        let proxy = try ZMQProxy(frontend: front, backend: back, capture: capture)
        defer { proxy.stop() }
        let publisher = try ZMQSocket(.pub, context: context)
        defer { publisher.close() }
        let subscriber = try ZMQSocket(.sub, context: context)
        defer { subscriber.close() }
        try publisher.connect("inproc://capture-front")
        try subscriber.subscribe("")
        try subscriber.connect("inproc://capture-back")

        let message = [bytes("health/broker/"), bytes("ok")]
        #expect(try publishUntilReceived(message, publisher: publisher, subscriber: subscriber) == message)
        var copies: [[[UInt8]]] = []
        while let copy = try tap.receive(timeout: .milliseconds(100)) { copies.append(copy) }
        #expect(copies.contains([[1]]))  // the subscription, going up
        #expect(copies.contains(message))
    }
}
