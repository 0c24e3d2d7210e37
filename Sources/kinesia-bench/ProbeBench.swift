import Foundation
import KinesiaBus
import KinesiaMotion
import KinesiaWire

/// `kinesia-bench probe`: the consumer of the end-to-end benchmark (scripts/bench_e2e.py).
///
/// It subscribes to `pose/`, `snapshot/` and `event/` on a running broker and measures, for
/// every snapshot and event a worker publishes, the time from the publication of the pose it
/// answers to its receipt here:
///
/// - the pose's publish time is the `sentAt` of the pose's wire header (the ingest's
///   `CLOCK_REALTIME` when it sent it); the probe sees every pose itself, and keeps the last
///   few seconds of `(t, sentAt)` per camera;
/// - snapshots and events carry the pose's time `t` in their JSON; on receipt the probe reads
///   `CLOCK_REALTIME` (same box, same clock) and looks the pose up by camera and `t`.
///
/// Loss: every pose the probe saw with `t` in the measured window must come back as one
/// snapshot per session (the workers run with a snapshot rate above the pose rate); the poses
/// whose snapshots did not all come are lost somewhere between ingest and probe. Sequence
/// gaps on the pose, snapshot and event topics are counted too. The probe's own socket has no
/// high-water mark: the instrument never drops.
enum ProbeBench {
    static let usage =
        "usage: kinesia-bench probe --bus DIR --sessions N [--seconds S] [--warmup S]\n"

    static func main(_ arguments: [String]) -> Int32 {
        var bus: String?
        var sessions = 2
        var seconds = 10.0
        var warmup = 2.0
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--bus", let value?): bus = value
            case ("--sessions", let value?) where Int(value).map({ $0 >= 1 }) == true: sessions = Int(value)!
            case ("--seconds", let value?) where Double(value).map({ $0 > 0 }) == true:
                seconds = Double(value)!
            case ("--warmup", let value?) where Double(value).map({ $0 >= 0 }) == true:
                warmup = Double(value)!
            default:
                FileHandle.standardError.write(Data(usage.utf8))
                return 64
            }
        }
        guard let bus else {
            FileHandle.standardError.write(Data(usage.utf8))
            return 64
        }
        do {
            try run(bus: bus, sessions: sessions, seconds: seconds, warmup: warmup)
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench probe: \(error)\n".utf8))
            return 1
        }
    }

    /// The recent poses of one camera, kept in place (``run(bus:sessions:seconds:warmup:)``
    /// mutates them through their index: no copy of the arrays per message).
    struct Recent {
        var t: [Double] = []
        var sentAt: [UInt64] = []
        var answered: [Int] = []
        var counted: [Bool] = []
    }

    struct Totals {
        var expected = 0
        var answered = 0
        var posesSeen = 0
        var poseBytes = 0
        var snapshotBytes = 0
        var snapshots = 0
        var events = 0
        var unmatched = 0
        var gaps: [String: UInt64] = ["pose": 0, "snapshot": 0, "event": 0]
    }

    /// What a topic's first byte says it is (`pose/`, `snapshot/`, `event/`).
    enum Kind: String {
        case pose, snapshot, event
    }

    /// The kind of `topic` and the bytes of its camera (the second segment), read in place.
    static func parse(topic: [UInt8]) -> (kind: Kind, camera: Range<Int>)? {
        let kind: Kind
        switch topic.first {
        case UInt8(ascii: "p"): kind = .pose
        case UInt8(ascii: "s"): kind = .snapshot
        case UInt8(ascii: "e"): kind = .event
        default: return nil
        }
        guard let slash = topic.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let start = slash + 1
        let end = topic[start...].firstIndex(of: UInt8(ascii: "/")) ?? topic.count
        guard end > start else { return nil }
        return (kind, start..<end)
    }

    /// FNV-1a over `bytes`: the probe's key for a topic or a camera (a few hundred of them: a
    /// collision is out of reach), so that no message makes a `String`.
    static func key(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    static func run(bus: String, sessions: Int, seconds: Double, warmup: Double) throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(.sub, context: context)
        try socket.set(.receiveHighWaterMark, 0)
        // A blocking receive with a timeout (as the C consumer does), not a poll then a receive.
        try socket.set(.receiveTimeout, .milliseconds(50))
        for prefix in ["pose/", "snapshot/", "event/"] { try socket.subscribe(prefix) }
        try socket.connect("ipc://\(bus)/sub.sock")
        FileHandle.standardError.write(Data("probe: listening on \(bus)\n".utf8))

        let started = WireHeader.now()
        let measureFrom = started + UInt64(warmup * 1e9)
        let deadline = started + UInt64(seconds * 1e9)
        // Poses published in the last second are not counted for loss: their answers may be
        // in flight when the probe stops.
        let countUntil = deadline - 1_000_000_000
        // The instrument does what the C floor's consumer does per message and little more:
        // the topic and camera read in place, a pose's time from its flat decoding, each
        // camera's recent poses mutated where they are. (It once made strings, a `Pose` of
        // dictionaries and a copy of each camera's arrays per message: about 13 % of a core at
        // 64 cameras, taken from the pipeline it measured.)
        var cameraIndex: [UInt64: Int] = [:]
        var recent: [Recent] = []
        var lastSequence: [UInt64: (stream: StreamID, sequence: UInt64)] = [:]
        var snapshotLatency: [Double] = []
        // The two legs of a snapshot's trip: pose sent -> snapshot sent (the broker's first
        // hop and the worker), snapshot sent -> received here (the broker's second hop).
        var firstLeg: [Double] = []
        var secondLeg: [Double] = []
        var eventLatency: [Double] = []
        var totals = Totals()
        let keep = 600
        snapshotLatency.reserveCapacity(1 << 20)
        firstLeg.reserveCapacity(1 << 20)
        secondLeg.reserveCapacity(1 << 20)

        func settle(_ entry: inout Recent, upTo count: Int) {
            for index in 0..<count where entry.counted[index] {
                totals.expected += sessions
                totals.answered += min(sessions, entry.answered[index])
            }
        }

        var frames: [[UInt8]] = []
        var flat = FlatPose()
        while WireHeader.now() < deadline {
            do {
                try socket.receive(into: &frames)
            } catch {
                if error == ZMQError.wouldBlock { continue }
                throw error
            }
            let received = WireHeader.now()
            guard frames.count == 2, let (kind, cameraBytes) = parse(topic: frames[0]) else { continue }
            let payload = frames[1]
            guard let header = try? WireHeader.decode(from: payload) else { continue }
            let topicKey = key(frames[0][...])
            if let last = lastSequence[topicKey], last.stream == header.streamID,
                header.sequence > last.sequence + 1
            {
                totals.gaps[kind.rawValue, default: 0] += header.sequence - last.sequence - 1
            }
            lastSequence[topicKey] = (header.streamID, header.sequence)
            let cameraKey = key(frames[0][cameraBytes])

            if kind == .pose {
                guard (try? PoseCodec.decode(payload, into: &flat)) != nil else { continue }
                let camera: Int
                if let known = cameraIndex[cameraKey] {
                    camera = known
                } else {
                    camera = recent.count
                    cameraIndex[cameraKey] = camera
                    recent.append(Recent())
                }
                recent[camera].t.append(flat.timestamp)
                recent[camera].sentAt.append(header.sentAt)
                recent[camera].answered.append(0)
                recent[camera].counted.append(header.sentAt >= measureFrom && header.sentAt < countUntil)
                if recent[camera].t.count > 2 * keep {
                    settle(&recent[camera], upTo: keep)
                    recent[camera].t.removeFirst(keep)
                    recent[camera].sentAt.removeFirst(keep)
                    recent[camera].answered.removeFirst(keep)
                    recent[camera].counted.removeFirst(keep)
                }
                totals.posesSeen += 1
                totals.poseBytes += payload.count
                continue
            }
            guard let t = jsonTime(payload) else { continue }
            if kind == .snapshot {
                totals.snapshots += 1
                totals.snapshotBytes += payload.count
            } else {
                totals.events += 1
            }
            guard let camera = cameraIndex[cameraKey], let index = recent[camera].t.lastIndex(of: t) else {
                totals.unmatched += 1
                continue
            }
            if kind == .snapshot { recent[camera].answered[index] += 1 }
            let sentAt = recent[camera].sentAt[index]
            guard sentAt >= measureFrom, received >= sentAt else { continue }
            let micros = Double(received - sentAt) / 1000
            if kind == .snapshot {
                snapshotLatency.append(micros)
                if header.sentAt >= sentAt, received >= header.sentAt {
                    firstLeg.append(Double(header.sentAt - sentAt) / 1000)
                    secondLeg.append(Double(received - header.sentAt) / 1000)
                }
            } else {
                eventLatency.append(micros)
            }
        }
        for camera in recent.indices {
            settle(&recent[camera], upTo: recent[camera].t.count)
        }
        socket.close()
        context.terminate()

        var numbers: [String: JSONNumber] = [
            "poses_seen": .int(totals.posesSeen), "snapshots": .int(totals.snapshots),
            "events": .int(totals.events),
            "unmatched": .int(totals.unmatched), "expected_answers": .int(totals.expected),
            "answers": .int(totals.answered),
            "lost_answers": .int(totals.expected - totals.answered),
            "loss_fraction": .double(
                totals.expected == 0
                    ? 0 : Double(totals.expected - totals.answered) / Double(totals.expected), 6),
            "pose_gaps": .int(Int(totals.gaps["pose"] ?? 0)),
            "snapshot_gaps": .int(Int(totals.gaps["snapshot"] ?? 0)),
            "event_gaps": .int(Int(totals.gaps["event"] ?? 0)),
            "pose_bytes_mean": .double(
                totals.posesSeen == 0 ? 0 : Double(totals.poseBytes) / Double(totals.posesSeen), 1),
            "snapshot_bytes_mean": .double(
                totals.snapshots == 0 ? 0 : Double(totals.snapshotBytes) / Double(totals.snapshots), 1),
        ]
        for (name, samples) in [("snapshot", snapshotLatency), ("event", eventLatency)] {
            let sorted = samples.sorted()
            numbers["\(name)_samples"] = .int(sorted.count)
            numbers["\(name)_median_us"] = sorted.isEmpty ? .null : .double(sorted[sorted.count / 2], 1)
            numbers["\(name)_p99_us"] =
                sorted.isEmpty
                ? .null : .double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))], 1)
            numbers["\(name)_max_us"] = sorted.isEmpty ? .null : .double(sorted[sorted.count - 1], 1)
        }
        for (name, samples) in [("first_leg", firstLeg), ("second_leg", secondLeg)] where !samples.isEmpty {
            let sorted = samples.sorted()
            numbers["\(name)_median_us"] = .double(sorted[sorted.count / 2], 1)
        }
        emit(["bench": "e2e-probe"], numbers)
    }

    /// The number after `"t":` in a JSON payload (after the wire header).
    static func jsonTime(_ payload: [UInt8]) -> Double? {
        let key = timeKey
        let start = WireFormat.headerSize
        guard payload.count > start + key.count else { return nil }
        var index = start
        let limit = min(payload.count - key.count, start + 64)
        while index <= limit {
            if payload[index] == key[0], payload[index + 1] == key[1], payload[index + 2] == key[2],
                payload[index + 3] == key[3]
            {
                var end = index + 4
                while end < payload.count, payload[end] != UInt8(ascii: ","),
                    payload[end] != UInt8(ascii: "}")
                {
                    end += 1
                }
                return parseDouble(payload[(index + 4)..<end])
            }
            index += 1
        }
        return nil
    }

    private static let timeKey: [UInt8] = Array("\"t\":".utf8)

    /// `strtod` over `bytes` (blanks around allowed) through a buffer on the stack.
    static func parseDouble(_ bytes: ArraySlice<UInt8>) -> Double? {
        guard bytes.count < 64 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            var count = 0
            for byte in bytes { buffer[count] = CChar(bitPattern: byte); count += 1 }
            buffer[count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(buffer.baseAddress!, &end)
            guard let end, end != buffer.baseAddress! else { return nil }
            return value
        }
    }
}
