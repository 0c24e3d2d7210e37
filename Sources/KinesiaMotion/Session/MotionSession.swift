public import Observation

/// A live analysis session: feed it poses, draw its ``snapshot``, react to its ``events(bufferingPolicy:)``.
///
/// `MotionSession` is a thin shell over ``MotionAnalyzer`` (which does all the analysis, with
/// time only from pose timestamps): it keeps the observable snapshot on the main actor, fans
/// events out to any number of listeners, and can read a ``PoseProvider`` for you.
///
/// ```swift
/// let session = MotionSession(exercise: .shoulderFlexion, side: .left)
/// session.start(with: camera)
/// for await event in session.events() {
///     if case .repCompleted(let rep) = event { print(Int(rep.peak)) }
/// }
/// ```
///
/// Two sessions can share one pose loop (both sides with one camera):
///
/// ```swift
/// for await pose in camera.poses() {
///     left.process(pose)
///     right.process(pose)
/// }
/// ```
@MainActor
@Observable
public final class MotionSession {
    /// The exercise being analysed.
    public let exercise: Exercise
    /// The side of the body being analysed.
    public let side: BodySide
    /// Everything a screen needs, in one value (observable).
    public private(set) var snapshot: MotionSnapshot

    @ObservationIgnored private var analyzer: MotionAnalyzer
    @ObservationIgnored private let fanOut = EventFanOut<MotionEvent>()
    @ObservationIgnored private var reader: Task<Void, Never>?
    /// Identifies the current reading (``start(with:)`` or ``run(with:)``), so that a reading
    /// that ends after another began does not clear `isRunning`.
    @ObservationIgnored private var generation = 0
    /// `snapshot.isRunning`, kept apart so that publishing a pose's snapshot does not read the
    /// observed property (an observation access per pose).
    @ObservationIgnored private var running = false

    /// Creates a session for `exercise` on `side`.
    /// - Parameters:
    ///   - exercise: The exercise, with its thresholds.
    ///   - side: The side of the body to measure.
    public init(exercise: Exercise, side: BodySide) {
        self.exercise = exercise
        self.side = side
        analyzer = MotionAnalyzer(exercise: exercise, side: side)
        snapshot = analyzer.snapshot
    }

    deinit {
        reader?.cancel()
        fanOut.finishAll()
    }

    /// How many poses were dropped as bad input, per reason (not observed).
    public var rejectedPoses: PoseRejections { analyzer.rejectedPoses }

    /// A new stream of this session's events, for one listener.
    ///
    /// Every caller gets its own stream with every event emitted after the call; listeners do
    /// not disturb each other. The stream ends when its listener stops iterating (or its task
    /// is cancelled), which removes the listener, or when the session goes away.
    ///
    /// ```swift
    /// for await event in session.events() {
    ///     switch event {
    ///     case .repCompleted(let rep): voice.say("\(Int(rep.peak)) degrees")
    ///     case .repRejected(let rep): voice.say(text(for: rep.faults.first))
    ///     case .formFault(let fault): voice.say(text(for: fault))   // live cue
    ///     case .holdStarted: voice.say("Hold it")
    ///     case .visibilityChanged(let v): voice.say(v.isVisible ? "I can see you" : "Show yourself")
    ///     case .setupChanged(let issues): if let issue = issues.first { voice.say(text(for: issue)) }
    ///     case .baselineCompleted(let value): saveBaseline(value)
    ///     }
    /// }
    /// ```
    ///
    /// Buffering: events wait in the stream until the listener reads them. By default a
    /// listener that falls more than 1024 events behind loses the *oldest* ones
    /// (`.bufferingNewest(1024)`): events come a few per rep, so that is minutes of backlog, and
    /// a stalled listener never makes the session grow without bound.
    /// - Parameter bufferingPolicy: What the stream keeps when its listener falls behind.
    public func events(
        bufferingPolicy: AsyncStream<MotionEvent>.Continuation.BufferingPolicy = .bufferingNewest(1024)
    ) -> AsyncStream<MotionEvent> {
        fanOut.stream(bufferingPolicy: bufferingPolicy)
    }

    /// Analyses one pose: updates ``snapshot``, emits the pose's events to every listener, and
    /// returns them.
    ///
    /// If you already have your own pose loop, skip ``start(with:)`` and call this:
    ///
    /// ```swift
    /// let events = session.process(pose)
    /// ```
    /// - Parameter pose: The next pose, in capture order.
    /// - Returns: The pose's events, in order (`[]` when nothing happened).
    @discardableResult
    public func process(_ pose: Pose) -> [MotionEvent] {
        let events = analyzer.process(pose)
        publish(events)
        return events
    }

    /// Starts reading `provider` in a task the session owns, analysing every pose, until the
    /// source ends or ``stop()`` is called. A reading already under way is stopped first.
    ///
    /// This is the one task the session creates (the seeds' `start(with:)` returns at once):
    /// it runs on the main actor, and ``stop()`` cancels it, which ends the provider's stream.
    /// To manage the task yourself, use ``run(with:)``.
    ///
    /// A session's time only goes forward, across readings and ``reset()``: a camera's clock
    /// does, but a second recording that starts again at 0 has its poses dropped as going back
    /// in time (``rejectedPoses``) until they pass the last one read. Give it a new session.
    public func start(with provider: some PoseProvider) {
        stop()
        generation &+= 1
        let reading = generation
        setRunning(true)
        reader = Task { [weak self] in
            for await pose in provider.poses() {
                guard let self else { return }
                self.process(pose)
            }
            self?.finishReading(reading)
        }
    }

    /// Stops reading the provider given to ``start(with:)`` (its stream ends, so a camera
    /// turns off), or ends a ``run(with:)`` at its source's next pose. The counts stay;
    /// ``process(_:)`` still works.
    public func stop() {
        reader?.cancel()
        reader = nil
        generation &+= 1
        setRunning(false)
    }

    /// Reads `provider` and analyses every pose until the source ends or the calling task is
    /// cancelled; the async form of ``start(with:)``. Useful when you manage the task
    /// yourself, or in tests.
    ///
    /// A session reads one source at a time: a reading started with ``start(with:)`` is
    /// stopped first, and this one returns when ``stop()`` is called or another reading starts
    /// (at its source's next pose, which it does not analyse).
    ///
    /// ```swift
    /// let recording = try JSONLinesRecording(contentsOf: url)
    /// await session.run(with: recording)
    /// print(session.snapshot.repCount)
    /// ```
    public func run(with provider: some PoseProvider) async {
        reader?.cancel()
        reader = nil
        generation &+= 1
        let reading = generation
        setRunning(true)
        for await pose in provider.poses() {
            // Stopped, or another reading began: its poses must not mix with this source's.
            guard generation == reading else { break }
            process(pose)
        }
        finishReading(reading)
    }

    /// Starts over: rep counts, `best`, the last rep and the baseline go back to zero (see
    /// ``MotionAnalyzer/reset()``).
    public func reset() {
        analyzer.reset()
        publish([])
    }

    /// Starts a baseline measurement of `reps` clean reps (or holds); see
    /// ``MotionAnalyzer/startBaseline(reps:)``.
    /// - Parameter reps: Clean reps to measure; `nil` for the exercise's default.
    public func startBaseline(reps: Int? = nil) {
        analyzer.startBaseline(reps: reps)
        publish([])
    }

    private func publish(_ events: [MotionEvent]) {
        var next = analyzer.snapshot
        next.isRunning = running
        // The observable setter compares the values itself (MotionSnapshot is Equatable) and
        // notifies observers only on a change.
        snapshot = next
        fanOut.send(events)
    }

    private func setRunning(_ running: Bool) {
        self.running = running
        if snapshot.isRunning != running { snapshot.isRunning = running }
    }

    private func finishReading(_ reading: Int) {
        guard generation == reading else { return }
        // The source ended: a pose held as a jump ahead in time that nothing confirmed is dropped.
        analyzer.finish()
        reader = nil
        setRunning(false)
    }
}

extension MotionSession {
    /// The number of streams from ``events(bufferingPolicy:)`` still attached (for tests and diagnostics).
    var listenerCount: Int { fanOut.listenerCount }
}
