/// The analysis core: a value-type state machine that takes poses and returns events.
///
/// `MotionAnalyzer` implements every session rule of the catalog: One Euro smoothing of the
/// primary measure with outlier rejection, arming, rep and hold judging, form faults, visibility
/// and setup checks with their debouncing, the baseline, `best` and `confidence`. It is a pure
/// function of the pose sequence: time comes only from ``Pose/timestamp``, so the same poses
/// give the same events, byte for byte. ``MotionSession`` is a thin shell over it; a worker
/// process drives it straight from its socket loop.
///
/// Bad input never crashes it and never changes its state: a pose with a NaN or infinite value,
/// a timestamp that goes back, repeats or is absurd (beyond ±10^10 s), or coordinates absurdly far
/// outside the image is dropped and counted in ``rejectedPoses``. One timestamp far ahead of the
/// others cannot poison the session either: a pose more than ``SessionRules/suspectTimeJump``
/// after the last accepted one is held until the next pose says whether time jumped (it is later
/// still: the held pose is analysed first, as after any gap) or the held pose was an outlier (it
/// is earlier: the held pose is dropped as ``PoseRejections/Reason/timestampOutlier``). The
/// events of a held pose come out with those of the pose that confirmed it.
///
/// ```swift
/// var analyzer = MotionAnalyzer(exercise: .shoulderFlexion, side: .left)
/// for pose in poses {
///     for event in analyzer.process(pose) {
///         print(event)
///     }
/// }
/// print(analyzer.snapshot.repCount)
/// ```
///
/// In steady state ``process(_:)-(Pose)`` does not allocate: it returns `[]` when a pose has no
/// event, and reads joints from flat storage prepared once.
public struct MotionAnalyzer: Sendable {
    /// The exercise being analysed.
    public let exercise: Exercise
    /// The side of the body being analysed.
    public let side: BodySide
    /// Everything a screen needs. `isRunning` belongs to what hosts the analyzer
    /// (``MotionSession``, a worker) and stays `false` here.
    public internal(set) var snapshot = MotionSnapshot()
    /// The raw (unsmoothed) primary measure of the last accepted pose, in degrees; `nil` when it
    /// was not measurable. Outliers show here even while they are held out of ``snapshot``.
    public internal(set) var rawValue: Double?
    /// How many poses were dropped as bad input, per reason.
    public internal(set) var rejectedPoses = PoseRejections()
    /// The timestamp of the last pose the analysis accepted, or `nil` before the first one (and
    /// after ``restartTimeBase()``). A pose that is rejected or held does not change it.
    public internal(set) var lastAcceptedTime: Double?
    /// Whether a pose far ahead in time is held, waiting for the next pose to confirm it or show
    /// it an outlier (see ``SessionRules/suspectTimeJump``).
    public var isHoldingPose: Bool { heldPose != nil }

    /// The joints the exercise needs on ``side`` (its measure and its form rules), in
    /// ``Joint`` order: the joints of ``MotionSnapshot/missingJoints``.
    public var requiredJoints: [Joint] { required }

    /// How the rep or hold under way is doing.
    struct Attempt: Sendable, Hashable, Codable {
        var start: Double
        var peak: Double
        var faults: [FormFeedback] = []
        /// Holds: since when the value is below the break level.
        var belowSince: Double?
    }

    /// Where the counting stands.
    enum State: Sendable, Hashable, Codable {
        /// Not armed: nothing counts until the value comes down to the rest level.
        case waitingForRest
        /// Armed: a rise to the start level starts a rep or a hold.
        case ready
        /// A rep under way.
        case rep(Attempt)
        /// A hold under way.
        case hold(Attempt)
    }

    /// The exercise's counting rule, resolved once.
    private enum Counting: Sendable {
        case reps(minPeak: Double)
        case hold(seconds: Double, breakLevel: Double)
    }

    private let required: [Joint]
    private let requiredMask: UInt32
    private let primary: MeasureKernel
    private let counting: Counting
    /// A rep or hold starts when the value rises to this level.
    private let startLevel: Double
    /// The value at or below this level arms the session and ends a rep.
    private let restLevel: Double
    /// The exercise's session rules, with ``SessionRules/timeTolerance`` applied to its times.
    private let rules: SessionRules
    private let setupCheck: SetupCheck

    var state: State = .waitingForRest
    var trackers: [FormRuleTracker]
    private var frame = PoseFrame()
    var signal: PrimarySignal
    /// A sound pose far ahead of ``lastAcceptedTime``, not analysed yet.
    var heldPose: FlatPose?
    /// Whether ``MotionSnapshot/best`` holds a value seen since the last reset (its 0 before
    /// that is a placeholder, which a negative value must replace).
    var hasBest = false
    var visibility: Debouncer
    var setup = Debouncer(current: 0)

    /// Creates an analyzer for `exercise` on `side`.
    /// - Parameters:
    ///   - exercise: The exercise, with its thresholds and session rules.
    ///   - side: The side of the body to measure.
    public init(exercise: Exercise, side: BodySide) {
        self.exercise = exercise
        self.side = side
        required = exercise.requiredJoints(side: side)
        requiredMask = required.mask
        primary = MeasureKernel(exercise.measure, side: side)
        rules = exercise.sessionRules.withTimeTolerance()
        switch exercise.kind {
        case .reps(let start, let end, let minPeak):
            counting = .reps(minPeak: minPeak)
            startLevel = start
            restLevel = end
        case .hold(let threshold, let seconds):
            // A hold has no end level: the level that breaks a hold is also the one that
            // arms the next (the patient came out of the position).
            let breakLevel = threshold - exercise.sessionRules.holdBreakMargin
            counting = .hold(seconds: seconds, breakLevel: breakLevel)
            startLevel = threshold
            restLevel = breakLevel
        }
        trackers = exercise.formRules.map { FormRuleTracker($0, side: side) }
        signal = PrimarySignal(rules: rules)
        setupCheck = SetupCheck(exercise: exercise, requiredMask: requiredMask)
        // Nothing seen yet: every required joint is missing.
        visibility = Debouncer(current: requiredMask)
        snapshot.missingJoints = required
    }

    /// Analyses one pose and returns its events, in order (`[]` when nothing happened).
    ///
    /// Poses must come in capture order. A pose that breaks the pose contract (non-finite
    /// values, a timestamp not after the previous accepted one or beyond ±10^10 s, absurd
    /// coordinates) is dropped:
    /// it is counted in ``rejectedPoses`` and changes nothing else. A pose more than
    /// ``SessionRules/suspectTimeJump`` after the previous accepted one is held (it returns `[]`
    /// and changes nothing) until the next pose confirms it (its events then come with that
    /// pose's) or shows it an outlier (``PoseRejections/Reason/timestampOutlier``).
    public mutating func process(_ pose: Pose) -> [MotionEvent] {
        process(FlatPose(pose))
    }

    /// Analyses one pose already in flat form and returns its events, in order (`[]` when
    /// nothing happened).
    ///
    /// This is ``process(_:)-(Pose)`` without the dictionaries: the same checks, the same
    /// analysis, the same results for the same pose (``process(_:)-(Pose)`` converts its pose
    /// and calls this). Decode a pose once into a ``FlatPose`` and pass it to every analyzer that
    /// needs it; no allocation when nothing happened.
    public mutating func process(_ pose: FlatPose) -> [MotionEvent] {
        if let reason = frame.load(pose) {
            rejectedPoses.record(reason)
            return []
        }
        let time = pose.timestamp
        if let lastAcceptedTime, !(time > lastAcceptedTime) {
            rejectedPoses.record(.timestampNotIncreasing)
            return []
        }
        var events: [MotionEvent] = []
        if let held = heldPose {
            heldPose = nil
            if time > held.timestamp {
                // Time goes on from the held pose: it was a gap, not an outlier. The held pose
                // passed the checks when it came; analysed first, then this one.
                _ = frame.load(held)
                analyze(at: held.timestamp, events: &events)
                _ = frame.load(pose)
            } else {
                // Back to the time before the jump: the held pose was the odd one out.
                rejectedPoses.record(.timestampOutlier)
            }
        }
        if let lastAcceptedTime, time - lastAcceptedTime > rules.suspectTimeJump {
            heldPose = pose
            return events
        }
        analyze(at: time, events: &events)
        return events
    }

    /// Ends the input: a pose still held (a jump ahead in time that no later pose confirmed) is
    /// dropped as ``PoseRejections/Reason/timestampOutlier``. Call it when the poses are over (the
    /// end of a recording); the analyzer takes poses again afterwards.
    public mutating func finish() {
        guard heldPose != nil else { return }
        heldPose = nil
        rejectedPoses.record(.timestampOutlier)
    }

    /// Starts the time base over, keeping what was counted: for a pose source whose clock
    /// started again (a recording replayed, a detector restarted with its clock at zero), whose
    /// poses would all be dropped as going back in time.
    ///
    /// Kept: the rep counts, ``MotionSnapshot/best``, the last rep, the baseline under way or
    /// completed, and ``rejectedPoses``. Started over as at the beginning of a session:
    /// everything that depends on time (smoothing, the rep or hold under way, which is dropped
    /// without an event, arming, the debouncing of visibility and setup, a held pose, which
    /// counts as ``PoseRejections/Reason/timestampOutlier``, and ``lastAcceptedTime``).
    public mutating func restartTimeBase() {
        finish()
        var fresh = MotionAnalyzer(exercise: exercise, side: side)
        fresh.snapshot.repCount = snapshot.repCount
        fresh.snapshot.rejectedCount = snapshot.rejectedCount
        fresh.snapshot.best = snapshot.best
        fresh.hasBest = hasBest
        fresh.snapshot.lastRep = snapshot.lastRep
        fresh.snapshot.baseline = snapshot.baseline
        fresh.rejectedPoses = rejectedPoses
        self = fresh
    }

    /// Analyses the pose in ``frame``, taken at `time` (after ``lastAcceptedTime``).
    private mutating func analyze(at time: Double, events: inout [MotionEvent]) {
        lastAcceptedTime = time
        let raw = primary.value(in: frame)
        rawValue = raw
        let lastMeasured = signal.lastMeasuredTime
        let value = signal.update(raw, at: time)
        snapshot.value = value
        if let value, !hasBest || value > snapshot.best {
            snapshot.best = value
            hasBest = true
        }
        snapshot.confidence = frame.lowestConfidence(in: primary.mask)

        advance(value, at: time, lastMeasured: lastMeasured, events: &events)
        updateVisibility(at: time, events: &events)
        updateSetup(at: time, events: &events)
    }

    /// Starts over: rep counts, `best`, the last rep, the baseline and any rep or hold under way
    /// go back to zero.
    ///
    /// What the analyzer knows about the pose stream stays: the smoothed value, visibility,
    /// setup issues, ``rejectedPoses``, the last timestamp (a pose going back in time is
    /// still bad input) and a held pose. If the value is above the rest level (mid-movement), nothing counts
    /// until it comes back down, as at the start of a session.
    public mutating func reset() {
        snapshot.best = 0
        hasBest = false
        snapshot.repCount = 0
        snapshot.rejectedCount = 0
        snapshot.lastRep = nil
        snapshot.holdProgress = nil
        snapshot.baseline = nil
        if let value = snapshot.value, value <= restLevel {
            state = .ready
        } else {
            state = .waitingForRest
        }
    }

    /// Starts a baseline measurement: the next `reps` clean reps (or holds); the baseline is
    /// the highest peak among them. Progress shows in ``MotionSnapshot/baseline``, and
    /// ``MotionEvent/baselineCompleted(_:)`` ends it. Starting again replaces a baseline under way.
    /// - Parameter reps: Clean reps to measure; `nil` for the exercise's default
    ///   (``SessionRules/baselineReps``). At least 1.
    public mutating func startBaseline(reps: Int? = nil) {
        let target = max(1, reps ?? exercise.sessionRules.baselineReps)
        snapshot.baseline = BaselineProgress(completed: 0, target: target, value: nil)
    }

    // MARK: - Reps and holds

    /// Moves the counting on with the pose's smoothed `value` (`nil`: not measurable);
    /// `lastMeasured` is the time of the previous pose whose primary measure was measurable.
    private mutating func advance(
        _ value: Double?, at time: Double, lastMeasured: Double?, events: inout [MotionEvent]
    ) {
        if let lastMeasured, time - lastMeasured > rules.abandonAfterMissing {
            // The measured joints were gone (missing, or no pose at all) for too long: abandon
            // what was under way, and count nothing until the patient is back at rest (as at the
            // start of a session). A hold under way, or one completed, has ended.
            snapshot.holdProgress = nil
            state = .waitingForRest
            guard value != nil else { return }
        }
        switch state {
        case .waitingForRest:
            if let value, value <= restLevel {
                // Out of the position: a completed hold's progress (1) ends here.
                snapshot.holdProgress = nil
                state = .ready
            }
        case .ready:
            if let value, value >= startLevel { begin(value, at: time, events: &events) }
        case .rep(var attempt):
            checkRules(&attempt, at: time, events: &events)
            if time - attempt.start > rules.maximumRepDuration {
                // Too long: dropped without an event; wait for the patient to come back to rest.
                state = .waitingForRest
                return
            }
            guard let value else {
                state = .rep(attempt)
                return
            }
            attempt.peak = max(attempt.peak, value)
            if value <= restLevel {
                state = .ready
                finishRep(attempt, at: time, events: &events)
            } else {
                state = .rep(attempt)
            }
        case .hold(var attempt):
            checkRules(&attempt, at: time, events: &events)
            guard let value, case .hold(let seconds, let breakLevel) = counting else {
                state = .hold(attempt)
                return
            }
            attempt.peak = max(attempt.peak, value)
            if value < breakLevel {
                let since = attempt.belowSince ?? time
                attempt.belowSince = since
                if time - since >= rules.holdBreakTime {
                    // Broken: nothing counted; the value is below the break level, so armed.
                    snapshot.holdProgress = nil
                    state = .ready
                    return
                }
            } else {
                attempt.belowSince = nil
            }
            let elapsed = time - attempt.start
            if elapsed >= seconds - SessionRules.timeTolerance {
                // Full, and kept full while the patient stays in the position.
                snapshot.holdProgress = 1
                state = .waitingForRest
                judge(
                    Rep(peak: attempt.peak, faults: attempt.faults, start: attempt.start, end: time),
                    events: &events)
            } else {
                snapshot.holdProgress = seconds > 0 ? min(1, max(0, elapsed / seconds)) : 1
                state = .hold(attempt)
            }
        }
    }

    private mutating func begin(_ value: Double, at time: Double, events: inout [MotionEvent]) {
        var attempt = Attempt(start: time, peak: value)
        for index in trackers.indices { trackers[index].begin(frame) }
        checkRules(&attempt, at: time, events: &events)
        switch counting {
        case .reps:
            state = .rep(attempt)
        case .hold:
            events.append(.holdStarted)
            snapshot.holdProgress = 0
            state = .hold(attempt)
        }
    }

    private mutating func checkRules(_ attempt: inout Attempt, at time: Double, events: inout [MotionEvent]) {
        for index in trackers.indices {
            if let fault = trackers[index].check(frame, at: time, persistence: rules.faultPersistence) {
                attempt.faults.append(fault)
                events.append(.formFault(fault))
            }
        }
    }

    private mutating func finishRep(_ attempt: Attempt, at time: Double, events: inout [MotionEvent]) {
        guard case .reps(let minPeak) = counting else { return }
        let duration = time - attempt.start
        // Invalid reps are dropped without an event.
        guard duration >= rules.minimumRepDuration, duration <= rules.maximumRepDuration,
            attempt.peak >= minPeak
        else { return }
        judge(
            Rep(peak: attempt.peak, faults: attempt.faults, start: attempt.start, end: time), events: &events)
    }

    private mutating func judge(_ rep: Rep, events: inout [MotionEvent]) {
        snapshot.lastRep = rep
        guard rep.isClean else {
            snapshot.rejectedCount &+= 1
            events.append(.repRejected(rep))
            return
        }
        snapshot.repCount &+= 1
        events.append(.repCompleted(rep))
        if var baseline = snapshot.baseline, !baseline.isComplete {
            baseline.completed += 1
            baseline.value = max(baseline.value ?? rep.peak, rep.peak)
            snapshot.baseline = baseline
            if baseline.isComplete, let value = baseline.value {
                events.append(.baselineCompleted(value))
            }
        }
    }

    // MARK: - Visibility and setup

    private mutating func updateVisibility(at time: Double, events: inout [MotionEvent]) {
        let missing = requiredMask & ~frame.present
        guard visibility.observe(missing, at: time, after: rules.visibilityDebounce) else { return }
        let change = Visibility(
            isVisible: missing == 0, missingJoints: required.filter { missing & $0.bit != 0 })
        snapshot.isVisible = change.isVisible
        snapshot.missingJoints = change.missingJoints
        events.append(.visibilityChanged(change))
    }

    private mutating func updateSetup(at time: Double, events: inout [MotionEvent]) {
        guard frame.present != 0 else {
            // Nobody in view: placement cannot be judged; a pending change was not stable.
            setup.interrupt()
            return
        }
        let issues = setupCheck.issues(in: frame)
        guard setup.observe(issues, at: time, after: rules.setupDebounce) else { return }
        let change = SetupIssue.set(from: issues)
        snapshot.setupIssues = change
        events.append(.setupChanged(change))
    }
}
