import Dispatch
import Foundation
import KinesiaBus
import KinesiaSystem
import Synchronization

/// The door of a ``ReplayServer``: the ZAP handler of the server's own context, on a thread of
/// its own, that admits or refuses each connection at its ZMTP handshake by what
/// ``ReplayConnections`` says, from the ROUTER's monitor read on the same thread.
///
/// The ROUTER sets ``domain`` as its `ZMQ_ZAP_DOMAIN`, so libzmq asks this handler about every
/// NULL-mechanism handshake (over IPC and TCP) and holds the handshake until it answers. A
/// refusal (status 400) ends the handshake with an authentication failure, which a libzmq peer
/// does not retry: a flood of clients beyond the cap costs one handshake each, not one every
/// reconnect interval. The thread also shuts down the connections beyond
/// ``ReplayConnections/maximumHandshakes`` and gives freed heap back (``FreedMemory``), so the
/// server's caller does none of this on its live path.
///
/// Start it before the ROUTER binds (its ZAP socket must be bound and its monitor reader
/// connected first, or the first connections would pass unseen); stop it before the ROUTER and
/// the context close.
final class ReplayGate: Sendable {
    /// The ROUTER's `ZMQ_ZAP_DOMAIN`.
    static let domain = "kinesia-replay"

    /// What the gate counted, for `health/`.
    struct Counts: Hashable, Sendable {
        /// Connections through their handshake, open now.
        var open = 0
        /// Connections refused (at the handshake or before it).
        var refused = 0
        /// Accepts that failed in libzmq (`EMFILE`).
        var acceptFailures = 0
        /// Times the freed heap was given back.
        var memoryReturns = 0
    }

    /// What the gate's thread and its owner share.
    private final class Shared: Sendable {
        let counts = Mutex(Counts())
        let stopping = Atomic<Bool>(false)
        /// Wakes the gate's poll on ``ReplayGate/stop()`` (set before the initializer returns).
        let waker = Mutex<ThreadWaker?>(nil)
    }

    private let shared = Shared()
    private let finished = DispatchGroup()

    /// Binds the ZAP socket in `context`, connects the reader of the monitor `events` publishes
    /// on, and starts answering, all on the gate's thread (this returns once they are ready).
    /// - Parameters:
    ///   - context: The server's context (one ZAP handler per context).
    ///   - events: The inproc endpoint of the ROUTER's monitor (``ZMQSocket/publishEvents(_:)``):
    ///     accepted, handshake succeeded and failed, disconnected, accept failed.
    ///   - connections: The table, empty.
    ///   - clock: What the table's time is read on (when the freed heap is given back): the
    ///     server's clock, a ``ManualClock`` in tests.
    /// - Throws: ``ZMQError`` (``ZMQError/addressInUse`` when the context has a ZAP handler).
    init(context: ZMQContext, events: String, connections: ReplayConnections, clock: ElapsedClock)
        throws(ZMQError)
    {
        let ready = DispatchSemaphore(value: 0)
        let failure = Mutex<ZMQError?>(nil)
        let shared = shared
        finished.enter()
        let group = finished
        let thread = Thread.named("kinesia.replay-gate") {
            defer { group.leave() }
            let zap: ZMQSocket
            let monitor: SocketMonitor
            let wakeReceiver: ZMQSocket
            do throws(ZMQError) {
                zap = try ZMQSocket(.rep, context: context, linger: .zero)
                do throws(ZMQError) {
                    try zap.bind(ZAPHandler.endpoint)
                    monitor = try SocketMonitor(endpoint: events, context: context)
                    let (waker, receiver) = try ThreadWaker.make(context: context)
                    shared.waker.withLock { $0 = waker }
                    wakeReceiver = receiver
                } catch {
                    zap.close()
                    throw error
                }
            } catch {
                failure.withLock { $0 = error }
                ready.signal()
                return
            }
            ready.signal()
            Self.run(
                zap: zap, monitor: monitor, wakeReceiver: wakeReceiver, connections: connections,
                clock: clock, shared: shared)
            monitor.close()
            zap.close()
            wakeReceiver.close()
            shared.waker.withLock { waker in
                waker?.close()
                waker = nil
            }
        }
        thread.start()
        ready.wait()
        if let error = failure.withLock({ $0 }) {
            finished.wait()
            throw error
        }
    }

    deinit {
        stop()
    }

    /// What the gate counted so far.
    var counts: Counts { shared.counts.withLock { $0 } }

    /// Stops answering and waits for the thread (woken at once: the time of one turn of its
    /// loop). Safe more than once. Stop the ROUTER's monitoring before: its monitor must not
    /// write to a reader that is gone.
    func stop() {
        shared.stopping.store(true, ordering: .releasing)
        shared.waker.withLock { $0?.wake() }
        finished.wait()
    }

    /// The gate's loop: the monitor's events first (so the table knows who left), then every
    /// ZAP request waiting, then the actions; while the heap's return is due (by the table, at
    /// `clock`'s time) at least every ``dueCheck``, otherwise only on an event, and at once when
    /// woken to stop. An idle server's gate sleeps: it woke every 100 ms, ten wake-ups a second
    /// in every ingest and worker (640 a second at 64 cameras, about a twentieth of an
    /// ingest's processor time).
    private static func run(
        zap: ZMQSocket, monitor: SocketMonitor, wakeReceiver: ZMQSocket, connections: ReplayConnections,
        clock: ElapsedClock, shared: Shared
    ) {
        var table = connections
        var events: [SocketEvent] = []
        var poller = Poller()
        poller.add(zap, for: .readable)
        poller.add(monitor.eventSocket, for: .readable)
        poller.add(wakeReceiver, for: .readable)
        while !shared.stopping.load(ordering: .acquiring) {
            do {
                _ = try poller.poll(timeout: pollTimeout(due: table.nextDue, now: clock.now))
            } catch {
                return
            }
            events.removeAll(keepingCapacity: true)
            // A bounded read: the monitor's queue holds about 2,000 events.
            while events.count < 10_000, let event = try? monitor.next(timeout: .zero) {
                events.append(event)
            }
            let now = clock.now
            let actions = events.isEmpty ? table.tick(now: now) : table.record(events, now: now)
            while let frames = try? zap.tryReceive() {
                let reply = answer(frames, table: &table)
                do {
                    try zap.send(reply)
                } catch {
                    return
                }
            }
            for action in actions {
                switch action {
                case .refuse(let descriptor):
                    try? ConnectionShutdown.shutDown(descriptor: descriptor)
                case .returnFreedMemory:
                    FreedMemory.returnToSystem()
                }
            }
            let counts = Counts(
                open: table.open, refused: table.refused, acceptFailures: table.acceptFailures,
                memoryReturns: table.memoryReturns)
            shared.counts.withLock { $0 = counts }
        }
    }

    /// The longest the gate's loop waits for an event while the heap's return is due: a
    /// ``ManualClock`` (tests) moves without waking it.
    static let dueCheck: Duration = .milliseconds(100)

    /// How long the gate's loop waits for an event: until `due` at most ``dueCheck``, or until an
    /// event (`nil`) when nothing is due.
    static func pollTimeout(due: Duration?, now: Duration) -> Duration? {
        guard let due else { return nil }
        return Swift.min(dueCheck, Swift.max(.zero, due - now))
    }

    /// The reply frames to one ZAP request: admitted while the table has room.
    static func answer(_ frames: [[UInt8]], table: inout ReplayConnections) -> [[UInt8]] {
        ZAPHandler.answer(frames) { request in
            // Only the ROUTER's handshakes are counted; nothing else in the context asks.
            guard request.domain == domain else { return .admit(userID: "") }
            return table.admit()
                ? .admit(userID: "")
                : .refuse("the replay server has its most connections open; try again later")
        }
    }
}
