import KinesiaBus
import Testing

struct PollerTests {
    @Test func pollReportsReadinessPerItem() throws {
        let context = try ZMQContext()
        let quiet = try ZMQSocket(.pull, context: context)
        defer { quiet.close() }
        let busy = try ZMQSocket(.pull, context: context)
        defer { busy.close() }
        let push = try ZMQSocket(.push, context: context)
        defer { push.close() }
        try quiet.bind("inproc://quiet")
        try busy.bind("inproc://busy")
        try push.connect("inproc://busy")

        var poller = Poller()
        let quietIndex = poller.add(quiet)
        let busyIndex = poller.add(busy, for: .readable)
        let pushIndex = poller.add(push, for: .writable)
        #expect(poller.count == 3)
        #expect(try poller.poll(timeout: .zero) == [[], [], .writable])

        try push.send([bytes("wake")])
        let ready = try poller.poll(timeout: .seconds(5))
        #expect(ready[quietIndex] == [])
        #expect(ready[busyIndex] == .readable)
        #expect(ready[pushIndex] == .writable)
        #expect(try busy.get(.readiness).contains(.readable))
        #expect(try busy.tryReceive() == [bytes("wake")])
        #expect(try busy.get(.readiness) == [])
    }

    @Test func pollTimesOutWithNothingReady() throws {
        let context = try ZMQContext()
        let pull = try ZMQSocket(.pull, context: context)
        defer { pull.close() }
        try pull.bind("tcp://127.0.0.1:*")
        var poller = Poller()
        poller.add(pull)
        #expect(try poller.poll(timeout: .milliseconds(5)) == [[]])
    }

    @Test func pollingAClosedSocketIsAnError() throws {
        let context = try ZMQContext()
        let pull = try ZMQSocket(.pull, context: context)
        var poller = Poller()
        poller.add(pull)
        pull.close()
        #expect(throws: ZMQError.closed) { try poller.poll(timeout: .zero) }
    }
}
