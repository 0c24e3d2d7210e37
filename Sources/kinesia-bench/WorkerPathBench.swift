import Foundation
import KinesiaJournal
import KinesiaMotion
import KinesiaWire
import KinesiaWorker

/// `kinesia-bench worker-path`: what a worker does per pose besides the sockets, step by step,
/// to show what limits its throughput: decoding the pose record (``PoseCodec/decode(_:)``, or
/// into a ``FlatPose`` as the worker does), decoding plus two analyses (left and right) through
/// either form, the same through the worker's core (``WorkerCore``: the analyses, the events'
/// and snapshots' JSON and the publish decisions of `kinesia worker`, without its sockets), and
/// encoding a snapshot's JSON (``MotionJSON``; a worker sends one per session at most 15 times
/// a second of pose time, so about one for every two poses of a 60 poses/s camera with two
/// sessions), and the checksum of a journal record of that size (CRC-32C by the processor's
/// instruction and by the tables).
///
/// CPU time per call, median of `--rounds`, and allocations per call when
/// `scripts/malloc_count.c` is preloaded.
enum WorkerPathBench {
    static let usage = "usage: kinesia-bench worker-path [--poses N] [--rounds R] [--exercise ID]\n"

    static func main(_ arguments: [String]) -> Int32 {
        var poses = 200_000
        var rounds = 5
        var exercise = Exercise.shoulderAbduction
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--poses", let value?) where Int(value).map({ $0 >= 1 }) == true: poses = Int(value)!
            case ("--rounds", let value?) where Int(value).map({ $0 >= 1 }) == true: rounds = Int(value)!
            case ("--exercise", let value?) where Exercise.named(value) != nil:
                exercise = Exercise.named(value)!
            default:
                FileHandle.standardError.write(Data(usage.utf8))
                return 64
            }
        }
        do {
            try run(exercise: exercise, poses: poses, rounds: rounds)
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench worker-path: \(error)\n".utf8))
            return 1
        }
    }

    static func run(exercise: Exercise, poses count: Int, rounds: Int) throws {
        let loop = try PoseLoop(exercise: exercise, count: 2_000, frameRate: 60)
        let header = WireHeader(kind: .pose, streamID: StreamID(1), sequence: 0, sentAt: 0)
        let payloads = try loop.poses.map { (pose) throws(WireError) in
            try PoseCodec.encode(pose, header: header)
        }
        var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
        var replay = loop
        for _ in 0..<loop.count { _ = analyzer.process(replay.next()) }
        let snapshot = analyzer.snapshot
        let counter = AllocationCounter()

        func measure(_ name: String, _ body: (Int) -> Int) {
            var samples: [Double] = []
            var wallSamples: [Double] = []
            var checksum = 0
            _ = body(min(count, 1000))
            for _ in 0..<rounds {
                let watch = Stopwatch()
                checksum &+= body(count)
                let elapsed = watch.elapsed()
                samples.append(elapsed.cpu * 1e9 / Double(count))
                wallSamples.append(elapsed.wall * 1e9 / Double(count))
            }
            wallSamples.sort()
            let before = counter.count
            checksum &+= body(count)
            let allocations = counter.count &- before
            samples.sort()
            emit(
                ["bench": "worker-path", "step": name, "exercise": exercise.id],
                [
                    "ns_per_call": .double(samples[samples.count / 2], 1), "ns_min": .double(samples[0], 1),
                    "ns_max": .double(samples[samples.count - 1], 1),
                    "wall_ns_per_call": .double(wallSamples[wallSamples.count / 2], 1),
                    "allocs_per_call": counter.isAvailable
                        ? .double(Double(allocations) / Double(count), 3) : .null,
                    "checksum": .int(checksum & 0xFFFF),
                ])
        }

        measure("decodePose") { calls in
            var sum = 0
            for index in 0..<calls {
                if let (_, pose) = try? PoseCodec.decode(payloads[index % payloads.count]) {
                    sum &+= pose.points.count
                }
            }
            return sum
        }
        measure("decodeFlatPose") { calls in
            var sum = 0
            var flat = FlatPose()
            for index in 0..<calls {
                if (try? PoseCodec.decode(payloads[index % payloads.count], into: &flat)) != nil {
                    sum &+= flat.pointMask.nonzeroBitCount
                }
            }
            return sum
        }
        // The worker's per-pose work for one camera with two sessions (left and right), without
        // the sockets and the JSON: decode once, analyse twice. Timestamps move on by the loop's
        // period on every pass, so every pose is accepted.
        var lap = 0
        var sessions = [
            MotionAnalyzer(exercise: exercise, side: .left), .init(exercise: exercise, side: .right),
        ]
        measure("decodePose+2analyses") { calls in
            var sum = 0
            for _ in 0..<calls {
                let slot = lap % payloads.count
                let shift = Double(lap / payloads.count) * loop.period
                lap += 1
                guard var (_, pose) = try? PoseCodec.decode(payloads[slot]) else { continue }
                pose.timestamp += shift
                for session in sessions.indices { sum &+= sessions[session].process(pose).count }
            }
            return sum
        }
        lap = 0
        sessions = [MotionAnalyzer(exercise: exercise, side: .left), .init(exercise: exercise, side: .right)]
        measure("decodeFlatPose+2analyses") { calls in
            var sum = 0
            var flat = FlatPose()
            for _ in 0..<calls {
                let slot = lap % payloads.count
                let shift = Double(lap / payloads.count) * loop.period
                lap += 1
                guard (try? PoseCodec.decode(payloads[slot], into: &flat)) != nil else { continue }
                flat.timestamp += shift
                for session in sessions.indices { sum &+= sessions[session].process(flat).count }
            }
            return sum
        }
        // The same with the worker's core (what `kinesia worker` does per pose besides the
        // sockets): decode once, two sessions, the events' and snapshots' JSON (15 snapshots a
        // second of pose time per session), every publish reported back.
        let topic = try Topic.pose(camera: "cam0")
        var actions: [WorkerCore.Action] = []
        /// The loop's next pose decoded into `flat`, its timestamp moved on by the laps so
        /// far, and its header (numbered by the lap); `nil` when it does not decode.
        func nextPose(into flat: inout FlatPose) -> WireHeader? {
            let slot = lap % payloads.count
            let shift = Double(lap / payloads.count) * loop.period
            let header = WireHeader(kind: .pose, streamID: StreamID(1), sequence: UInt64(lap), sentAt: 0)
            lap += 1
            guard (try? PoseCodec.decode(payloads[slot], into: &flat)) != nil else { return nil }
            flat.timestamp += shift
            return header
        }
        // The unordered path (`--no-journal`: poses analysed as they come), then the ordered
        // path of a journaling worker (`kinesia worker` with a state directory, the default):
        // each pose goes through the camera's pose feed, which keeps the order across holes
        // and restarts.
        for ordered in [false, true] {
            lap = 0
            var core = try WorkerCore(
                sessions: [
                    WorkerSession(camera: "cam0", name: "left", exercise: exercise, side: .left),
                    WorkerSession(camera: "cam0", name: "right", exercise: exercise, side: .right),
                ], snapshotRate: 15, resume: ordered ? [:] : nil)
            core.start(now: .zero, into: &actions)
            measure(ordered ? "decodeFlatPose+orderedWorkerCore" : "decodeFlatPose+workerCore") { calls in
                var sum = 0
                var flat = FlatPose()
                for _ in 0..<calls {
                    guard let poseHeader = nextPose(into: &flat) else { continue }
                    if ordered {
                        core.receiveLive(flat, on: topic, header: poseHeader, now: .zero, into: &actions)
                    } else {
                        core.receive(flat, on: topic, header: poseHeader, sequence: .inOrder, into: &actions)
                    }
                    for case .publish(let publication) in actions {
                        sum &+= publication.json.utf8.count
                        core.published(publication, outcome: .sent)
                    }
                }
                return sum
            }
        }
        // The same again, each publication then encoded as the publisher does (its wire
        // frames), without and with the journal the worker writes before publishing (written
        // behind, as a worker writes it; fsync within 200 ms, the default; a temporary state
        // directory): the journal's cost per pose, measured in the same run.
        for journaling in [false, true] {
            lap = 0
            var journalCore = try WorkerCore(
                sessions: [
                    WorkerSession(camera: "cam0", name: "left", exercise: exercise, side: .left),
                    WorkerSession(camera: "cam0", name: "right", exercise: exercise, side: .right),
                ], snapshotRate: 15)
            var template = Array("/tmp/kinesia-bench-journal.XXXXXX".utf8CString)
            guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) != nil }) else {
                throw JournalError.notAJournal("mkdtemp")
            }
            let directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try JournalStore(directory: directory + "/journal", policy: JournalPolicy())
            var writers: [Topic: JournalWriter] = [:]
            var encoder = WireEncoder(streamID: StreamID(7))
            var frames: [[UInt8]] = [[], []]
            var topicBytes: [Topic: [UInt8]] = [:]
            measure(
                journaling ? "decodeFlatPose+workerCore+encode+journal" : "decodeFlatPose+workerCore+encode"
            ) {
                calls in
                var sum = 0
                var flat = FlatPose()
                for _ in 0..<calls {
                    guard let poseHeader = nextPose(into: &flat) else { continue }
                    journalCore.receive(
                        flat, on: topic, header: poseHeader, sequence: .inOrder, into: &actions)
                    for case .publish(let publication) in actions {
                        let bytes = topicBytes[publication.topic] ?? publication.topic.bytes
                        topicBytes[publication.topic] = bytes
                        frames[0] = bytes
                        guard
                            let header = try? encoder.encode(
                                json: Array(publication.json.utf8), on: publication.topic, into: &frames[1])
                        else { continue }
                        if journaling {
                            var writer = writers[publication.topic]
                            if writer == nil {
                                writer = try? store.openWriter(
                                    for: JournalStream(topic: publication.topic, streamID: StreamID(7)))
                                // As a worker journals: records gathered and written behind.
                                writer?.writesBehind = true
                                writers[publication.topic] = writer
                            }
                            try? writer?.append(sequence: header.sequence, frames: frames)
                        }
                        sum &+= frames[1].count
                        journalCore.published(publication, outcome: .sent)
                    }
                    // A worker writes what it gathered every 100 ms (PublishJournal.writeBehind):
                    // about 1,000 poses at 10,000 poses/s, the batch this bench writes.
                    if journaling, lap % 1_000 == 0 {
                        for writer in writers.values { try? writer.writePending() }
                    }
                }
                for writer in writers.values { try? writer.syncIfDue() }
                return sum
            }
        }
        measure("encodeSnapshotJSON") { calls in
            var sum = 0
            for index in 0..<calls { sum &+= MotionJSON.encode(snapshot, at: Double(index)).utf8.count }
            return sum
        }
        // The checksum of one journal record the size of a snapshot's (its frames, about 500
        // bytes), by the processor's instruction and by the tables, in the same run.
        let record = (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }
        for method in [CRC32C.Method.instruction, .tables] {
            measure(method == .instruction ? "crc32c512Instruction" : "crc32c512Tables") { calls in
                var sum = 0
                record.withUnsafeBytes { bytes in
                    for _ in 0..<calls {
                        var crc = CRC32C(method: method)
                        crc.update(bytes)
                        sum &+= Int(crc.value & 0xFF)
                    }
                }
                return sum
            }
        }
    }
}
