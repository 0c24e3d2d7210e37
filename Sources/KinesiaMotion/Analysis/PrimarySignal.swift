/// The primary measure over time: outlier rejection, then the One Euro filter, with the
/// filter reset after a gap.
///
/// Outliers: a raw value further from the last accepted one than a body can move since the
/// previous measured pose (``SessionRules/maximumSpeed``) is held out, and the smoothed value
/// stays where it was. Held-out values keep being compared with the last accepted value, so a
/// detector that swaps left and right for a few frames is ignored as a whole; a jump that lasts
/// ``SessionRules/outlierHoldOut`` is real and is accepted.
struct PrimarySignal: Sendable {
    var filter: OneEuroFilter
    private let maximumSpeed: Double
    private let holdOut: Double
    private let resetGap: Double

    /// The last raw value that passed the outlier check.
    var acceptedValue: Double?
    /// When the current run of outliers began.
    var outlierSince: Double?
    /// The time of the last pose whose primary measure was measurable (outlier or not).
    var lastMeasuredTime: Double?

    init(rules: SessionRules) {
        filter = OneEuroFilter(
            minCutoff: rules.smoothingMinCutoff, beta: rules.smoothingBeta,
            derivativeCutoff: rules.smoothingDerivativeCutoff)
        maximumSpeed = rules.maximumSpeed
        holdOut = rules.outlierHoldOut
        resetGap = rules.smoothingResetGap
    }

    /// The current smoothed value (kept while the measure is not measurable).
    var smoothed: Double? { filter.value }

    /// Takes the raw value of the pose at `time` (strictly after the previous one) and returns
    /// the smoothed value, or `nil` when `raw` is `nil`.
    mutating func update(_ raw: Double?, at time: Double) -> Double? {
        guard let raw else { return nil }
        if let last = lastMeasuredTime {
            if time - last > resetGap {
                filter.reset()
                acceptedValue = nil
                outlierSince = nil
            } else if let accepted = acceptedValue {
                // The plausible change is what a body can do in one frame interval; held-out
                // frames do not widen it, so a run of swapped frames stays out as a whole.
                let plausible = maximumSpeed * (time - last)
                if !(abs(raw - accepted) <= plausible) {
                    let since = outlierSince ?? time
                    outlierSince = since
                    if time - since < holdOut {
                        lastMeasuredTime = time
                        return filter.value ?? accepted
                    }
                }
            }
        }
        lastMeasuredTime = time
        outlierSince = nil
        acceptedValue = raw
        return filter.filter(raw, at: time)
    }
}
