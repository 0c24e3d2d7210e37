public import KinesiaBus

/// The connections of a ``ReplayServer``'s ROUTER, with no I/O: which are admitted at their
/// ZMTP handshake (at most ``maximumConnections`` open at once), which are shut out before it,
/// and when the heap they freed is given back to the system.
///
/// libzmq allocates every connection its own pipes and stream buffers (about 40 KiB resident
/// here, whether or not the peer ever sends a request), and a ROUTER has no call that refuses
/// or drops a peer. ``ReplayAdmission`` bounds the peers *answered*; this bounds the peers
/// *connected*. The server's ``ReplayGate`` asks ``admit()`` for every handshake (libzmq's ZAP
/// request): while ``maximumConnections`` are open, the answer is no, libzmq ends the handshake
/// with an authentication failure, and the refused peer **does not reconnect** (a libzmq client
/// retries a connection that broke, not a handshake that was refused). Shutting a refused
/// connection down instead, as this table did first, made every refused DEALER come back every
/// 100 ms: thousands of connections a second, each allocated and freed, and a heap that grew
/// with the churn. Connections open before are never touched: a flood of new ones cannot push
/// a served client out.
///
/// A peer that connects and never finishes its handshake (a raw socket) holds its connection
/// until libzmq's handshake interval; at most ``maximumHandshakes`` wait at once, and one more
/// is shut down as soon as it is accepted (``Action/refuse(descriptor:)``).
///
/// Counted from the socket's monitor: accepted, handshake succeeded or failed, disconnected.
/// Memory freed by libzmq stays in glibc's arenas: once at least ``trimAfterDepartures``
/// connections left and none left for ``trimQuietPeriod`` (or ``trimInterval`` passed since the
/// first of them left, for connections that never stop coming and going), ``record(_:now:)``
/// and ``tick(now:)`` ask for ``Action/returnFreedMemory`` (``FreedMemory``, `malloc_trim`),
/// and once more ``trimFollowUp`` later: libzmq frees a departed connection's pipes, and the
/// replies queued in them, only when the server's thread next handles its commands, which on
/// a busy machine can come after the first return. Time is given by the caller.
///
/// ```swift
/// var connections = ReplayConnections(maximumConnections: 256)
/// let admitted = connections.admit()            // for each ZAP request
/// for action in connections.record(events, now: clock.now - origin) {
///     switch action {
///     case .refuse(let descriptor): try? ConnectionShutdown.shutDown(descriptor: descriptor)
///     case .returnFreedMemory: FreedMemory.returnToSystem()
///     }
/// }
/// ```
public struct ReplayConnections: Sendable {
    /// What the server does.
    public enum Action: Hashable, Sendable {
        /// End the connection on this descriptor (``ConnectionShutdown``; libzmq closes it).
        case refuse(descriptor: Int32)
        /// Give the heap freed by the connections that left back to the system (``FreedMemory``).
        case returnFreedMemory
    }

    /// The most connections open (through their handshake) at once.
    public let maximumConnections: Int
    /// The most connections accepted and still in their handshake at once.
    public let maximumHandshakes: Int
    /// Connections that leave before the freed heap is given back.
    public let trimAfterDepartures: Int
    /// How long without a departure before the freed heap is given back.
    public let trimQuietPeriod: Duration
    /// How long at most a departure waits for the return while connections keep leaving.
    public let trimInterval: Duration
    /// How long after a return the heap is given back once more.
    public let trimFollowUp: Duration

    /// Connections accepted since the start.
    public private(set) var accepted = 0
    /// Connections refused: at their handshake because ``maximumConnections`` were open, or
    /// shut down before it because ``maximumHandshakes`` were waiting.
    public private(set) var refused = 0
    /// Accepts that failed in libzmq (`EMFILE`: out of descriptors).
    public private(set) var acceptFailures = 0
    /// Times the freed heap was given back.
    public private(set) var memoryReturns = 0

    /// The descriptors of the connections accepted and not seen leaving (in their handshake,
    /// served, or refused and closing).
    private var connected: Set<Int32> = []
    /// The descriptors shut down here, not yet seen leaving.
    private var shutting: Set<Int32> = []
    /// Handshakes that succeeded, and connections that left after one, since the start.
    /// libzmq's handshake events carry a status, not the descriptor; every connection ends its
    /// handshake once (success or failure) before it leaves, so a departure is one of a failed
    /// handshake's while some are still to leave, and a served connection's otherwise. That
    /// never counts a served connection gone before it is (a refused one's departure may be
    /// taken for it, until the served one leaves too), so the count errs on the side of
    /// refusing, and a refused connection still closing is never counted as served.
    private var handshakesSucceeded = 0
    private var servedDeparted = 0
    /// Failed handshakes whose connection has not been seen leaving.
    private var failedStillOpen = 0
    /// Handshakes admitted whose success the monitor has not reported yet (at most the
    /// handshakes under way: the monitor and the ZAP requests come on different pipes).
    private var admittedInHandshake = 0
    private var departuresSinceReturn = 0
    /// The first departure since the last return, and the latest.
    private var firstDeparture: Duration?
    private var lastDeparture: Duration?
    /// When the second return of the last departures is due.
    private var followUp: Duration?

    /// Makes an empty table.
    /// - Parameters:
    ///   - maximumConnections: The most connections open at once (at least 1).
    ///   - maximumHandshakes: The most connections in their handshake at once (at least 1).
    ///   - trimAfterDepartures: Connections that leave before the freed heap is given back.
    ///   - trimQuietPeriod: How long without a departure before it is given back.
    ///   - trimInterval: How long at most a departure waits for the return while connections
    ///     keep leaving.
    ///   - trimFollowUp: How long after a return the heap is given back once more.
    public init(
        maximumConnections: Int = 256, maximumHandshakes: Int = 256, trimAfterDepartures: Int = 64,
        trimQuietPeriod: Duration = .seconds(1), trimInterval: Duration = .seconds(2),
        trimFollowUp: Duration = .seconds(5)
    ) {
        self.maximumConnections = Swift.max(1, maximumConnections)
        self.maximumHandshakes = Swift.max(1, maximumHandshakes)
        self.trimAfterDepartures = Swift.max(1, trimAfterDepartures)
        self.trimQuietPeriod = trimQuietPeriod
        self.trimInterval = trimInterval
        self.trimFollowUp = trimFollowUp
    }

    /// The connections served (through a handshake that succeeded), open now: never fewer
    /// than there are, and never a refused connection that is still closing.
    public var open: Int { Swift.max(0, handshakesSucceeded - servedDeparted) }

    /// The connections accepted and still in their handshake.
    public var handshaking: Int { Swift.max(0, connected.count - open - failedStillOpen) }

    /// Whether the handshake libzmq asks about (a ZAP request) may finish: `true` while fewer
    /// than ``maximumConnections`` are open or admitted, otherwise `false`, counted in
    /// ``refused``.
    ///
    /// Give the monitor's events first (``record(_:now:)``): the table then knows of every
    /// connection that left.
    public mutating func admit() -> Bool {
        guard open + admittedInHandshake < maximumConnections else {
            refused += 1
            return false
        }
        admittedInHandshake += 1
        return true
    }

    /// The events the monitor reported since the last call, in order.
    ///
    /// Give every event read, then perform the actions at once: a descriptor is refused only
    /// if it is still open after all of them (a connection that already left is not, so its
    /// number, which libzmq may give to a new file, is not shut down).
    /// - Returns: The actions, refusals first.
    public mutating func record(_ events: [SocketEvent], now: Duration) -> [Action] {
        var refusals: [Int32] = []
        for event in events {
            let descriptor = Int32(bitPattern: event.value)
            switch event.kind {
            case .accepted:
                accepted += 1
                let waiting = handshaking
                connected.insert(descriptor)
                if waiting >= maximumHandshakes {
                    refused += 1
                    shutting.insert(descriptor)
                    refusals.append(descriptor)
                }
            case .handshakeSucceeded:
                handshakesSucceeded += 1
                admittedInHandshake = Swift.max(0, admittedInHandshake - 1)
            case .handshakeFailedAuth, .handshakeFailedProtocol, .handshakeFailedNoDetail:
                failedStillOpen += 1
            case .disconnected:
                guard connected.remove(descriptor) != nil else { continue }
                shutting.remove(descriptor)
                if failedStillOpen > 0 {
                    failedStillOpen -= 1
                } else {
                    servedDeparted += 1
                }
                departuresSinceReturn += 1
                if firstDeparture == nil { firstDeparture = now }
                lastDeparture = now
            case .acceptFailed:
                acceptFailures += 1
            default:
                break
            }
            admittedInHandshake = Swift.min(admittedInHandshake, handshaking)
        }
        var actions = refusals.filter { shutting.contains($0) }.map { Action.refuse(descriptor: $0) }
        actions += tick(now: now)
        return actions
    }

    /// When ``tick(now:)`` next has something to do with no new event (the return of the freed
    /// heap), or `nil` while nothing is (no connection left since the last return and its
    /// follow-up): what the gate's thread sleeps until, instead of waking on a fixed period.
    public var nextDue: Duration? {
        if departuresSinceReturn >= trimAfterDepartures, let firstDeparture, let lastDeparture {
            return Swift.min(lastDeparture + trimQuietPeriod, firstDeparture + trimInterval)
        }
        return followUp
    }

    /// What is due at `now` with no new event: the return of the freed heap (at ``nextDue``).
    public mutating func tick(now: Duration) -> [Action] {
        guard let due = nextDue, now >= due else { return [] }
        if departuresSinceReturn >= trimAfterDepartures, firstDeparture != nil {
            // Once more after this one, for what libzmq frees late.
            departuresSinceReturn = 0
            firstDeparture = nil
            lastDeparture = nil
            followUp = now + trimFollowUp
        } else {
            followUp = nil
        }
        memoryReturns += 1
        return [.returnFreedMemory]
    }
}
