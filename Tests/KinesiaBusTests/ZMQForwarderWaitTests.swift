import Foundation
import KinesiaBus
import Synchronization
import Testing

/// The forwarder's wait, which leaves a side read to its end alone until its descriptor wakes it,
/// still finds the backend's subscriptions while messages flow down without a pause (each send
/// there processes the backend's commands, which can leave a subscription behind a quiet
/// descriptor; a loop that served only the busy side would starve them).
struct ZMQForwarderWaitTests {
    @Test func aSubscriptionMadeWhileMessagesFlowDownReachesThePublishers() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let name = UUID().uuidString
        let frontend = try ZMQSocket(.xsub, context: context)
        let backend = try ZMQSocket(.xpub, context: context)
        _ = try frontend.bind("inproc://front-\(name)")
        _ = try backend.bind("inproc://back-\(name)")
        let forwarder = try ZMQForwarder(frontend: frontend, backend: backend)
        defer { forwarder.stop() }

        // A publisher that never pauses, on its own thread, and one that only reads the
        // subscriptions the forwarder sends up.
        let stop = Atomic<Bool>(false)
        let sent = Atomic<Int>(0)
        let busyThread = Thread {
            guard let busy = try? ZMQSocket(.pub, context: context) else { return }
            defer { busy.close() }
            guard (try? busy.connect("inproc://front-\(name)")) != nil else { return }
            while !stop.load(ordering: .relaxed) {
                _ = try? busy.send([Array("busy/".utf8), [1, 2, 3]])
                sent.add(1, ordering: .relaxed)
            }
        }
        let watcher = try ZMQSocket(.xpub, context: context)
        defer { watcher.close() }
        try watcher.connect("inproc://front-\(name)")
        let early = try ZMQSocket(.sub, context: context)
        defer { early.close() }
        try early.subscribe("busy/")
        try early.connect("inproc://back-\(name)")
        busyThread.start()
        defer {
            stop.store(true, ordering: .relaxed)
            while !busyThread.isFinished { usleep(1_000) }
        }
        // The stream flows through the forwarder.
        #expect(try early.receive(timeout: .seconds(5)) == [Array("busy/".utf8), [1, 2, 3]])
        while try watcher.receive(timeout: .milliseconds(100)) != nil {}

        let late = try ZMQSocket(.sub, context: context)
        defer { late.close() }
        try late.subscribe("late/")
        try late.connect("inproc://back-\(name)")
        let clock = ContinuousClock()
        let subscribed = clock.now
        var subscription: [[UInt8]]?
        while subscription == nil, clock.now - subscribed < .seconds(2) {
            subscription = try watcher.receive(timeout: .milliseconds(50))
        }
        let waited = clock.now - subscribed
        #expect(subscription == [[1] + Array("late/".utf8)])
        // The forwarder asks every 10 ms; a second leaves room for a loaded machine.
        #expect(waited < .seconds(1), "the subscription came up after \(waited)")
        #expect(sent.load(ordering: .relaxed) > 100, "messages flowed down meanwhile")
    }
}
