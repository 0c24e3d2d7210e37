public import KinesiaMotion

/// What a session should be: the camera and name, the exercise with its thresholds, the side
/// (or both sides' analytics), the patient, and where it may run. The coordinator keeps the
/// plans of a site (its desired state) and hands each worker the plans it hosts.
///
/// The exercise is an exercise file's text (``ExerciseFile``): `{"exercise":"squat"}` for the
/// catalog's thresholds, or a therapist's file with changed ones, read the same way wherever
/// the plan goes.
public struct SessionPlan: Hashable, Sendable {
    /// What the session analyses.
    public enum Analysis: String, Hashable, Sendable, CaseIterable {
        /// The left side's motion session.
        case left
        /// The right side's motion session.
        case right
        /// Both sides' analytics (tempo, symmetry, sets).
        case analytics

        /// Reads `left`, `right` or `analytics`.
        ///
        /// - Throws: ``ControlError/invalid(_:)``.
        public init(parsing text: String) throws(ControlError) {
            guard let analysis = Analysis(rawValue: text) else {
                throw .invalid("invalid side \(text.debugDescription): use left, right or analytics")
            }
            self = analysis
        }
    }

    /// The pool a plan goes to when none is named.
    public static let defaultPool = "default"

    /// `CAMERA/NAME`.
    public var key: SessionKey
    /// The exercise file's text (`{"exercise":"ID"}` for the catalog's thresholds).
    public var exerciseFile: String
    /// The exercise, read from ``exerciseFile``.
    public private(set) var exercise: Exercise
    /// The side, or both sides' analytics.
    public var analysis: Analysis
    /// The patient's reference, as the clinic gives it (`nil`: none given).
    public var patient: String?
    /// The pool of workers that may host it.
    public var pool: String
    /// The one worker that must host it (`nil`: any live worker of the pool).
    public var worker: String?
    /// The run the coordinator gave it (`0`: not given yet); a new run is a new stream of
    /// events.
    public var run: UInt64
    /// The clean reps (or holds) of a baseline measurement the run begins with
    /// (``MotionSession/startBaseline(reps:)`` at its first pose), `nil` for a run without one.
    /// `kinesia session baseline` starts such a run; a reset or a restart of the worker does not
    /// begin another.
    public var baselineReps: Int?
    /// Whether the run begins at the first pose of its camera's stream (the first its ingest's
    /// journal still holds), whichever worker hosts it before its first pose is known: the
    /// coordinator heard no ingest publishing the camera when the session started (a camera
    /// started after its sessions). `false`: the run begins at the first pose its worker
    /// receives. Told in assignments and kept in `coordinator.db` as `"fromStreamStart":true`;
    /// a plan without it (an older coordinator's) is `false`.
    public var beginsAtStreamStart: Bool

    /// The most reps a baseline may ask for.
    public static let maximumBaselineReps = 100

    /// A plan of the catalog's `exercise` or of an exercise file's text.
    ///
    /// - Throws: ``ControlError/invalid(_:)`` for an exercise file that is not valid, a pool,
    ///   worker or patient reference that is not a valid name.
    public init(
        key: SessionKey, exerciseFile: String, analysis: Analysis, patient: String? = nil,
        pool: String = defaultPool, worker: String? = nil, run: UInt64 = 0, baselineReps: Int? = nil,
        beginsAtStreamStart: Bool = false
    ) throws(ControlError) {
        do {
            exercise = try ExerciseFile.parse(Array(exerciseFile.utf8), file: "the exercise")
        } catch {
            throw .invalid(error.message)
        }
        for (role, name) in [("pool", pool), ("worker", worker), ("patient reference", patient)] {
            if let name, !ControlNames.isValid(name) {
                throw .invalid(ControlNames.message(name, role: role))
            }
        }
        if let baselineReps { try Self.checkBaseline(reps: baselineReps) }
        self.key = key
        self.exerciseFile = exerciseFile
        self.analysis = analysis
        self.patient = patient
        self.pool = pool
        self.worker = worker
        self.run = run
        self.baselineReps = baselineReps
        self.beginsAtStreamStart = beginsAtStreamStart
    }

    /// Refuses a baseline of fewer than 1 or more than ``maximumBaselineReps`` reps.
    ///
    /// - Throws: ``ControlError/invalid(_:)``.
    public static func checkBaseline(reps: Int) throws(ControlError) {
        guard (1...maximumBaselineReps).contains(reps) else {
            throw .invalid("a baseline needs 1 to \(maximumBaselineReps) reps, not \(reps)")
        }
    }

    /// The exercise file text of a catalog exercise.
    ///
    /// - Throws: ``ControlError/invalid(_:)`` for an id the catalog does not have.
    public static func catalogExercise(_ id: String) throws(ControlError) -> String {
        guard Exercise.named(id) != nil else {
            throw .invalid(
                "unknown exercise \(id.debugDescription); valid: "
                    + Exercise.catalog.map(\.id).joined(separator: ", "))
        }
        return "{\"exercise\":\"\(id)\"}"
    }

    /// Whether `other` is this plan with the same exercise, side and patient (its run, pool
    /// and worker aside): a start that changes nothing.
    public func isSameSession(as other: SessionPlan) -> Bool {
        key == other.key && exercise == other.exercise && analysis == other.analysis
            && patient == other.patient
    }
}
