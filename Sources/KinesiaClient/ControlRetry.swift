/// When a ``ControlClient`` sends its request again and when it gives up: no I/O, the time
/// passed in (from the first send).
///
/// The request goes out at once, then again every ``interval`` with the same id (the
/// coordinator answers an id once, and the same answer again: a start sent twice starts once),
/// until ``timeout``; the waits between never go past the next send or the timeout.
///
/// ```swift
/// var retry = ControlRetry(timeout: .seconds(5))
/// retry.next(now: .zero)                  // .send
/// retry.next(now: .milliseconds(400))     // .wait(.milliseconds(600))
/// retry.next(now: .seconds(5))            // .giveUp
/// ```
public struct ControlRetry: Hashable, Sendable {
    /// What to do now.
    public enum Step: Hashable, Sendable {
        /// Send the request (again).
        case send
        /// Wait this long for the answer.
        case wait(Duration)
        /// No answer in time.
        case giveUp
    }

    /// How long the client waits for an answer in all.
    public let timeout: Duration
    /// The time between two sends of the request.
    public let interval: Duration
    private var nextSend: Duration = .zero

    /// A retry schedule of `timeout` in all, sending every `interval`.
    public init(timeout: Duration, interval: Duration = .seconds(1)) {
        self.timeout = timeout
        self.interval = max(.milliseconds(1), interval)
    }

    /// The step at `now`: after a `.send`, ask again for the wait.
    public mutating func next(now: Duration) -> Step {
        guard now < timeout else { return .giveUp }
        if now >= nextSend {
            nextSend = now + interval
            return .send
        }
        return .wait(max(.milliseconds(1), min(nextSend, timeout) - now))
    }
}
