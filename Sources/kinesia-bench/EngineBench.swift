import Foundation
import KinesiaMotion
import KinesiaSimulation

/// `kinesia-bench engine`: nanoseconds per pose for every catalog exercise, through the
/// value-type core (``MotionAnalyzer/process(_:)``) and through ``MotionSession/process(_:)``
/// on the main actor, and heap allocations per pose in steady state.
///
/// Method: the simulator makes `--loop` realistic poses per exercise once (30 poses/s, both
/// sides moving, detector noise, dropouts and faults). The measured loop replays them over and
/// over, shifting each pose's timestamp by the loop's duration on every pass
/// (`var pose = poses[i]; pose.timestamp += offset`: the copy shares the pose's dictionaries,
/// so the replay itself allocates nothing). Every pose goes to two analyzers (or sessions),
/// left and right, as a worker runs them for one camera; a "pose" below is one `process(_:)`
/// call. Each round starts fresh analyzers, warms them up on one pass of the loop, then times
/// `--poses` calls; the figure is the median over `--rounds` rounds with the minimum and maximum,
/// in the thread's CPU time (`ns_per_pose`: what the work costs, whatever else shares the core)
/// and in wall time (`wall_ns_per_pose`).
///
/// Allocations are counted when `scripts/malloc_count.c` is preloaded (`LD_PRELOAD`): one
/// extra steady-state pass reads its counter around every call, and reports allocations per
/// pose overall, on the poses that produced no event, and per event (an event's payload is an
/// array that must be allocated). Without the preload the figures are `null`.
enum EngineBench {
    struct Options {
        var poses = 1_000_000
        var rounds = 5
        var loop = 20_000
        var exercise: String?
    }

    static let usage =
        "usage: kinesia-bench engine [--poses N] [--rounds R] [--loop POSES] [--exercise ID]\n"

    @MainActor
    static func main(_ arguments: [String]) -> Int32 {
        var options = Options()
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--poses", let value?) where Int(value).map({ $0 >= 1 }) == true:
                options.poses = Int(value)!
            case ("--rounds", let value?) where Int(value).map({ $0 >= 1 }) == true:
                options.rounds = Int(value)!
            case ("--loop", let value?) where Int(value).map({ $0 >= 100 }) == true:
                options.loop = Int(value)!
            case ("--exercise", let value?) where Exercise.named(value) != nil:
                options.exercise = value
            default:
                let valid = Exercise.catalog.map(\.id).joined(separator: ", ")
                FileHandle.standardError.write(Data((usage + "exercises: \(valid)\n").utf8))
                return 64
            }
        }
        let exercises = Exercise.catalog.filter { options.exercise == nil || $0.id == options.exercise }
        let counter = AllocationCounter()
        do {
            for exercise in exercises {
                let loop = try PoseLoop(exercise: exercise, count: options.loop)
                run(exercise: exercise, loop: loop, options: options, counter: counter)
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench engine: \(error)\n".utf8))
            return 1
        }
    }

    @MainActor
    static func run(exercise: Exercise, loop: PoseLoop, options: Options, counter: AllocationCounter) {
        for path in ["analyzer", "session"] {
            var samples: [Double] = []
            var wallSamples: [Double] = []
            var checksum = 0
            var events = 0
            for _ in 0..<options.rounds {
                var replay = loop
                let result: (elapsed: Elapsed, events: Int, checksum: Int)
                if path == "analyzer" {
                    var left = MotionAnalyzer(exercise: exercise, side: .left)
                    var right = MotionAnalyzer(exercise: exercise, side: .right)
                    _ = drive(&left, &right, &replay, poses: loop.count)
                    result = drive(&left, &right, &replay, poses: options.poses)
                } else {
                    let left = MotionSession(exercise: exercise, side: .left)
                    let right = MotionSession(exercise: exercise, side: .right)
                    _ = drive(left, right, &replay, poses: loop.count)
                    result = drive(left, right, &replay, poses: options.poses)
                }
                samples.append(result.elapsed.cpu * 1e9 / Double(2 * options.poses))
                wallSamples.append(result.elapsed.wall * 1e9 / Double(2 * options.poses))
                checksum = result.checksum
                events = result.events
            }
            samples.sort()
            wallSamples.sort()
            let allocations =
                counter.isAvailable ? countAllocations(exercise, loop, options, path, counter) : nil
            var line: [String: JSONNumber] = [
                "ns_per_pose": .double(samples[samples.count / 2], 1),
                "ns_min": .double(samples[0], 1),
                "ns_max": .double(samples[samples.count - 1], 1),
                "wall_ns_per_pose": .double(wallSamples[wallSamples.count / 2], 1),
                "wall_ns_min": .double(wallSamples[0], 1),
                "wall_ns_max": .double(wallSamples[wallSamples.count - 1], 1),
                "rounds": .int(options.rounds),
                "poses": .int(2 * options.poses),
                "events_per_pose": .double(Double(events) / Double(2 * options.poses), 5),
                "checksum": .int(checksum),
            ]
            if let allocations {
                line["allocs_per_pose"] = .double(allocations.perPose, 5)
                line["allocs_per_pose_without_events"] = .double(allocations.perQuietPose, 5)
                line["allocs_per_event"] = .double(allocations.perEvent, 3)
                line["alloc_bytes_per_pose"] = .double(allocations.bytesPerPose, 2)
            } else {
                for key in ["allocs_per_pose", "allocs_per_pose_without_events", "allocs_per_event"] {
                    line[key] = .null
                }
            }
            emit(["bench": "engine", "exercise": exercise.id, "path": path], line)
        }
    }

    // MARK: - Measured loops

    static func drive(
        _ left: inout MotionAnalyzer, _ right: inout MotionAnalyzer, _ replay: inout PoseLoop, poses: Int
    ) -> (elapsed: Elapsed, events: Int, checksum: Int) {
        var events = 0
        let start = Stopwatch()
        for _ in 0..<poses {
            let pose = replay.next()
            events &+= left.process(pose).count
            events &+= right.process(pose).count
        }
        let elapsed = start.elapsed()
        let checksum = left.snapshot.repCount &* 1000 &+ right.snapshot.repCount
        return (elapsed, events, checksum)
    }

    @MainActor
    static func drive(
        _ left: MotionSession, _ right: MotionSession, _ replay: inout PoseLoop, poses: Int
    ) -> (elapsed: Elapsed, events: Int, checksum: Int) {
        var events = 0
        let start = Stopwatch()
        for _ in 0..<poses {
            let pose = replay.next()
            events &+= left.process(pose).count
            events &+= right.process(pose).count
        }
        let elapsed = start.elapsed()
        let checksum = left.snapshot.repCount &* 1000 &+ right.snapshot.repCount
        return (elapsed, events, checksum)
    }

    struct Allocations {
        var perPose: Double
        var perQuietPose: Double
        var perEvent: Double
        var bytesPerPose: Double
    }

    /// One steady-state pass (after a warm-up pass) reading the counter around every call.
    @MainActor
    static func countAllocations(
        _ exercise: Exercise, _ loop: PoseLoop, _ options: Options, _ path: String,
        _ counter: AllocationCounter
    ) -> Allocations {
        var replay = loop
        var analyzers = [
            MotionAnalyzer(exercise: exercise, side: .left), MotionAnalyzer(exercise: exercise, side: .right),
        ]
        let sessions = [
            MotionSession(exercise: exercise, side: .left), MotionSession(exercise: exercise, side: .right),
        ]
        let calls = 2 * options.poses
        var quiet = 0
        var quietAllocations: UInt64 = 0
        var events = 0
        var totalAllocations: UInt64 = 0
        var totalBytes: UInt64 = 0
        for pass in 0..<2 {
            let poses = pass == 0 ? loop.count : options.poses
            for _ in 0..<poses {
                let pose = replay.next()
                for side in 0..<2 {
                    let before = counter.count
                    let bytesBefore = counter.bytes
                    let produced =
                        path == "analyzer"
                        ? analyzers[side].process(pose).count : sessions[side].process(pose).count
                    let allocated = counter.count &- before
                    guard pass == 1 else { continue }
                    totalAllocations &+= allocated
                    totalBytes &+= counter.bytes &- bytesBefore
                    events += produced
                    if produced == 0 {
                        quiet += 1
                        quietAllocations &+= allocated
                    }
                }
            }
        }
        let eventful = totalAllocations - quietAllocations
        return Allocations(
            perPose: Double(totalAllocations) / Double(calls),
            perQuietPose: quiet == 0 ? 0 : Double(quietAllocations) / Double(quiet),
            perEvent: events == 0 ? 0 : Double(eventful) / Double(events),
            bytesPerPose: Double(totalBytes) / Double(calls))
    }
}

/// Realistic simulated poses of one exercise, replayed endlessly with shifted timestamps.
struct PoseLoop {
    let poses: [Pose]
    /// The loop's duration: the shift added to the timestamps on every pass.
    let period: Double
    private var index = 0
    private var offset = 0.0

    var count: Int { poses.count }

    init(exercise: Exercise, count: Int, frameRate: Double = 30) throws {
        let simulator = try ExerciseSimulator(
            exercise: exercise, options: SimulationOptions(seed: 7, frameRate: frameRate, sides: .alternating)
        )
        var stream = simulator.endless()
        var poses: [Pose] = []
        poses.reserveCapacity(count)
        while poses.count < count, let pose = stream.next() { poses.append(pose) }
        self.poses = poses
        period = (poses[poses.count - 1].timestamp - poses[0].timestamp) + 1 / frameRate
    }

    /// The next pose (no allocation: the copy shares the stored pose's dictionaries).
    @inline(__always)
    mutating func next() -> Pose {
        var pose = poses[index]
        pose.timestamp += offset
        index += 1
        if index == poses.count {
            index = 0
            offset += period
        }
        return pose
    }
}

/// The counters of `scripts/malloc_count.c`, when it is preloaded.
final class AllocationCounter {
    private let countPointer: UnsafeMutablePointer<UInt64>?
    private let bytesPointer: UnsafeMutablePointer<UInt64>?

    init() {
        let handle = dlopen(nil, RTLD_NOW)
        countPointer = dlsym(handle, "kinesia_malloc_count")?.assumingMemoryBound(to: UInt64.self)
        bytesPointer = dlsym(handle, "kinesia_malloc_bytes")?.assumingMemoryBound(to: UInt64.self)
    }

    var isAvailable: Bool { countPointer != nil }
    /// Allocating calls so far (0 without the preload).
    var count: UInt64 { countPointer?.pointee ?? 0 }
    /// Bytes asked for so far (0 without the preload).
    var bytes: UInt64 { bytesPointer?.pointee ?? 0 }
}

/// A number in a JSON line.
enum JSONNumber {
    case int(Int)
    case double(Double, Int)
    case null

    var text: String {
        switch self {
        case .int(let value): String(value)
        case .double(let value, let digits): value.isFinite ? String(format: "%.\(digits)f", value) : "null"
        case .null: "null"
        }
    }
}

/// Writes one JSON object on one line: string fields first, then numbers, keys sorted.
func emit(_ strings: [String: String], _ numbers: [String: JSONNumber]) {
    let stringPart = strings.sorted { $0.key < $1.key }.map { #""\#($0.key)":"\#($0.value)""# }
    let numberPart = numbers.sorted { $0.key < $1.key }.map { #""\#($0.key)":\#($0.value.text)"# }
    let line = "{" + (stringPart + numberPart).joined(separator: ",") + "}\n"
    FileHandle.standardOutput.write(Data(line.utf8))
}

/// Seconds of wall time and of this thread's CPU time.
struct Elapsed {
    var wall: Double
    var cpu: Double
}

/// Measures wall time (`CLOCK_MONOTONIC`) and the calling thread's CPU time
/// (`CLOCK_THREAD_CPUTIME_ID`) together. On a shared machine the CPU time is the cost of the
/// work itself; wall time also counts the time other processes held the core.
struct Stopwatch {
    private let wall = Stopwatch.read(CLOCK_MONOTONIC)
    private let cpu = Stopwatch.read(CLOCK_THREAD_CPUTIME_ID)

    func elapsed() -> Elapsed {
        let cpuNow = Stopwatch.read(CLOCK_THREAD_CPUTIME_ID)
        let wallNow = Stopwatch.read(CLOCK_MONOTONIC)
        return Elapsed(wall: Double(wallNow - wall) / 1e9, cpu: Double(cpuNow - cpu) / 1e9)
    }

    @inline(__always)
    static func read(_ clock: clockid_t) -> UInt64 {
        var time = timespec()
        clock_gettime(clock, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
