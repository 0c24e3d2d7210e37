import Foundation
import KinesiaMotion
import KinesiaWire
import Testing

struct PoseCodecTests {
    @Test func fullPoseRoundTripsBitForBit() throws {
        let pose = fullPose()
        let payload = try PoseCodec.encode(pose, header: header(.pose))
        #expect(payload.count == PoseCodec.maximumEncodedSize)
        #expect(payload.count == 549)
        let (decodedHeader, decoded) = try PoseCodec.decode(payload)
        #expect(decodedHeader == header(.pose))
        #expect(decoded == pose)
        for joint in Joint.allCases {
            #expect(decoded[joint]!.x.bitPattern == pose[joint]!.x.bitPattern)
            #expect(decoded[joint]!.y.bitPattern == pose[joint]!.y.bitPattern)
        }
    }

    @Test func emptyPoseWithoutImageSizeIsFortyBytes() throws {
        let pose = Pose(timestamp: 0.5)
        let payload = try PoseCodec.encode(pose, header: header(.pose))
        #expect(payload.count == 28 + 8 + 1 + 1 + 1)
        #expect(try PoseCodec.decode(payload).pose == pose)
    }

    @Test func confidenceOfAbsentJointsAndPartialConfidenceSurvive() throws {
        let pose = Pose(
            points: [.leftElbow: CGPoint(x: 1, y: 2), .nose: CGPoint(x: 3, y: 4)], timestamp: 1,
            confidence: [.rightAnkle: 0.25, .nose: 1])
        #expect(try PoseCodec.decode(PoseCodec.encode(pose, header: header(.pose))).pose == pose)
    }

    @Test(arguments: [
        "p2s_balance_cam01_mediapipe.jsonl", "p2s_balance_cam01_openpose25b.jsonl",
        "p2s_balance_cam03_openpose25b.jsonl", "s2d_demo_walk_mediapipe.jsonl",
    ])
    func everyRecordedPoseRoundTripsExactly(recording: String) throws {
        var buffer: [UInt8] = []
        for (index, pose) in try recordedPoses(recording).enumerated() {
            try PoseCodec.encode(pose, header: header(.pose, sequence: UInt64(index)), into: &buffer)
            let (decodedHeader, decoded) = try PoseCodec.decode(buffer)
            #expect(decodedHeader.sequence == UInt64(index))
            #expect(decoded == pose)
        }
    }

    @Test func encodingIsCanonicalWhateverTheDictionaryOrder() throws {
        // Joints are written in ascending index order: the same pose gives the same bytes in
        // every process (dictionary order depends on a per-process hash seed).
        let pose = fullPose()
        let payload = try PoseCodec.encode(pose, header: header(.pose))
        var indices: [UInt8] = []
        var offset = 28 + 8 + 1 + 16 + 1
        for _ in 0..<19 {
            indices.append(payload[offset])
            offset += 17
        }
        #expect(indices == Array(0...18))
        var rebuilt = Pose(timestamp: pose.timestamp, imageSize: pose.imageSize)
        for joint in Joint.allCases.reversed() {
            rebuilt.points[joint] = pose.points[joint]
            rebuilt.confidence[joint] = pose.confidence[joint]
        }
        #expect(try PoseCodec.encode(rebuilt, header: header(.pose)) == payload)
    }

    @Test func reusableBufferShrinksAndGrowsToEachPose() throws {
        var buffer: [UInt8] = []
        try PoseCodec.encode(fullPose(), header: header(.pose), into: &buffer)
        #expect(buffer.count == 549)
        try PoseCodec.encode(Pose(timestamp: 1), header: header(.pose), into: &buffer)
        #expect(buffer.count == 39)
        #expect(try PoseCodec.decode(buffer).pose == Pose(timestamp: 1))
        #expect(buffer.capacity >= PoseCodec.maximumEncodedSize)
    }

    @Test func encodingIntoARawBufferReturnsTheSize() throws {
        let pose = fullPose()
        let bytes = try [UInt8](unsafeUninitializedCapacity: 600) { buffer, count in
            count = try PoseCodec.encode(
                pose, header: header(.pose), into: UnsafeMutableRawBufferPointer(buffer))
        }
        #expect(bytes.count == PoseCodec.encodedSize(of: pose))
        #expect(try PoseCodec.decode(bytes).pose == pose)
    }

    @Test(arguments: [
        (Pose(timestamp: .nan), WireError.nonFinite(.timestamp)),
        (Pose(timestamp: .infinity), .nonFinite(.timestamp)),
        (Pose(points: [.leftKnee: CGPoint(x: Double.nan, y: 1)], timestamp: 0), .nonFinite(.x(.leftKnee))),
        (Pose(points: [.root: CGPoint(x: 1, y: -Double.infinity)], timestamp: 0), .nonFinite(.y(.root))),
        (Pose(timestamp: 0, confidence: [.nose: .nan]), .nonFinite(.confidence(.nose))),
        (Pose(timestamp: 0, imageSize: CGSize(width: Double.nan, height: 1)), .nonFinite(.imageWidth)),
        (Pose(timestamp: 0, imageSize: CGSize(width: 1, height: Double.infinity)), .nonFinite(.imageHeight)),
        (Pose(timestamp: 0, imageSize: CGSize(width: -1, height: 1)), .negativeImageSize),
    ])
    func encoderRefusesWhatEveryDecoderWouldReject(pose: Pose, error: WireError) {
        #expect(throws: error) { try PoseCodec.encode(pose, header: header(.pose)) }
    }

    @Test func encoderRefusesANonPoseHeader() {
        #expect(throws: WireError.unexpectedKind(.event)) {
            try PoseCodec.encode(Pose(timestamp: 0), header: header(.event))
        }
    }
}

/// Hand-made malformed pose payloads, each with the error it must give.
struct PoseDecodingErrorTests {
    /// A valid payload: one point (leftElbow), one confidence (leftElbow), no image size.
    static func valid() throws -> [UInt8] {
        try PoseCodec.encode(
            Pose(points: [.leftElbow: CGPoint(x: 1, y: 2)], timestamp: 3, confidence: [.leftElbow: 0.5]),
            header: header(.pose))
    }

    // Offsets in `valid()`: 28 timestamp, 36 flags, 37 point count, 38 index, 39 x, 47 y,
    // 55 confidence count, 56 index, 57 value; 65 bytes in all.

    static func patched(_ patch: (inout [UInt8]) -> Void) throws -> [UInt8] {
        var bytes = try valid()
        patch(&bytes)
        return bytes
    }

    static func float(_ value: Double) -> [UInt8] {
        withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init)
    }

    @Test func validPayloadHasTheDocumentedLayout() throws {
        let bytes = try Self.valid()
        #expect(bytes.count == 65)
        #expect(bytes[37] == 1 && bytes[38] == 9 && bytes[55] == 1 && bytes[56] == 9)
        #expect(Array(bytes[39..<47]) == Self.float(1))
    }

    @Test(arguments: 0..<65)
    func everyTruncationIsATypedError(length: Int) throws {
        let bytes = Array(try Self.valid().prefix(length))
        #expect(throws: WireError.self) { try PoseCodec.decode(bytes) }
        do {
            _ = try PoseCodec.decode(bytes)
        } catch {
            if length >= 28 {
                guard case .truncated(let needed, let available) = error else {
                    Issue.record("expected .truncated for length \(length), got \(error)")
                    return
                }
                #expect(available == length)
                #expect(needed > length)
            }
        }
    }

    @Test func malformedRecordsGiveTheirError() throws {
        let cases: [([UInt8], WireError)] = [
            (try Self.patched { $0[0] = 0x4A }, .badMagic),
            (try Self.patched { $0[2] = 2 }, .unsupportedVersion(2)),
            (try Self.patched { $0[3] = 99 }, .unknownKind(99)),
            (try Self.patched { $0[3] = 2 }, .unexpectedKind(.event)),
            (
                try Self.patched { $0.replaceSubrange(28..<36, with: Self.float(.nan)) },
                .nonFinite(.timestamp)
            ),
            (try Self.patched { $0[36] = 0x02 }, .unsupportedFlags(0x02)),
            (try Self.patched { $0[37] = 20 }, .tooManyJoints(count: 20)),
            (try Self.patched { $0[38] = 19 }, .unknownJoint(index: 19)),
            (try Self.patched { $0[38] = 255 }, .unknownJoint(index: 255)),
            (
                try Self.patched { $0.replaceSubrange(39..<47, with: Self.float(.infinity)) },
                .nonFinite(.x(.leftElbow))
            ),
            (
                try Self.patched { $0.replaceSubrange(47..<55, with: Self.float(-.nan)) },
                .nonFinite(.y(.leftElbow))
            ),
            (try Self.patched { $0[56] = 30 }, .unknownJoint(index: 30)),
            (
                try Self.patched { $0.replaceSubrange(57..<65, with: Self.float(.nan)) },
                .nonFinite(.confidence(.leftElbow))
            ),
            (try Self.patched { $0.append(0) }, .trailingBytes(count: 1)),
            (
                try Self.patched { $0 += [UInt8](repeating: 0, count: 70_000) },
                .oversized(size: 70_065, limit: 65_536)
            ),
            (
                try Self.patched {
                    // Two points, both leftElbow.
                    $0[37] = 2
                    $0.insert(contentsOf: $0[38..<55], at: 55)
                }, .duplicateJoint(.leftElbow)
            ),
            (
                try Self.patched {
                    $0[36] = 1
                    $0.insert(contentsOf: Self.float(-640) + Self.float(480), at: 37)
                }, .negativeImageSize
            ),
        ]
        for (bytes, error) in cases {
            #expect(throws: error) { try PoseCodec.decode(bytes) }
        }
    }

    @Test func jointsInAnyOrderDecode() throws {
        let pose = Pose(
            points: [.nose: CGPoint(x: 1, y: 1), .rightAnkle: CGPoint(x: 2, y: 2)], timestamp: 0)
        var bytes = try PoseCodec.encode(pose, header: header(.pose))
        // Swap the two 17-byte entries.
        let first = Array(bytes[38..<55])
        bytes.replaceSubrange(38..<55, with: bytes[55..<72])
        bytes.replaceSubrange(55..<72, with: first)
        #expect(bytes[38] == 18)
        #expect(try PoseCodec.decode(bytes).pose == pose)
    }
}
