extension MotionSnapshot {
    /// A snapshot as a checkpoint holds it: every field, the setup issues in
    /// ``SetupIssue/allCases`` order (a set's own order changes from process to process).
    struct Checkpoint: Codable, Hashable, Sendable {
        var value: Double?
        var best: Double
        var repCount: Int
        var rejectedCount: Int
        var lastRep: Rep?
        var holdProgress: Double?
        var confidence: Double?
        var setupIssues: [SetupIssue]
        var isVisible: Bool
        var missingJoints: [Joint]
        var isRunning: Bool
        var baseline: BaselineProgress?
    }

    /// The snapshot, as ``init(restoring:)`` takes it back.
    var checkpoint: Checkpoint {
        Checkpoint(
            value: value, best: best, repCount: repCount, rejectedCount: rejectedCount, lastRep: lastRep,
            holdProgress: holdProgress, confidence: confidence,
            setupIssues: SetupIssue.allCases.filter(setupIssues.contains), isVisible: isVisible,
            missingJoints: missingJoints, isRunning: isRunning, baseline: baseline)
    }

    /// The snapshot of `checkpoint`.
    init(restoring checkpoint: Checkpoint) {
        self.init()
        value = checkpoint.value
        best = checkpoint.best
        repCount = checkpoint.repCount
        rejectedCount = checkpoint.rejectedCount
        lastRep = checkpoint.lastRep
        holdProgress = checkpoint.holdProgress
        confidence = checkpoint.confidence
        setupIssues = Set(checkpoint.setupIssues)
        isVisible = checkpoint.isVisible
        missingJoints = checkpoint.missingJoints
        isRunning = checkpoint.isRunning
        baseline = checkpoint.baseline
    }
}
