import Foundation
import KinesiaMotion
import KinesiaWire

/// The test vectors of `docs/wire-format.md`, written to `Fixtures/*.bin` and described in
/// `Fixtures/expected.json` for `python -m kinesia.fixtures check`.
enum WireFixtures {
    /// A message that must decode.
    struct Valid {
        var file: String
        var message: WireMessage
    }

    /// A message that must be refused with the error `code`.
    struct Invalid {
        var file: String
        var topic: String
        var payload: [UInt8]
        var code: String
    }

    static let stream = StreamID(0x0123_4567_89AB_CDEF)
    static let sentAt: UInt64 = 1_764_489_600_123_456_789

    static func header(_ kind: PayloadKind, _ sequence: UInt64) -> WireHeader {
        WireHeader(kind: kind, streamID: stream, sequence: sequence, sentAt: sentAt)
    }

    /// Every joint, an image size, a confidence per joint; numbers with long expansions.
    static let fullPose: Pose = {
        var points: [Joint: CGPoint] = [:]
        var confidence: [Joint: Double] = [:]
        for joint in Joint.allCases {
            let index = Double(joint.index)
            points[joint] = CGPoint(x: 10.5 + index * 31.25, y: 1000.0 / 3 + index)
            confidence[joint] = 0.05 * index
        }
        return Pose(
            points: points, timestamp: 1.0 / 30, imageSize: CGSize(width: 1920, height: 1080),
            confidence: confidence)
    }()

    /// `MotionJSON.encode(.repCompleted(Rep(peak: 92.25, faults: [], start: 1, end: 2.5)), at: 2.5)`.
    static let eventJSON =
        #"{"type":"repCompleted","t":2.5,"rep":{"peak":92.25,"faults":[],"start":1.0,"end":2.5}}"#
    /// A `MotionJSON` snapshot line with one key a newer writer might add (`note`, non-ASCII),
    /// which readers must ignore.
    static let snapshotJSON =
        #"{"type":"snapshot","t":4.0,"value":41.5,"best":92.25,"repCount":3,"rejectedCount":1,"#
        + #""lastRep":{"peak":92.25,"faults":[],"start":1.0,"end":2.5},"holdProgress":null,"#
        + #""confidence":0.8125,"setupIssues":["tooFar"],"isVisible":true,"missingJoints":[],"#
        + #""isRunning":true,"baseline":{"completed":1,"target":3,"value":92.25},"note":"ção ✓"}"#
    static let health = HealthReport(
        process: "worker-cam0-left", role: "worker", pid: 4242, uptime: 12.5,
        counters: ["dropped.nonFinite": 2, "poses": 1200])

    static func valid() throws -> [Valid] {
        let recorded = try recordedPoses("p2s_balance_cam01_openpose25b.jsonl")[49]
        let partial = Pose(
            points: [.leftShoulder: CGPoint(x: 320, y: 240), .leftElbow: CGPoint(x: 330.75, y: 300.125)],
            timestamp: 12.25, confidence: [.leftElbow: 0.875])
        return [
            Valid(
                file: "pose-full.bin",
                message: WireMessage(
                    topic: try .pose(camera: "cam0"), header: header(.pose, 7), body: .pose(fullPose))),
            Valid(
                file: "pose-empty.bin",
                message: WireMessage(
                    topic: try .pose(camera: "cam0"), header: header(.pose, 0),
                    body: .pose(Pose(timestamp: 0)))),
            Valid(
                file: "pose-partial.bin",
                message: WireMessage(
                    topic: try .pose(camera: "cam_1"), header: header(.pose, 0x0001_0203_0405_0607),
                    body: .pose(partial))),
            Valid(
                file: "pose-recorded.bin",
                message: WireMessage(
                    topic: try .pose(camera: "cam01"), header: header(.pose, 49), body: .pose(recorded))),
            Valid(
                file: "event.bin",
                message: WireMessage(
                    topic: try .event(camera: "cam0", session: "left"), header: header(.event, 3),
                    body: .event(json: eventJSON))),
            Valid(
                file: "snapshot.bin",
                message: WireMessage(
                    topic: try .snapshot(camera: "cam0", session: "left"), header: header(.snapshot, 120),
                    body: .snapshot(json: snapshotJSON))),
            Valid(
                file: "health.bin",
                message: WireMessage(
                    topic: try .health(process: "worker-cam0-left"), header: header(.health, 9),
                    body: .health(health))),
        ]
    }

    static func invalid() throws -> [Invalid] {
        let full = try PoseCodec.encode(fullPose, header: header(.pose, 7))
        let small = try PoseCodec.encode(
            Pose(points: [.leftElbow: CGPoint(x: 1, y: 2)], timestamp: 3), header: header(.pose, 1))
        // `small`: 28 timestamp, 36 flags, 37 count, 38 index, 39 x, 47 y, 55 confidence count.
        func patched(_ bytes: [UInt8], _ patch: (inout [UInt8]) -> Void) -> [UInt8] {
            var bytes = bytes
            patch(&bytes)
            return bytes
        }
        let nan = withUnsafeBytes(of: Double.nan.bitPattern.littleEndian, Array.init)
        return [
            Invalid(
                file: "invalid-foreign.bin", topic: "pose/cam0/",
                payload: Array("GET / HTTP/1.1\r\nHost: example\r\n\r\n".utf8), code: "badMagic"),
            Invalid(
                file: "invalid-version.bin", topic: "pose/cam0/", payload: patched(small) { $0[2] = 2 },
                code: "unsupportedVersion"),
            Invalid(
                file: "invalid-kind.bin", topic: "pose/cam0/", payload: patched(small) { $0[3] = 0x7F },
                code: "unknownKind"),
            Invalid(
                file: "invalid-truncated.bin", topic: "pose/cam0/", payload: Array(full.prefix(300)),
                code: "truncated"),
            Invalid(
                file: "invalid-trailing.bin", topic: "pose/cam0/", payload: small + [0], code: "trailingBytes"
            ),
            Invalid(
                file: "invalid-flags.bin", topic: "pose/cam0/", payload: patched(small) { $0[36] = 0x80 },
                code: "unsupportedFlags"),
            Invalid(
                file: "invalid-nan.bin", topic: "pose/cam0/",
                payload: patched(small) { $0.replaceSubrange(39..<47, with: nan) }, code: "nonFinite"),
            Invalid(
                file: "invalid-joint.bin", topic: "pose/cam0/", payload: patched(small) { $0[38] = 19 },
                code: "unknownJoint"),
            Invalid(
                file: "invalid-duplicate.bin", topic: "pose/cam0/",
                payload: patched(small) {
                    $0[37] = 2
                    $0.insert(contentsOf: $0[38..<55], at: 55)
                }, code: "duplicateJoint"),
            Invalid(
                file: "invalid-count.bin", topic: "pose/cam0/", payload: patched(small) { $0[37] = 20 },
                code: "tooManyJoints"),
            Invalid(
                file: "invalid-utf8.bin", topic: "event/cam0/left/",
                payload: header(.event, 1).bytes + [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x7D], code: "invalidUTF8"),
            Invalid(
                file: "invalid-empty-json.bin", topic: "event/cam0/left/", payload: header(.event, 1).bytes,
                code: "emptyJSON"),
            Invalid(
                file: "invalid-topic-mismatch.bin", topic: "event/cam0/left/", payload: small,
                code: "topicMismatch"),
            Invalid(
                file: "invalid-topic.bin", topic: "pose/cam0", payload: small, code: "invalidTopic"),
        ]
    }

    /// `expected.json`: what every fixture decodes to, as plain JSON values.
    static func expectedDocument() throws -> [String: Any] {
        let valid: [[String: Any]] = try valid().map { vector in
            let message = vector.message
            var entry: [String: Any] = [
                "file": vector.file,
                "topic": message.topic.string,
                "header": [
                    "kind": message.header.kind.description,
                    "stream_id": message.header.streamID.description,
                    "sequence": message.header.sequence,
                    "sent_at_ns": message.header.sentAt,
                ],
            ]
            switch message.body {
            case .pose(let pose): entry["pose"] = poseObject(pose)
            case .event(let json), .snapshot(let json), .session(let json): entry["json"] = json
            case .health(let report): entry["json"] = String(decoding: try report.json(), as: UTF8.self)
            }
            return entry
        }
        let invalid: [[String: Any]] = try invalid().map {
            ["file": $0.file, "topic": $0.topic, "error": $0.code]
        }
        return ["format_version": Int(WireFormat.version), "valid": valid, "invalid": invalid]
    }

    /// A pose in the recordings' JSON shape: t, w, h (when known), points, confidence.
    static func poseObject(_ pose: Pose) -> [String: Any] {
        var object: [String: Any] = [
            "t": pose.timestamp,
            "points": Dictionary(
                uniqueKeysWithValues: pose.points.map {
                    ($0.key.rawValue, [Double($0.value.x), Double($0.value.y)])
                }),
            "confidence": Dictionary(
                uniqueKeysWithValues: pose.confidence.map { ($0.key.rawValue, $0.value) }),
        ]
        if let size = pose.imageSize {
            object["w"] = Double(size.width)
            object["h"] = Double(size.height)
        }
        return object
    }
}
