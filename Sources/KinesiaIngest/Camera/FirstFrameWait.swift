/// The wait for the pose detector's first frame, as a value: the time is passed in.
///
/// The ingest reads the detector's output until its first item or until `timeout` has passed
/// since the wait started; then it goes on with the detector still running (a camera slow to
/// start sends its frames later), rather than failing.
///
/// ```swift
/// let wait = FirstFrameWait(timeout: .seconds(60), startedAt: elapsed.now)
/// while wait.decision(at: elapsed.now) == .read { read(timeout: .milliseconds(100)) }
/// ```
struct FirstFrameWait: Hashable, Sendable {
    /// What the waiting side does next.
    enum Decision: Hashable, Sendable {
        /// Read the detector's output again.
        case read
        /// The timeout has passed with no frame: stop waiting and go on, the detector left running.
        case goOn
    }

    /// When the wait ends, on the caller's clock.
    let deadline: Duration

    /// A wait of `timeout` from `now`.
    init(timeout: Duration, startedAt now: Duration) {
        deadline = now + timeout
    }

    /// What to do at `now`: read until the deadline, go on from it.
    func decision(at now: Duration) -> Decision {
        now < deadline ? .read : .goOn
    }
}
