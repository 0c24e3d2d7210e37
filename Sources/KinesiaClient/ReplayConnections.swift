public import KinesiaBus

/// The connections of a ``ReplayServer``'s ROUTER, counted from its socket monitor, with no
/// I/O: at most ``maximumConnections`` open at once, the rest disconnected as soon as they are
/// accepted, and the heap they freed given back to the system after many left.
///
/// libzmq allocates every accepted connection its own pipes and stream buffers (about 40 KiB
/// resident here, whether or not the peer ever sends a request), and a ROUTER has no call that
/// refuses or drops a peer. ``ReplayAdmission`` bounds the peers *answered*; this bounds the
/// peers *connected*: a connection accepted while ``maximumConnections`` others are open is
/// refused (the server shuts its descriptor down, libzmq then closes it as a peer that left)
/// and counted (`replayConnectionsRefused` on `health/`). Connections open before it are never
/// touched: a flood of new ones cannot push a served client out. A refused libzmq client
/// reconnects after its reconnect interval and is refused again while the table is full.
///
/// Memory freed by libzmq stays in glibc's arenas: once at least ``trimAfterDepartures``
/// connections left and none left for ``trimQuietPeriod`` (or ``trimInterval`` passed since the
/// first of them left, for connections that never stop coming and going), ``record(_:now:)``
/// and ``tick(now:)`` ask for ``Action/returnFreedMemory``
/// (``FreedMemory``, `malloc_trim`). Time is given by the caller.
///
/// ```swift
/// var connections = ReplayConnections(maximumConnections: 256)
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

    /// The most connections open at once.
    public let maximumConnections: Int
    /// Connections that leave before the freed heap is given back.
    public let trimAfterDepartures: Int
    /// How long without a departure before the freed heap is given back.
    public let trimQuietPeriod: Duration
    /// How long at most a departure waits for the return while connections keep leaving.
    public let trimInterval: Duration

    /// Connections accepted since the start.
    public private(set) var accepted = 0
    /// Connections refused because ``maximumConnections`` were open.
    public private(set) var refused = 0
    /// Accepts that failed in libzmq (`EMFILE`: out of descriptors).
    public private(set) var acceptFailures = 0
    /// Times the freed heap was given back.
    public private(set) var memoryReturns = 0

    /// The descriptors of the connections served, open now.
    private var served: Set<Int32> = []
    /// The descriptors of refused connections not yet seen closing.
    private var refusing: Set<Int32> = []
    private var departuresSinceReturn = 0
    /// The first departure since the last return, and the latest.
    private var firstDeparture: Duration?
    private var lastDeparture: Duration?

    /// Makes an empty table.
    /// - Parameters:
    ///   - maximumConnections: The most connections open at once (at least 1).
    ///   - trimAfterDepartures: Connections that leave before the freed heap is given back.
    ///   - trimQuietPeriod: How long without a departure before it is given back.
    ///   - trimInterval: How long at most a departure waits for the return while connections
    ///     keep leaving.
    public init(
        maximumConnections: Int = 256, trimAfterDepartures: Int = 64,
        trimQuietPeriod: Duration = .seconds(1), trimInterval: Duration = .seconds(2)
    ) {
        self.maximumConnections = Swift.max(1, maximumConnections)
        self.trimAfterDepartures = Swift.max(1, trimAfterDepartures)
        self.trimQuietPeriod = trimQuietPeriod
        self.trimInterval = trimInterval
    }

    /// The connections served, open now.
    public var open: Int { served.count }

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
                if served.count < maximumConnections {
                    served.insert(descriptor)
                } else {
                    refused += 1
                    refusing.insert(descriptor)
                    refusals.append(descriptor)
                }
            case .disconnected:
                if served.remove(descriptor) == nil, refusing.remove(descriptor) == nil { continue }
                departuresSinceReturn += 1
                if firstDeparture == nil { firstDeparture = now }
                lastDeparture = now
            case .acceptFailed:
                acceptFailures += 1
            default:
                break
            }
        }
        var actions = refusals.filter { refusing.contains($0) }.map { Action.refuse(descriptor: $0) }
        actions += tick(now: now)
        return actions
    }

    /// What is due at `now` with no new event: the return of the freed heap.
    public mutating func tick(now: Duration) -> [Action] {
        guard departuresSinceReturn >= trimAfterDepartures, let firstDeparture, let lastDeparture else {
            return []
        }
        let quiet = now - lastDeparture >= trimQuietPeriod
        let overdue = now - firstDeparture >= trimInterval
        guard quiet || overdue else { return [] }
        departuresSinceReturn = 0
        self.firstDeparture = nil
        self.lastDeparture = nil
        memoryReturns += 1
        return [.returnFreedMemory]
    }
}
