extension SessionRules {
    /// Slack on every comparison of a duration with a rule's time (0.1 ms, far below any frame
    /// interval): timestamps are binary fractions (`9 / 30.0 - 0 < 0.3`) or rounded to the
    /// microsecond in recordings, and a rule's boundary must not move by a frame because of it.
    static let timeTolerance = 1e-4

    /// These rules with ``timeTolerance`` applied to every time, in the direction that keeps a
    /// boundary where it belongs (a wait of 0.3 s is over at 0.2999 s; a gap of more than 0.5 s
    /// starts at 0.5001 s).
    func withTimeTolerance() -> SessionRules {
        let slack = Self.timeTolerance
        var rules = self
        rules.smoothingResetGap += slack
        rules.outlierHoldOut -= slack
        rules.minimumRepDuration -= slack
        rules.maximumRepDuration += slack
        rules.abandonAfterMissing += slack
        rules.faultPersistence -= slack
        rules.holdBreakTime -= slack
        rules.visibilityDebounce -= slack
        rules.setupDebounce -= slack
        rules.suspectTimeJump += slack
        return rules
    }
}
