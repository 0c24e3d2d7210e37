import Foundation
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// Seeded hostile inputs (random, truncated, bit-flipped, valid headers over random bodies), so
/// that a failure reproduces. Every decoder must answer each with a value or a typed error, never
/// a crash; what decodes (JSON payloads, poses, whole messages) must survive re-encoding in a
/// canonical form: ``WireRoundTrip``, the checks the libFuzzer target (`fuzz/WireFuzz.swift`)
/// makes too.
///
/// Release builds (`swift test -c release`) feed the full million. Debug builds feed 50 000:
/// the unoptimised decoders are some 20 times slower there, and Swift Testing captures a
/// backtrace for every error thrown while a test runs (about 70% of this test's time in
/// debug), so 250 000 took 11 s of CPU, the largest share of the suite's CPU-bound start on a
/// 2-core machine. 50 000 seeded inputs still reach every decoder error code below many times
/// over; `KINESIA_WIRE_ROBUSTNESS_INPUTS=1000000` forces the million (about 60 s of CPU in
/// debug), as `scripts/test` (CI) does in a run of its own.
/// The libFuzzer target (`scripts/fuzz`) goes further.
struct WireRobustnessTests {
    static let chunks = 4
    static let inputs: Int = {
        if let text = ProcessInfo.processInfo.environment["KINESIA_WIRE_ROBUSTNESS_INPUTS"],
            let count = Int(text)
        {
            return count
        }
        #if DEBUG
            return 50_000
        #else
            return 1_000_000
        #endif
    }()

    @Test(arguments: 0..<chunks)
    func everyDecoderSurvivesSeededHostilePayloadsAndRoundTripsWhatItDecodes(chunk: Int) throws {
        var generator = SplitMix64(seed: 0x4B57_0001 &+ UInt64(chunk))
        var seeds = try WireFixtures.valid().map { try $0.message.encode() }
        seeds += try WireFixtures.invalid().map { (Array($0.topic.utf8), $0.payload) }
        let topics =
            seeds.map(\.0)
            + ["pose/", "event/a/", "health/../", "snapshot/a/b/c/", ""].map { Array($0.utf8) }

        var decodedPoses = 0
        var decodedJSON = 0
        var decodedMessages = 0
        var codes: [String: Int] = [:]
        var topicErrors = 0
        var payload: [UInt8] = []
        payload.reserveCapacity(2048)

        for iteration in 0..<Self.inputs / Self.chunks {
            let seed = seeds[Int(generator.next() % UInt64(seeds.count))]
            Self.mutate(seed.1, into: &payload, strategy: iteration % 5, using: &generator)
            var topic = topics[Int(generator.next() % UInt64(topics.count))]
            if generator.next() % 4 == 0, !topic.isEmpty {
                topic[Int(generator.next() % UInt64(topic.count))] ^= UInt8(
                    truncatingIfNeeded: generator.next() | 1)
            }

            do {
                let decoded = try WireRoundTrip.checkPayload(payload)
                if decoded.contains(.pose) { decodedPoses += 1 }
                if decoded.contains(.json) { decodedJSON += 1 }
                if try WireRoundTrip.checkMessage(topic: topic, payload: payload) { decodedMessages += 1 }
            } catch {
                Issue.record("\(error): topic \(topic.hex), payload \(payload.hex)")
            }
            // Why the pose decoder refused it, to show that the inputs reach every check.
            do {
                _ = try PoseCodec.decode(payload)
            } catch {
                codes[error.code, default: 0] += 1
            }
            do {
                _ = try Topic(parsing: topic)
            } catch {
                topicErrors += 1
            }
        }

        // The inputs reached every layer: some decode, and the pose decoder refused them for
        // many different reasons.
        #expect(decodedPoses > 100)
        #expect(decodedJSON > 100)
        #expect(decodedMessages > 100)
        #expect(topicErrors > 100)
        for code in [
            "truncated", "badMagic", "unsupportedVersion", "unknownKind", "unexpectedKind", "trailingBytes",
            "unsupportedFlags", "nonFinite", "unknownJoint", "duplicateJoint", "tooManyJoints",
        ] {
            #expect(codes[code, default: 0] > 0, "no input reached \(code)")
        }
    }

    /// Five ways to spoil a valid payload.
    static func mutate(
        _ seed: [UInt8], into payload: inout [UInt8], strategy: Int, using generator: inout SplitMix64
    ) {
        payload.removeAll(keepingCapacity: true)
        switch strategy {
        case 0:  // Random bytes, random length.
            let count = Int(generator.next() % 640)
            for _ in 0..<count { payload.append(UInt8(truncatingIfNeeded: generator.next())) }
        case 1:  // Truncated.
            payload.append(contentsOf: seed.prefix(Int(generator.next() % UInt64(seed.count + 1))))
        case 2:  // One to four bit flips.
            payload.append(contentsOf: seed)
            guard !payload.isEmpty else { return }
            for _ in 0...(generator.next() % 4) {
                let bit = Int(generator.next() % UInt64(payload.count * 8))
                payload[bit / 8] ^= 1 << (bit % 8)
            }
        case 3:  // A valid header over random bytes.
            payload.append(contentsOf: seed.prefix(WireFormat.headerSize))
            let count = Int(generator.next() % 600)
            for _ in 0..<count { payload.append(UInt8(truncatingIfNeeded: generator.next())) }
        default:  // Bytes overwritten with special values, and extended or cut.
            payload.append(contentsOf: seed)
            guard payload.count > 8 else { return }
            let specials: [UInt8] = [0x00, 0xFF, 0x7F, 0x80, 0x13, 0x14, 0xF0]
            for _ in 0...(generator.next() % 3) {
                payload[Int(generator.next() % UInt64(payload.count))] =
                    specials[Int(generator.next() % UInt64(specials.count))]
            }
            if generator.next() % 2 == 0 {
                payload.append(contentsOf: repeatElement(0, count: Int(generator.next() % 40)))
            } else {
                payload.removeLast(Int(generator.next() % UInt64(payload.count / 2)))
            }
        }
    }
}
