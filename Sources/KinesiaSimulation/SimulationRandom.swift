import Foundation

/// The simulator's pseudo-random numbers: xoshiro256** seeded through SplitMix64.
///
/// Deterministic on every platform and every Swift version: the simulator never uses
/// `SystemRandomNumberGenerator`, nor the standard library's `random(in:)` algorithms (whose
/// details may change). The same seed and stream always give the same numbers.
///
/// ```swift
/// var random = SimulationRandom(seed: 7)
/// let x = random.uniform()            // 0 ..< 1
/// let y = random.uniform(in: 1...3)   // 1 ... 3
/// ```
public struct SimulationRandom: RandomNumberGenerator, Sendable, Hashable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// Creates a generator for `seed` and an independent `stream` of it (the simulator gives
    /// each purpose and each block of reps its own stream).
    /// - Parameters:
    ///   - seed: Any value; equal seeds give equal sequences.
    ///   - stream: Which of the seed's independent sequences.
    public init(seed: UInt64, stream: UInt64 = 0) {
        var mixer = SplitMix64(state: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        // Decorrelate nearby streams before taking the state.
        _ = mixer.next()
        s0 = mixer.next()
        s1 = mixer.next()
        s2 = mixer.next()
        s3 = mixer.next()
        if s0 | s1 | s2 | s3 == 0 { s0 = 0x9E37_79B9_7F4A_7C15 }  // the all-zero state is a fixed point
    }

    /// A generator with the raw xoshiro256** state (for checking the algorithm against its
    /// reference vectors).
    init(words: (UInt64, UInt64, UInt64, UInt64)) {
        (s0, s1, s2, s3) = words
    }

    /// The next 64 random bits (xoshiro256**).
    public mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, by: 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotateLeft(s3, by: 45)
        return result
    }

    /// A uniform value in `0 ..< 1` with 53 random bits.
    public mutating func uniform() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// A uniform value in `range`.
    public mutating func uniform(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * uniform()
    }

    /// A uniform integer in `range`, without modulo bias.
    public mutating func integer(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) &+ 1
        guard span != 0 else { return Int(truncatingIfNeeded: next()) }  // the whole Int range
        // Rejection sampling: the largest multiple of span that fits.
        let limit = UInt64.max - UInt64.max % span
        var value = next()
        while value >= limit { value = next() }
        return range.lowerBound + Int(value % span)
    }

    /// `true` with probability `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        uniform() < probability
    }

    /// Two independent normal values (both halves of one Box-Muller draw), of mean 0 and
    /// standard deviation `deviation`, each clamped to three standard deviations.
    public mutating func gaussianPair(deviation: Double) -> (Double, Double) {
        guard deviation > 0 else { return (0, 0) }
        let u1 = max(uniform(), 0x1p-53)
        let u2 = uniform()
        let radius = (-2 * log(u1)).squareRoot()
        let angle = 2 * Double.pi * u2
        return (
            deviation * min(3, max(-3, radius * cos(angle))), deviation * min(3, max(-3, radius * sin(angle)))
        )
    }

    private func rotateLeft(_ x: UInt64, by k: UInt64) -> UInt64 {
        (x << k) | (x >> (64 - k))
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): expands one 64-bit seed into well-mixed state words.
struct SplitMix64: Sendable {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
