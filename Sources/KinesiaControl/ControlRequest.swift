/// A command for the coordinator, from `kinesia session` or a client library, with the id
/// that makes it idempotent: the coordinator answers a request id it has seen with the answer
/// it gave, and does nothing again (a retried start never starts twice).
public struct ControlRequest: Hashable, Sendable {
    /// What is asked.
    public enum Command: Hashable, Sendable {
        /// Start a session (its ``SessionPlan/run`` is given by the coordinator).
        case start(SessionPlan)
        /// Stop a session: its run ends.
        case stop(SessionKey)
        /// End a session's run and start a new one, same plan: counts from zero.
        case reset(SessionKey)
        /// End a session's run and start a new one, same plan, that begins with a baseline
        /// measurement of `reps` clean reps (`nil`: the exercise's
        /// ``SessionRules/baselineReps``).
        case baseline(SessionKey, reps: Int?)
        /// The sessions of the site, where they run.
        case list
    }

    /// The request id: 1 to 64 letters, digits, `.`, `_` or `-`.
    public var id: String
    /// What is asked.
    public var command: Command

    /// A request.
    ///
    /// - Throws: ``ControlError/invalid(_:)`` for an id that is not a valid name.
    public init(id: String, command: Command) throws(ControlError) {
        guard ControlNames.isValid(id) else { throw .invalid(ControlNames.message(id, role: "request id")) }
        self.id = id
        self.command = command
    }

    /// The command's word: `start`, `stop`, `reset`, `baseline`, `list`.
    public var verb: String {
        switch command {
        case .start: "start"
        case .stop: "stop"
        case .reset: "reset"
        case .baseline: "baseline"
        case .list: "list"
        }
    }
}
