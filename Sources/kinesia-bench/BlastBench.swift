import Foundation
import KinesiaBus
import KinesiaMotion
import KinesiaSimulation
import KinesiaWire

/// `kinesia-bench blast`: the load generator of the throughput benchmark
/// (scripts/bench_e2e.py): publishes simulated poses of many cameras at a fixed total rate on a
/// running broker, in the wire format `kinesia ingest` uses.
///
/// Poses are made once by the simulator (60 poses/s of pose time, both sides moving) and
/// encoded once per camera; each send patches the header's sequence number and send time and
/// the pose's timestamp (shifted by the loop's duration on every pass) where the pose is kept,
/// and sends it from there (no copy, no allocation), so the generator costs little more than
/// the send itself: its processor is taken from the processes it measures. Message `i` goes to camera `i % cameras`.
///
/// Flow control: an XPUB socket with `ZMQ_XPUB_NODROP` and a bounded queue, sends without
/// waiting; a full queue makes the generator wait and retry (counted as `blocked`), so nothing
/// is lost before the broker: any loss is downstream (the broker's queue to a worker that
/// cannot keep up). The generator first waits until every camera's topic is subscribed.
enum BlastBench {
    static let usage =
        "usage: kinesia-bench blast --bus DIR --cameras N --rate POSES_PER_S --seconds S [--exercise ID]"
        + " [--skip-every N]\n"

    static func main(_ arguments: [String]) -> Int32 {
        var bus: String?
        var cameras = 1
        var rate = 10_000.0
        var seconds = 5.0
        var exercise = Exercise.shoulderAbduction
        var skipEvery: Int?
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--bus", let value?): bus = value
            case ("--cameras", let value?) where Int(value).map({ $0 >= 1 }) == true: cameras = Int(value)!
            case ("--rate", let value?) where Double(value).map({ $0 > 0 }) == true: rate = Double(value)!
            case ("--seconds", let value?) where Double(value).map({ $0 > 0 }) == true:
                seconds = Double(value)!
            case ("--exercise", let value?) where Exercise.named(value) != nil:
                exercise = Exercise.named(value)!
            case ("--skip-every", let value?) where Int(value).map({ $0 >= 2 }) == true:
                skipEvery = Int(value)!
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
            try run(
                bus: bus, cameras: cameras, rate: rate, seconds: seconds, exercise: exercise,
                skipEvery: skipEvery)
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench blast: \(error)\n".utf8))
            return 1
        }
    }

    /// One camera's encoded poses.
    struct Camera {
        var topic: [UInt8]
        var payloads: [[UInt8]]
        var times: [Double]
        var period: Double
        var next = 0
        var pass = 0
        var sequence: UInt64 = 0
    }

    /// With `skipEvery`, each camera's sequence numbers jump by two after every `skipEvery`-th
    /// pose: a publisher that leaves holes on purpose and serves no replay (`sent` counts the
    /// poses sent, `skipped` the numbers left out).
    static func run(
        bus: String, cameras count: Int, rate: Double, seconds: Double, exercise: Exercise,
        skipEvery: Int? = nil
    ) throws {
        let frameRate = 60.0
        let simulator = try ExerciseSimulator(
            exercise: exercise,
            options: SimulationOptions(seed: 11, frameRate: frameRate, sides: .alternating))
        var stream = simulator.endless()
        var poses: [Pose] = []
        for _ in 0..<1200 { poses.append(stream.next()!) }
        let stream0 = StreamID.random()
        var cameras: [Camera] = []
        for camera in 0..<count {
            let topic = try Topic.pose(camera: "cam\(camera)")
            // Each camera starts at its own place in the loop, so cameras do not move in step.
            let shift = (camera * 97) % poses.count
            let ordered = Array(poses[shift...] + poses[..<shift])
            var times: [Double] = []
            var payloads: [[UInt8]] = []
            for (index, pose) in ordered.enumerated() {
                var shifted = pose
                shifted.timestamp = Double(index) / frameRate
                times.append(shifted.timestamp)
                payloads.append(
                    try PoseCodec.encode(
                        shifted, header: WireHeader(kind: .pose, streamID: stream0, sequence: 0, sentAt: 0)))
            }
            cameras.append(
                Camera(
                    topic: topic.bytes, payloads: payloads, times: times,
                    period: Double(ordered.count) / frameRate))
        }

        let context = try ZMQContext()
        let socket = try ZMQSocket(.xpub, context: context, linger: .seconds(2))
        try socket.set(.sendHighWaterMark, 10_000)
        try socket.set(.xpubNoDrop, true)
        try socket.connect("ipc://\(bus)/pub.sock")

        // Wait until every camera is subscribed (by the workers, through the broker).
        var subscribed = Set<[UInt8]>()
        let wanted = Set(cameras.map(\.topic))
        let waitUntil = WireHeader.now() + 20_000_000_000
        while !wanted.isSubset(of: subscribed), WireHeader.now() < waitUntil {
            guard let frames = try socket.receive(timeout: .milliseconds(100)), let first = frames.first,
                first.first == 1
            else { continue }
            subscribed.insert(Array(first.dropFirst()))
        }
        let ready = wanted.filter { prefix in subscribed.contains { prefix.starts(with: $0) } }.count
        if ready < wanted.count {
            FileHandle.standardError.write(
                Data("blast: only \(ready) of \(wanted.count) cameras subscribed\n".utf8))
        }

        let start = WireHeader.now()
        let end = start + UInt64(seconds * 1e9)
        var sent = 0
        var blocked = 0
        var skipped = 0
        var camera = 0
        var now = start
        // The frames of the message being sent: reused, no array made per pose.
        var message: [[UInt8]] = [[], []]
        while now < end {
            let due = Int(Double(now - start) / 1e9 * rate)
            if sent >= due {
                // Ahead of schedule: sleep until the next pose is due, at least 200 µs and at most
                // 1 ms, and then send every pose that is due in one burst. A busy wait here would
                // take a whole core from the processes measured (at 40,000 poses/s a pose is due
                // every 25 µs); bursts of at most 1 ms of poses are what a broker sees from 64
                // ingests anyway.
                let wait = (Double(sent + 1) / rate) - Double(now - start) / 1e9
                usleep(UInt32(min(max(wait, 0.000_2), 0.001) * 1e6))
                now = WireHeader.now()
                continue
            }
            var batch = min(due - sent, 256)
            while batch > 0 {
                let index = cameras[camera].next
                let t = cameras[camera].times[index] + Double(cameras[camera].pass) * cameras[camera].period
                let sequence = cameras[camera].sequence
                let sentAt = WireHeader.now()
                // Patched where it is kept (its only reference: no copy), then sent from there.
                cameras[camera].payloads[index].withUnsafeMutableBytes { bytes in
                    bytes.storeBytes(of: sequence.littleEndian, toByteOffset: 12, as: UInt64.self)
                    bytes.storeBytes(of: sentAt.littleEndian, toByteOffset: 20, as: UInt64.self)
                    bytes.storeBytes(
                        of: t.bitPattern.littleEndian, toByteOffset: WireFormat.headerSize, as: UInt64.self)
                }
                message[0] = cameras[camera].topic
                message[1] = cameras[camera].payloads[index]
                while try !socket.trySend(message) {
                    blocked += 1
                    // Drain subscription messages, then wait for the queue to empty a little.
                    while try socket.tryReceive() != nil {}
                    usleep(50)
                }
                // Let go of the payload, so that the next patch finds it unshared.
                message[1] = []
                cameras[camera].sequence += 1
                if let skipEvery, cameras[camera].sequence % UInt64(skipEvery) == 0 {
                    cameras[camera].sequence += 1
                    skipped += 1
                }
                cameras[camera].next += 1
                if cameras[camera].next == cameras[camera].payloads.count {
                    cameras[camera].next = 0
                    cameras[camera].pass += 1
                }
                camera = camera + 1 == cameras.count ? 0 : camera + 1
                sent += 1
                batch -= 1
            }
            now = WireHeader.now()
        }
        let elapsed = Double(WireHeader.now() - start) / 1e9
        socket.close()
        context.terminate()
        emit(
            ["bench": "blast"],
            [
                "cameras": .int(count), "rate_offered": .double(rate, 0), "sent": .int(sent),
                "seconds": .double(elapsed, 3), "rate_sent": .double(Double(sent) / elapsed, 0),
                "blocked": .int(blocked), "skipped": .int(skipped),
                "pose_bytes": .int(cameras[0].payloads[0].count),
            ])
    }
}
