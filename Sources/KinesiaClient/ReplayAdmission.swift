/// Which replay clients a ``ReplayServer`` answers, with no I/O: at most ``maximumClients``
/// peers at once, each forgotten after ``idleTimeout`` without a request.
///
/// Every request a server answers queues a batch for its client in libzmq until the client
/// reads it (about 50 KiB of poses), so the number of clients answered bounds the server's
/// memory. A request from a peer not known while ``maximumClients`` others are is refused
/// (the server sends nothing; the client asks again after its timeout, and is admitted once a
/// peer was forgotten) and counted (`replayRefused` on `health/`). A known peer is always
/// answered. Time is given by the caller.
///
/// ```swift
/// var admission = ReplayAdmission(maximumClients: 256, idleTimeout: .seconds(30))
/// if admission.admit(identity, now: clock.now - origin) { answer(request) }
/// ```
public struct ReplayAdmission: Sendable {
    /// The most peers served at once.
    public let maximumClients: Int
    /// How long a peer without a request is remembered.
    public let idleTimeout: Duration
    /// Requests refused because ``maximumClients`` peers were known.
    public private(set) var refused = 0
    /// Peers forgotten after ``idleTimeout`` without a request.
    public private(set) var forgotten = 0

    private var lastRequest: [[UInt8]: Duration] = [:]
    private var lastExpiry: Duration?

    /// Makes an empty admission.
    /// - Parameters:
    ///   - maximumClients: The most peers served at once (at least 1).
    ///   - idleTimeout: How long a peer without a request is remembered.
    public init(maximumClients: Int = 256, idleTimeout: Duration = .seconds(30)) {
        self.maximumClients = Swift.max(1, maximumClients)
        self.idleTimeout = idleTimeout
    }

    /// The peers known now.
    public var clients: Int { lastRequest.count }

    /// Whether the request of `peer` (its routing identity) at `now` is answered.
    public mutating func admit(_ peer: [UInt8], now: Duration) -> Bool {
        if lastRequest[peer] != nil {
            lastRequest[peer] = now
            return true
        }
        if lastRequest.count >= maximumClients { expire(now: now, force: true) }
        guard lastRequest.count < maximumClients else {
            refused += 1
            return false
        }
        lastRequest[peer] = now
        return true
    }

    /// Forgets the peers idle for ``idleTimeout`` (looked at most once a second unless the
    /// table is full).
    /// - Returns: How many were forgotten.
    @discardableResult
    public mutating func expire(now: Duration, force: Bool = false) -> Int {
        if !force, let lastExpiry, now - lastExpiry < .seconds(1) { return 0 }
        lastExpiry = now
        let before = lastRequest.count
        lastRequest = lastRequest.filter { now - $0.value < idleTimeout }
        forgotten += before - lastRequest.count
        return before - lastRequest.count
    }
}
