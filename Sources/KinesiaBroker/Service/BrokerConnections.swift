import KinesiaBus

/// The connections of the broker, counted from its sockets' monitors: what `health/broker/`
/// reports (`connections`, `connectionsAccepted`, `acceptFailures`) and when to warn. A value
/// with no I/O.
struct BrokerConnections {
    /// The process's file descriptor limit.
    let descriptorLimit: Int
    /// Connections open now (both sides).
    private(set) var open = 0
    /// Connections accepted since the start.
    private(set) var accepted = 0
    /// Accepts that failed (`EMFILE`: out of file descriptors).
    private(set) var acceptFailures = 0
    private var warnedNearLimit = false
    private var warnedAcceptFailure = false

    init(descriptorLimit: Int) {
        self.descriptorLimit = descriptorLimit
    }

    /// Counts one monitor event.
    /// - Parameters:
    ///   - kind: The event.
    ///   - openDescriptors: The descriptors the process has open (connections, and the
    ///     context's own), asked for on an accepted connection until the warning was given.
    /// - Returns: A warning to log, at most once per kind: the open descriptors near the limit
    ///   (90%), or the first accept that failed.
    mutating func record(_ kind: SocketEvent.Kind, openDescriptors: () -> Int) -> String? {
        switch kind {
        case .accepted:
            accepted += 1
            open += 1
            if !warnedNearLimit, openDescriptors() >= descriptorLimit - descriptorLimit / 10 {
                warnedNearLimit = true
                return "\(open) connections open, near the limit of \(descriptorLimit) file descriptors: "
                    + "new connections will be refused (raise LimitNOFILE, or look for a connection flood)"
            }
        case .disconnected:
            open = max(0, open - 1)
        case .acceptFailed:
            acceptFailures += 1
            if !warnedAcceptFailure {
                warnedAcceptFailure = true
                return "a connection was refused: \(open) connections open, at most \(descriptorLimit) "
                    + "file descriptors (counted in acceptFailures)"
            }
        default: break
        }
        return nil
    }

    /// The counters of `health/broker/`.
    var counters: [String: Int] {
        ["connections": open, "connectionsAccepted": accepted, "acceptFailures": acceptFailures]
    }
}
