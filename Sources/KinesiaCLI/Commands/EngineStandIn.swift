// TEMPORARY (branch recordings only): a stand-in with the API of helper "engine"'s
// `MotionAnalyzer`, so that the CLI compiles and its parsing can be tested before the engine
// lands on main. It is deleted, and `Analyzer` pointed at `MotionAnalyzer`, on `git merge main`.
import KinesiaMotion

struct MotionAnalyzer: Sendable {
    let exercise: Exercise
    let side: BodySide
    private(set) var snapshot = MotionSnapshot()
    private(set) var rawValue: Double?

    init(exercise: Exercise, side: BodySide) {
        self.exercise = exercise
        self.side = side
    }

    mutating func process(_ pose: Pose) -> [MotionEvent] {
        rawValue = exercise.measure.value(in: pose, side: side)
        snapshot.value = rawValue
        if let rawValue, rawValue > snapshot.best { snapshot.best = rawValue }
        return []
    }

    mutating func startBaseline(reps: Int? = nil) {
        snapshot.baseline = BaselineProgress(completed: 0, target: reps ?? 3, value: nil)
    }
}
