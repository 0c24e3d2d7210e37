/// What a key may do on the bus: the role written in its key files and the directory of the
/// broker's allowed keys it sits in (`allowed/<role>/`).
///
/// ```swift
/// BusRole(rawValue: "worker")                       // .worker
/// BusRights.verdict(for: .role(.worker), topic: Array("event/cam0/left/".utf8))   // .forward
/// ```
public enum BusRole: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// A camera ingest: publishes `pose/` (and its `health/`).
    case ingest
    /// A worker: publishes `event/` and `snapshot/` (and its `health/`); subscribes to poses.
    case worker
    /// A consumer (`listen`, `watch`, `status`, an application): only subscribes.
    case consumer
    /// The broker: its key pair is the CURVE server's; it publishes its own `health/`.
    case broker
    /// People and programs allowed to command sessions through the coordinator (`kinesia
    /// session`, a clinic's back end): on the broker's ports a consumer's rights (subscribe, and
    /// its own `health/`); on the coordinator's control socket, commands.
    case control

    /// The raw value (`ingest`...).
    public var description: String { rawValue }

    /// `an ingest`, `a worker`...: the role with its article, for sentences.
    public var withArticle: String { EnglishArticle.prefixed(rawValue) }

    /// `ingest, worker, consumer, broker, control`, for messages.
    public static var choices: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// Who sent a message through the broker, as the broker's ZAP handler admitted the connection.
public enum BusPeer: Hashable, Sendable {
    /// A CURVE key of the role given by the broker's allowed-keys directory.
    case role(BusRole)
    /// A peer every right is given to: the broker's own user over IPC, or anyone over a TCP bus
    /// started with `--insecure`.
    case trusted
}
