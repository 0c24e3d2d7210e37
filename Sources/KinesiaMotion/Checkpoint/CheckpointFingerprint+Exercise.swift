extension CheckpointFingerprint {
    /// Adds every field of `exercise` that the analysis reads.
    ///
    /// Keep in step with ``Exercise``, ``FormRule`` and ``SessionRules``: a field missing here
    /// would let a checkpoint be restored under a changed threshold (`CheckpointFingerprintTests`
    /// fails when a field is added to them).
    mutating func combine(_ exercise: Exercise) {
        combine(exercise.id)
        combine(exercise.view.rawValue)
        combine(exercise.measure.rawValue)
        switch exercise.kind {
        case .reps(let start, let end, let minPeak):
            combine("reps")
            combine(start)
            combine(end)
            combine(minPeak)
        case .hold(let threshold, let seconds):
            combine("hold")
            combine(threshold)
            combine(seconds)
        }
        combine(exercise.formRules.count)
        for rule in exercise.formRules {
            combine(rule.fault.rawValue)
            combine(rule.measure.rawValue)
            combine(rule.limit)
        }
        combine(exercise.sessionRules)
    }

    /// Adds every session rule, in declaration order.
    mutating func combine(_ rules: SessionRules) {
        for keyPath in SessionRules.fingerprintedDoubles { combine(rules[keyPath: keyPath]) }
        combine(rules.baselineReps)
    }
}

extension SessionRules {
    /// The session rules that are doubles, in declaration order (all but ``baselineReps``).
    static var fingerprintedDoubles: [WritableKeyPath<SessionRules, Double>] {
        [
            \.smoothingMinCutoff, \.smoothingBeta, \.smoothingDerivativeCutoff, \.smoothingResetGap,
            \.maximumSpeed, \.outlierHoldOut, \.minimumRepDuration, \.maximumRepDuration,
            \.abandonAfterMissing, \.faultPersistence, \.holdBreakMargin, \.holdBreakTime,
            \.visibilityDebounce, \.setupDebounce, \.tooFarFraction, \.edgeMarginFraction,
            \.sideViewMaximumRatio, \.frontViewMinimumRatio, \.minimumMeanConfidence, \.suspectTimeJump,
        ]
    }
}
