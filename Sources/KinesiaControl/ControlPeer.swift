/// Who sent a message on the control socket, as the coordinator's ZAP handler admitted the
/// connection (the message's ZAP user id), and what it may send.
///
/// On a bus directory the socket is the user's own (a 0700 directory, a 0600 socket file): every
/// peer is trusted. Over TCP the coordinator admits the site's keys as the broker does, and:
/// - a `control` key (`kinesia keys new NAME --role control`: a therapist's `kinesia session`,
///   a clinic's back end) may send commands;
/// - a `worker` key may send a pool worker's reports;
/// - any other key (a consumer, an ingest) may send neither: its commands are answered
///   ``ControlAnswer/Outcome/notAllowed`` and counted, its reports dropped and counted.
///
/// ```swift
/// ControlPeer(userID: "control/reception", overTCP: true).mayCommand   // true
/// ControlPeer(userID: "consumer/ward-tablet", overTCP: true).mayCommand   // false
/// ```
public enum ControlPeer: Hashable, Sendable {
    /// Every right: the user's own bus directory, or a TCP bus run with `--insecure`.
    case trusted
    /// A CURVE key of a role (`control`, `worker`, `consumer`...), with its name.
    case key(role: String, name: String)
    /// A message without the user id a TCP connection's ZAP handler gives: it may send nothing.
    case unknown

    /// The peer of a ZAP user id: `ROLE/NAME` for a key, `local/UID` or `insecure` for a
    /// trusted peer; none at all is trusted only on a bus directory (`overTCP` false), where ZAP
    /// does not run.
    public init(userID: String?, overTCP: Bool) {
        guard let userID else {
            self = overTCP ? .unknown : .trusted
            return
        }
        guard let slash = userID.firstIndex(of: "/") else {
            self = userID == "insecure" ? .trusted : .unknown
            return
        }
        let role = String(userID[..<slash])
        guard role != "local" else {
            self = .trusted
            return
        }
        self = .key(role: role, name: String(userID[userID.index(after: slash)...]))
    }

    /// Whether it may command sessions (start, stop, reset, baseline, list).
    public var mayCommand: Bool {
        switch self {
        case .trusted: true
        case .key(let role, _): role == "control"
        case .unknown: false
        }
    }

    /// Whether it may report as a pool worker.
    public var mayReport: Bool {
        switch self {
        case .trusted: true
        case .key(let role, _): role == "worker"
        case .unknown: false
        }
    }

    /// `the key consumer/ward-tablet`, `a local peer`: for answers and logs.
    public var description: String {
        switch self {
        case .trusted: "a trusted peer"
        case .key(let role, let name): "the key \(role)/\(name)"
        case .unknown: "a peer without a user id"
        }
    }
}
