/// The tests' seeded generator: SplitMix64 (Steele, Lea, Flood 2014), small, fast and the same
/// sequence on every machine, so a failing random case can be replayed from its seed.
///
/// ```swift
/// var generator = SplitMix64(seed: 42)
/// let x = generator.unit()               // 0 ..< 1
/// let k = Int.random(in: 0..<10, using: &generator)
/// ```
package struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The state, advanced by the golden-ratio increment at each draw.
    package var state: UInt64

    /// A generator whose sequence depends only on `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform `Double` in `0 ..< 1` (53 random bits).
    package mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
