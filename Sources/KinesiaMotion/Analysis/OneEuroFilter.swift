/// The One Euro filter (Casiez, Roussel, Vogel, CHI 2012): an adaptive low-pass filter that
/// smooths jitter when a signal moves slowly and follows it closely when it moves fast.
///
/// The cutoff frequency rises with the signal's (filtered) speed:
/// `cutoff = minCutoff + beta * |speed|`. Time comes only from the timestamps given to
/// ``filter(_:at:)``, so the filter is deterministic.
///
/// ```swift
/// var filter = OneEuroFilter(minCutoff: 1, beta: 0.02, derivativeCutoff: 1)
/// let smoothed = filter.filter(42.0, at: 0.033)
/// ```
public struct OneEuroFilter: Sendable, Hashable {
    /// The cutoff frequency at rest, in Hz: lower smooths more and lags more.
    public var minCutoff: Double
    /// How fast the cutoff rises with speed (per unit of the signal per second).
    public var beta: Double
    /// The cutoff frequency of the speed estimate, in Hz.
    public var derivativeCutoff: Double

    /// The last filtered value, or `nil` before the first sample or after ``reset()``.
    public internal(set) var value: Double?
    var derivative: Double = 0
    var time: Double = 0

    /// Creates a filter.
    /// - Parameters:
    ///   - minCutoff: The cutoff frequency at rest, in Hz.
    ///   - beta: The speed coefficient.
    ///   - derivativeCutoff: The cutoff frequency of the speed estimate, in Hz.
    public init(minCutoff: Double, beta: Double, derivativeCutoff: Double) {
        self.minCutoff = minCutoff
        self.beta = beta
        self.derivativeCutoff = derivativeCutoff
    }

    /// Filters one sample taken at `time` seconds and returns the smoothed value.
    ///
    /// The first sample (and the first after ``reset()``) is returned unchanged. A sample whose
    /// time does not advance, or a non-finite sample, leaves the filter as it was and returns
    /// its current value.
    public mutating func filter(_ sample: Double, at time: Double) -> Double {
        guard sample.isFinite, time.isFinite else { return value ?? sample }
        guard let previous = value else {
            value = sample
            derivative = 0
            self.time = time
            return sample
        }
        let elapsed = time - self.time
        guard elapsed > 0 else { return previous }
        let speed = (sample - previous) / elapsed
        derivative += Self.smoothingFactor(cutoff: derivativeCutoff, elapsed: elapsed) * (speed - derivative)
        let cutoff = minCutoff + beta * abs(derivative)
        let filtered = previous + Self.smoothingFactor(cutoff: cutoff, elapsed: elapsed) * (sample - previous)
        // A non-finite result (absurd parameters) restarts the filter at the sample.
        let next = filtered.isFinite ? filtered : sample
        if !derivative.isFinite { derivative = 0 }
        value = next
        self.time = time
        return next
    }

    /// Forgets the past: the next sample is taken as it is.
    public mutating func reset() {
        value = nil
        derivative = 0
        time = 0
    }

    /// The exponential smoothing factor of a first-order low-pass filter with `cutoff` Hz over
    /// `elapsed` seconds: `1 / (1 + tau / elapsed)`, `tau = 1 / (2 pi cutoff)`.
    @inlinable
    static func smoothingFactor(cutoff: Double, elapsed: Double) -> Double {
        guard cutoff > 0 else { return 0 }
        let tau = 1 / (2 * Double.pi * cutoff)
        return 1 / (1 + tau / elapsed)
    }
}
