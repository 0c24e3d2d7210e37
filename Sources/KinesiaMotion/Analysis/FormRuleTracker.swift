/// One form rule's state during a rep or hold: since when it is broken, whether its fault was
/// already reported, and (for drift rules) the measure's value when the rep started.
struct FormRuleTracker: Sendable {
    let fault: FormFeedback
    private let kernel: MeasureKernel
    private let limit: Double
    var reference: Double?
    var brokenSince: Double?
    var reported = false

    init(_ rule: FormRule, side: BodySide) {
        fault = rule.fault
        kernel = MeasureKernel(rule.measure, side: side)
        limit = rule.limit
    }

    /// Starts watching a new rep or hold whose first pose is `frame`.
    mutating func begin(_ frame: PoseFrame) {
        reference = kernel.measure.isRelativeToRepStart ? kernel.value(in: frame) : nil
        brokenSince = nil
        reported = false
    }

    /// Checks the rule on `frame` at `time`; returns the fault the first time the rule has been
    /// broken continuously for `persistence` seconds in this rep. A rule that cannot be measured
    /// is not broken (missing is not wrong).
    mutating func check(_ frame: PoseFrame, at time: Double, persistence: Double) -> FormFeedback? {
        guard let value = kernel.value(in: frame) else {
            brokenSince = nil
            return nil
        }
        let amount: Double
        if kernel.measure.isRelativeToRepStart {
            guard let reference else {
                // The reference was not measurable when the rep started: take the first value.
                self.reference = value
                return nil
            }
            amount = abs(value - reference)
        } else {
            amount = value
        }
        guard amount > limit else {
            brokenSince = nil
            return nil
        }
        let since = brokenSince ?? time
        brokenSince = since
        guard !reported, time - since >= persistence else { return nil }
        reported = true
        return fault
    }
}
