public import KinesiaBus
public import KinesiaClient
public import KinesiaPublishJournal
public import KinesiaService
public import KinesiaWire

/// Why an ingest (``IngestService``) stopped before its source's end: what failed, with the
/// error underneath.
///
/// ```swift
/// do {
///     try service.run(until: stop)
/// } catch .source(let error) {
///     print("the source failed: \(error)")
/// } catch {
///     print(error)  // the bus, the state directory, the replay
/// }
/// ```
public enum IngestServiceError: ServiceError, Hashable, Sendable {
    /// The source failed, or held no usable pose.
    case source(PoseSourceError)
    /// The state directory or the journal in it cannot be used.
    case journal(PublishJournalError)
    /// The bus (named) failed: its sockets could not be made, connected or used.
    case bus(String, ZMQError)
    /// The journal's replay cannot be served: its endpoint (named) cannot be bound.
    case replay(String, ZMQError)
    /// The journal's replay has no endpoint on this bus.
    case replayEndpoint(BusAddressError)
    /// The process name cannot name a `health/` topic.
    case processName(TopicError)

    /// What failed, for the user.
    public var description: String {
        switch self {
        case .source(let error): error.description
        case .journal(let error): error.description
        case .bus(let bus, let error): "the bus \(bus) failed: \(error)"
        case .replay(let endpoint, let error):
            "the journal's replay cannot be served on \(endpoint): \(error)"
        case .replayEndpoint(let error): "the journal's replay has no endpoint: \(error)"
        case .processName(let error): error.description
        }
    }

    /// A source or a state directory that cannot be one is the caller's mistake; the rest are
    /// failures.
    public var isUsageError: Bool {
        switch self {
        case .source(let error): error.isUsageError
        case .journal(let error): error.isUsageError
        case .bus, .replay, .replayEndpoint, .processName: false
        }
    }
}
