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

    /// The recent poses of one camera.
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
        var recent: [String: Recent] = [:]
        var lastSequence: [String: (stream: StreamID, sequence: UInt64)] = [:]
        var snapshotLatency: [Double] = []
        // The two legs of a snapshot's trip: pose sent -> snapshot sent (the broker's first
        // hop and the worker), snapshot sent -> received here (the broker's second hop).
        var firstLeg: [Double] = []
        var secondLeg: [Double] = []
        var eventLatency: [Double] = []
        var totals = Totals()
        let keep = 600

        func settle(_ entry: inout Recent, upTo count: Int) {
            for index in 0..<count where entry.counted[index] {
                totals.expected += sessions
                totals.answered += min(sessions, entry.answered[index])
            }
        }

        var frames: [[UInt8]] = []
        while WireHeader.now() < deadline {
            do {
                try socket.receive(into: &frames)
            } catch {
                if error == ZMQError.wouldBlock { continue }
                throw error
            }
            let received = WireHeader.now()
            guard frames.count == 2, let topic = String(bytes: frames[0], encoding: .utf8) else { continue }
            let payload = frames[1]
            guard let header = try? WireHeader.decode(from: payload) else { continue }
            let parts = topic.split(separator: "/")
            guard parts.count >= 2 else { continue }
            let kind = String(parts[0])
            let camera = String(parts[1])
            if let last = lastSequence[topic], last.stream == header.streamID,
                header.sequence > last.sequence + 1
            {
                totals.gaps[kind, default: 0] += header.sequence - last.sequence - 1
            }
            lastSequence[topic] = (header.streamID, header.sequence)

            if kind == "pose" {
                guard let (_, pose) = try? PoseCodec.decode(payload) else { continue }
                var entry = recent[camera] ?? Recent()
                entry.t.append(pose.timestamp)
                entry.sentAt.append(header.sentAt)
                entry.answered.append(0)
                entry.counted.append(header.sentAt >= measureFrom && header.sentAt < countUntil)
                if entry.t.count > 2 * keep {
                    settle(&entry, upTo: keep)
                    entry.t.removeFirst(keep)
                    entry.sentAt.removeFirst(keep)
                    entry.answered.removeFirst(keep)
                    entry.counted.removeFirst(keep)
                }
                recent[camera] = entry
                totals.posesSeen += 1
                totals.poseBytes += payload.count
                continue
            }
            guard kind == "snapshot" || kind == "event", let t = jsonTime(payload) else { continue }
            if kind == "snapshot" {
                totals.snapshots += 1
                totals.snapshotBytes += payload.count
            } else {
                totals.events += 1
            }
            guard var entry = recent[camera], let index = entry.t.lastIndex(of: t) else {
                totals.unmatched += 1
                continue
            }
            if kind == "snapshot" { entry.answered[index] += 1 }
            let sentAt = entry.sentAt[index]
            recent[camera] = entry
            guard sentAt >= measureFrom, received >= sentAt else { continue }
            let micros = Double(received - sentAt) / 1000
            if kind == "snapshot" {
                snapshotLatency.append(micros)
                if header.sentAt >= sentAt, received >= header.sentAt {
                    firstLeg.append(Double(header.sentAt - sentAt) / 1000)
                    secondLeg.append(Double(received - header.sentAt) / 1000)
                }
            } else {
                eventLatency.append(micros)
            }
        }
        for camera in Array(recent.keys) {
            var entry = recent[camera]!
            settle(&entry, upTo: entry.t.count)
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
        let key: [UInt8] = Array("\"t\":".utf8)
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
                return String(decoding: payload[(index + 4)..<end], as: UTF8.self).trimmingCharacters(
                    in: .whitespaces
                )
                .withCString { strtod($0, nil) }
            }
            index += 1
        }
        return nil
    }
}
