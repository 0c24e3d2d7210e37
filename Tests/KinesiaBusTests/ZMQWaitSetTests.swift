import Foundation
import KinesiaBus
import Testing

struct ZMQWaitSetTests {
    /// A PULL bound at `name` and a PUSH connected to it.
    private func pair(_ name: String, context: ZMQContext) throws -> (pull: ZMQSocket, push: ZMQSocket) {
        let pull = try ZMQSocket(.pull, context: context)
        try pull.bind("inproc://\(name)")
        let push = try ZMQSocket(.push, context: context)
        try push.connect("inproc://\(name)")
        return (pull, push)
    }

    @Test func aMessageAlreadyQueuedIsReadyWithoutWaiting() throws {
        let context = try ZMQContext()
        let (quiet, quietPush) = try pair("quiet", context: context)
        let (busy, busyPush) = try pair("busy", context: context)
        defer { [quiet, quietPush, busy, busyPush].forEach { $0.close() } }
        try busyPush.send([bytes("pose")])
        var waits = ZMQWaitSet()
        let quietItem = try waits.add(quiet)
        let busyItem = try waits.add(busy)
        #expect(waits.count == 2)

        // Every socket starts unsettled: its readiness is asked before any sleep.
        let ready = try waits.wait(timeout: .seconds(10))
        #expect(ready.contains(busyItem))
        #expect(!ready.contains(quietItem))
        #expect(try busy.tryReceive() == [bytes("pose")])
    }

    @Test func aSocketReadToItsEndWakesTheWaitWhenTheNextMessageComes() throws {
        let context = try ZMQContext()
        let pull = try ZMQSocket(.pull, context: context)
        defer { pull.close() }
        try pull.bind("inproc://next")
        var waits = ZMQWaitSet()
        let item = try waits.add(pull)
        #expect(try waits.wait(timeout: .milliseconds(20)).isEmpty)

        // A sender on a thread of its own (with a socket of its own) sends a message a round,
        // a little after the main thread went to wait, and then waits for the round's end.
        let rounds = 50
        let roundDone = DispatchSemaphore(value: 0)
        let sender = onThread {
            guard let push = try? ZMQSocket(.push, context: context) else { return }
            defer { push.close() }
            guard (try? push.connect("inproc://next")) != nil else { return }
            for round in 0..<rounds {
                usleep(2_000)
                try? push.send([Array("pose \(round)".utf8)])
                roundDone.wait()
            }
        }
        for round in 0..<rounds {
            // Settled, the socket is not asked: only its descriptor can end this wait before
            // the timeout (a missed message would show as a wait that timed out). It may also
            // wake for what is not a message (the sender's connection): then nothing is read.
            var received: [[[UInt8]]] = []
            var wakes = 0
            while received.isEmpty, wakes < 5 {
                let ready = try waits.wait(timeout: .seconds(30))
                #expect(ready.contains(item), "round \(round): the wait timed out")
                while let frames = try pull.tryReceive() { received.append(frames) }
                waits.readToEnd(item)
                wakes += 1
            }
            #expect(received == [[bytes("pose \(round)")]], "round \(round)")
            roundDone.signal()
        }
        sender.wait()
    }

    @Test func aSocketNotReadToItsEndIsReadyAgain() throws {
        let context = try ZMQContext()
        let (pull, push) = try pair("again", context: context)
        defer { [pull, push].forEach { $0.close() } }
        try push.send([bytes("first")])
        try push.send([bytes("second")])
        var waits = ZMQWaitSet()
        let item = try waits.add(pull)
        #expect(try waits.wait(timeout: .seconds(10)).contains(item))
        #expect(try pull.tryReceive() == [bytes("first")])
        // One of two read: still unsettled, so asked, and found with the second.
        #expect(try waits.wait(timeout: .seconds(10)).contains(item))
        #expect(try pull.tryReceive() == [bytes("second")])
        #expect(try pull.tryReceive() == nil)
        waits.readToEnd(item)
        #expect(try waits.wait(timeout: .milliseconds(20)).isEmpty)
    }

    /// A set of one PULL, settled, and a message sent to it, then looked at outside the set:
    /// that processes the socket's commands, so the descriptor's edge is spent and the message
    /// is there.
    private func messageSeenBehindTheSetsBack(_ name: String, context: ZMQContext) throws -> (
        pull: ZMQSocket, push: ZMQSocket, waits: ZMQWaitSet, item: Int
    ) {
        let (pull, push) = try pair(name, context: context)
        var waits = ZMQWaitSet()
        let item = try waits.add(pull)
        #expect(try waits.wait(timeout: .milliseconds(20)).isEmpty)
        try push.send([bytes("pose")])
        let deadline = Date().addingTimeInterval(10)
        while try !pull.get(.readiness).contains(.readable), Date() < deadline { usleep(1_000) }
        return (pull, push, waits, item)
    }

    @Test func aSocketUsedBehindTheSetsBackIsAskedAfterTouched() throws {
        let context = try ZMQContext()
        let (pull, push, seen, item) = try messageSeenBehindTheSetsBack("touched", context: context)
        defer { [pull, push].forEach { $0.close() } }
        var waits = seen
        // Said with touched(_:), the next wait asks.
        waits.touched(item)
        // Asked before the wait sleeps: found at once, not by the timeout's look.
        #expect(try waits.wait(timeout: .seconds(10)).contains(item))
        #expect(waits.foundOnTimeout == 0)
        #expect(try pull.tryReceive() == [bytes("pose")])
    }

    /// Waits of `timeout` until one returns a socket, at most `limit` of them: how many it took.
    private func waitsUntilReady(_ waits: inout ZMQWaitSet, timeout: Duration, limit: Int) throws -> Int? {
        for count in 1...limit where try !waits.wait(timeout: timeout).isEmpty { return count }
        return nil
    }

    @Test func aWakeUpMissedCostsTheAskIntervalNotTheMessage() throws {
        let context = try ZMQContext()
        let (pull, push, seen, item) = try messageSeenBehindTheSetsBack("missed", context: context)
        defer { [pull, push].forEach { $0.close() } }
        var waits = seen
        // The set not told: the descriptor stays quiet. The settle's wait timed out 20 ms, so
        // 80 ms more of them ask: the fourth of 20 ms, not the first (asking at every timeout
        // costs a paced publisher two system calls a pose).
        #expect(ZMQWaitSet.askInterval == .milliseconds(100))
        #expect(try waitsUntilReady(&waits, timeout: .milliseconds(20), limit: 10) == 4)
        #expect(waits.foundOnTimeout == 1)
        #expect(try pull.tryReceive() == [bytes("pose")])
        #expect(try pull.tryReceive() == nil)
        waits.readToEnd(item)
        #expect(try waits.wait(timeout: .milliseconds(20)).isEmpty)
        #expect(waits.foundOnTimeout == 1)
    }

    @Test func aLoopThatOnlyLooksFindsAMissedWakeUpToo() throws {
        let context = try ZMQContext()
        let (pull, push, seen, _) = try messageSeenBehindTheSetsBack("looks", context: context)
        defer { [pull, push].forEach { $0.close() } }
        var waits = seen
        // A look (`.zero`) counts a millisecond: 80 looks after the settle's 20 ms wait.
        #expect(try waitsUntilReady(&waits, timeout: .zero, limit: 200) == 80)
        #expect(waits.foundOnTimeout == 1)
        #expect(try pull.tryReceive() == [bytes("pose")])
    }

    /// A wait longer than the interval asks when it times out: a missed wake-up costs one timeout.
    @Test func aLongWaitAsksWhenItTimesOut() throws {
        let context = try ZMQContext()
        let (pull, push, seen, item) = try messageSeenBehindTheSetsBack("long", context: context)
        defer { [pull, push].forEach { $0.close() } }
        var waits = seen
        #expect(try waits.wait(timeout: .milliseconds(150)).contains(item))
        #expect(waits.foundOnTimeout == 1)
    }

    @Test func aSettledSocketIsNotPassedOverForOneThatIsAlwaysReady() throws {
        let context = try ZMQContext()
        let (live, livePush) = try pair("live", context: context)
        let (busy, busyPush) = try pair("always", context: context)
        defer { [live, livePush, busy, busyPush].forEach { $0.close() } }
        var waits = ZMQWaitSet()
        let liveItem = try waits.add(live)
        let busyItem = try waits.add(busy)
        #expect(try waits.wait(timeout: .milliseconds(20)).isEmpty)
        for round in 0..<3 { try busyPush.send([bytes("replay \(round)")]) }
        try livePush.send([bytes("pose")])
        // The busy socket is read a message at a time (never to its end: asked before every
        // wait, and ready); the settled one's descriptor is looked at all the same.
        var found: [[UInt8]] = []
        for _ in 0..<3 {
            let ready = try waits.wait(timeout: .seconds(10))
            #expect(ready.contains(busyItem))
            _ = try busy.tryReceive()
            if ready.contains(liveItem) {
                while let frames = try live.tryReceive() { found += frames }
                waits.readToEnd(liveItem)
            }
        }
        #expect(found == [bytes("pose")])
        #expect(waits.foundOnTimeout == 0)
    }

    @Test func socketsRemovedFromTheEndLeaveTheOthersAsTheyWere() throws {
        let context = try ZMQContext()
        let (kept, keptPush) = try pair("kept", context: context)
        let (gone, gonePush) = try pair("gone", context: context)
        let (next, nextPush) = try pair("next", context: context)
        defer { [kept, keptPush, gone, gonePush, next, nextPush].forEach { $0.close() } }
        var waits = ZMQWaitSet()
        let keptItem = try waits.add(kept)
        try waits.add(gone)
        try gonePush.send([bytes("reply")])
        #expect(try waits.wait(timeout: .seconds(10)).contains(1))

        waits.removeSockets(from: 1)
        #expect(waits.count == 1)
        // The removed socket's message wakes nothing; the index goes to the next one added.
        #expect(try waits.wait(timeout: .milliseconds(20)).isEmpty)
        #expect(try waits.add(next) == 1)
        try nextPush.send([bytes("pose")])
        try keptPush.send([bytes("pose")])
        let ready = try waits.wait(timeout: .seconds(10))
        #expect(ready.contains(keptItem))
        #expect(ready.contains(1))
        #expect(waits.foundOnTimeout == 0)
    }

    @Test func aPlainDescriptorIsWaitedForWithTheSockets() throws {
        let context = try ZMQContext()
        let (pull, push) = try pair("plain", context: context)
        defer { [pull, push].forEach { $0.close() } }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        var waits = ZMQWaitSet()
        let socketItem = try waits.add(pull)
        let pipeItem = try waits.addDescriptor(ends[0])
        #expect(try waits.wait(timeout: .milliseconds(20)).isEmpty)

        #expect(write(ends[1], "x", 1) == 1)
        let ready = try waits.wait(timeout: .seconds(10))
        #expect(ready.contains(pipeItem) && !ready.contains(socketItem))
        // Level-triggered: ready as long as it is not read, and never asked as a socket.
        waits.touched(pipeItem)
        #expect(try waits.wait(timeout: .seconds(10)).contains(pipeItem))
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 1)
        #expect(try waits.wait(timeout: .milliseconds(20)).isEmpty)
        #expect(waits.foundOnTimeout == 0)
        #expect(throws: ZMQError.invalidArgument) { try waits.addDescriptor(-1) }
    }

    @Test func anUnsettledClosedSocketIsAnError() throws {
        let context = try ZMQContext()
        let pull = try ZMQSocket(.pull, context: context)
        var waits = ZMQWaitSet()
        try waits.add(pull)
        pull.close()
        #expect(throws: ZMQError.closed) { try waits.wait(timeout: .zero) }
        #expect(throws: ZMQError.closed) { try waits.add(pull) }
    }

    @Test func aSetHoldsAtMostItsCapacity() throws {
        let context = try ZMQContext()
        var sockets: [ZMQSocket] = []
        defer { sockets.forEach { $0.close() } }
        var waits = ZMQWaitSet()
        for _ in 0..<ZMQWaitSet.capacity {
            let socket = try ZMQSocket(.pull, context: context)
            sockets.append(socket)
            try waits.add(socket)
        }
        let extra = try ZMQSocket(.pull, context: context)
        sockets.append(extra)
        #expect(throws: ZMQError.invalidArgument) { try waits.add(extra) }
        #expect(try waits.wait(timeout: .zero).isEmpty)
    }
}
