import Foundation
public import KinesiaMotion

/// Micro-benchmarks of the pose path, for `kinesia-bench` (run them in a release build).
///
/// ```swift
/// let figures = WireBenchmark.poseRoundTrip(iterations: 1_000_000)
/// print(figures.encodeNanoseconds, figures.roundTripNanoseconds)
/// ```
public enum WireBenchmark {
    /// Nanoseconds per pose, medians over several runs.
    public struct Figures: Sendable, Hashable {
        /// Poses per run.
        public var iterations: Int
        /// Encoding one pose into a reused buffer.
        public var encodeNanoseconds: Double
        /// Decoding one pose (header checks, validation, building the `Pose`).
        public var decodeNanoseconds: Double
        /// Encoding then decoding one pose.
        public var roundTripNanoseconds: Double
        /// The payload size of the benchmark pose, in bytes.
        public var payloadBytes: Int
        /// The floor of any decoder that returns a `Pose`: building the same pose (its two
        /// dictionaries) from values already in memory. Decoding costs this plus parsing and
        /// validation.
        public var baselineNanoseconds: Double

        /// Decoding time over the baseline: how much parsing and validation add (1 = nothing).
        public var decodeOverBaseline: Double { decodeNanoseconds / baselineNanoseconds }
    }

    /// A typical full-body pose: 19 joints with a confidence each and an image size.
    public static let samplePose: Pose = {
        var points: [Joint: CGPoint] = [:]
        var confidence: [Joint: Double] = [:]
        for joint in Joint.allCases {
            let index = Double(joint.index)
            points[joint] = CGPoint(x: 640.25 + index * 7.125, y: 360.5 + index * 13.0625)
            confidence[joint] = 0.5 + index / 40
        }
        return Pose(
            points: points, timestamp: 12.5, imageSize: CGSize(width: 1280, height: 720),
            confidence: confidence)
    }()

    /// Measures encoding, decoding and both for `pose`, `runs` times `iterations` poses, and
    /// returns the median run of each.
    public static func poseRoundTrip(
        pose: Pose = samplePose, iterations: Int = 200_000, runs: Int = 5
    ) -> Figures {
        var header = WireHeader(kind: .pose, streamID: StreamID(0x5EED), sequence: 0, sentAt: 0)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(PoseCodec.maximumEncodedSize)
        // Sizes and validity are checked once; the loops below then cannot fail.
        guard (try? PoseCodec.encode(pose, header: header, into: &buffer)) != nil else {
            return Figures(
                iterations: 0, encodeNanoseconds: .nan, decodeNanoseconds: .nan, roundTripNanoseconds: .nan,
                payloadBytes: 0, baselineNanoseconds: .nan)
        }
        let payload = buffer
        var sink: UInt64 = 0
        let clock = ContinuousClock()

        func median(_ body: () -> Void) -> Double {
            var samples: [Double] = []
            for _ in 0..<max(1, runs) {
                let elapsed = clock.measure(body)
                let nanoseconds =
                    Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
                samples.append(nanoseconds / Double(max(1, iterations)))
            }
            return samples.sorted()[samples.count / 2]
        }

        let encode = median {
            for index in 0..<iterations {
                header.sequence = UInt64(index)
                try? PoseCodec.encode(pose, header: header, into: &buffer)
                sink &+= UInt64(buffer[20])
            }
        }
        let decode = median {
            for _ in 0..<iterations {
                if let decoded = try? PoseCodec.decode(payload) { sink &+= UInt64(decoded.pose.points.count) }
            }
        }
        let roundTrip = median {
            for index in 0..<iterations {
                header.sequence = UInt64(index)
                try? PoseCodec.encode(pose, header: header, into: &buffer)
                if let decoded = try? PoseCodec.decode(buffer) { sink &+= decoded.header.sequence }
            }
        }
        let points = pose.points.sorted { $0.key.index < $1.key.index }
        let confidence = pose.confidence.sorted { $0.key.index < $1.key.index }
        let baseline = median {
            for index in 0..<iterations {
                var built = Pose(timestamp: Double(index), imageSize: pose.imageSize)
                if !points.isEmpty { built.points.reserveCapacity(points.count) }
                for (joint, point) in points { built.points[joint] = point }
                if !confidence.isEmpty { built.confidence.reserveCapacity(confidence.count) }
                for (joint, value) in confidence { built.confidence[joint] = value }
                sink &+= UInt64(built.points.count)
            }
        }
        blackHole(sink)
        return Figures(
            iterations: iterations, encodeNanoseconds: encode, decodeNanoseconds: decode,
            roundTripNanoseconds: roundTrip, payloadBytes: payload.count, baselineNanoseconds: baseline)
    }
}

@inline(never)
private func blackHole(_ value: UInt64) {
    if value == 0x5EED_5EED_5EED_5EED { print("") }
}
