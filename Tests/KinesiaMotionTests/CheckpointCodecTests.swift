import Foundation
import KinesiaMotion
import KinesiaTestSupport
import Testing

/// `CheckpointCodec` gives back every double bit for bit.
struct CheckpointCodecTests {
    private struct Doubles: Codable, Equatable {
        var values: [Double]
        var optional: Double?
    }

    /// The bit patterns of `values` after a round trip through the codec.
    private func roundTrip(_ values: [Double]) throws -> [UInt64] {
        let bytes = try CheckpointCodec.encode(Doubles(values: values, optional: values.first))
        let decoded = try CheckpointCodec.decode(Doubles.self, from: bytes)
        #expect(decoded.optional?.bitPattern == values.first?.bitPattern)
        return decoded.values.map(\.bitPattern)
    }

    static let awkward: [Double] = [
        0.1 + 0.2, 0.3, -0.0, 0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
        .leastNormalMagnitude.nextDown, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .pi, 1.0 / 3,
        1e23, Double(1 << 53).nextUp, 4.35, 1e-7, 1e16, 123_456.789e-300, 1e10, -1e10, 0.1.nextUp,
    ]

    @Test func awkwardDoublesComeBackBitForBit() throws {
        #expect(try roundTrip(Self.awkward) == Self.awkward.map(\.bitPattern))
    }

    @Test func infinitiesComeBackAndNaNStaysNaN() throws {
        let bytes = try CheckpointCodec.encode(
            Doubles(values: [.infinity, -.infinity, .nan], optional: .nan))
        let decoded = try CheckpointCodec.decode(Doubles.self, from: bytes)
        #expect(decoded.values[0] == .infinity)
        #expect(decoded.values[1] == -.infinity)
        #expect(decoded.values[2].isNaN)
        #expect(decoded.optional?.isNaN == true)
    }

    @Test func randomBitPatternsComeBackBitForBit() throws {
        var generator = SplitMix64(seed: 42)
        let values = (0..<50_000).map { _ in Double(bitPattern: generator.next()) }.filter(\.isFinite)
        #expect(try roundTrip(values) == values.map(\.bitPattern))
    }

    @Test func theEncodingIsJSONWithSortedKeys() throws {
        let bytes = try CheckpointCodec.encode(Doubles(values: [-0.0, 0.1 + 0.2], optional: nil))
        #expect(String(decoding: bytes, as: UTF8.self) == "{\"values\":[-0,0.30000000000000004]}")
    }

    @Test func anEncodingOfAnotherShapeIsUnreadable() {
        #expect(throws: CheckpointError.self) {
            try CheckpointCodec.decode(Doubles.self, from: Array("{\"values\":[\"x\"]}".utf8))
        }
    }
}
