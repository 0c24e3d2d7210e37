import Foundation
import KinesiaMotion
import KinesiaSimulation

/// `kinesia-bench analysis`: nanoseconds per ``MotionAnalyzer/process(_:)`` for every catalog
/// exercise, with a baseline measured in the same run.
///
/// Method: for each exercise, the simulator makes 100 s of poses (30 fps, pixel noise, dropped
/// joints, injected faults, both sides moving in turn); the analyzer then processes `--poses`
/// poses, cycling through them with timestamps running on (a live stream's pose is fresh in
/// the cache, as these are). Each round is timed by the wall clock and by the thread's CPU
/// clock; the figures are the medians over `--rounds` rounds. The baseline is a loop that only
/// reads every point and confidence of the same poses (the least any analysis must do), so the
/// ratio is comparable between machines. `residentGrowthBytes` is the growth of the process's
/// resident memory over a round, after a warm-up round (Linux `/proc/self/statm`; 0 when flat).
enum AnalysisBench {
    struct Options {
        var poses = 1_000_000
        var rounds = 5
        var exercises = Exercise.catalog
    }

    static let usage = "usage: kinesia-bench analysis [--poses N>=1000] [--rounds N>=1] [--exercise ID]\n"

    static func main(_ arguments: [String]) -> Int32 {
        var options = Options()
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--poses", let value?) where (Int(value) ?? 0) >= 1000:
                options.poses = Int(value) ?? options.poses
            case ("--rounds", let value?) where (Int(value) ?? 0) >= 1:
                options.rounds = Int(value) ?? options.rounds
            case ("--exercise", let value?) where Exercise.named(value) != nil:
                options.exercises = Exercise.named(value).map { [$0] } ?? []
            default:
                FileHandle.standardError.write(Data(usage.utf8))
                return 64
            }
        }
        do {
            for exercise in options.exercises {
                print(try measure(exercise, options: options))
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench analysis: \(error)\n".utf8))
            return 1
        }
    }

    /// One exercise's figures, as a JSON object on one line.
    static func measure(_ exercise: Exercise, options: Options) throws -> String {
        let frameRate = 30.0
        var simulation = SimulationOptions(seed: 1, frameRate: frameRate)
        simulation.reps = 1000
        var stream = try ExerciseSimulator(exercise: exercise, options: simulation).endless()
        let poses = (0..<3000).compactMap { _ in stream.next() }
        guard !poses.isEmpty else { return "{}" }

        var wall: [Double] = []
        var cpu: [Double] = []
        var baseline: [Double] = []
        var events = 0
        var counted = 0
        var residentGrowth = 0
        for round in 0..<(options.rounds + 1) {
            var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
            let residentBefore = residentBytes()
            let wallStart = DispatchTime.now().uptimeNanoseconds
            let cpuStart = threadCPUNanoseconds()
            var produced = 0
            for index in 0..<options.poses {
                var pose = poses[index % poses.count]
                pose.timestamp = Double(index) / frameRate
                produced &+= analyzer.process(pose).count
            }
            let cpuEnd = threadCPUNanoseconds()
            let wallEnd = DispatchTime.now().uptimeNanoseconds
            let residentAfter = residentBytes()
            // Round 0 warms up (caches, lazy runtime metadata) and is not counted.
            guard round > 0 else { continue }
            wall.append(Double(wallEnd &- wallStart) / Double(options.poses))
            cpu.append(Double(cpuEnd &- cpuStart) / Double(options.poses))
            events = produced
            counted = analyzer.snapshot.repCount + analyzer.snapshot.rejectedCount
            residentGrowth = max(residentGrowth, residentAfter - residentBefore)

            let baselineStart = threadCPUNanoseconds()
            var checksum = 0.0
            for index in 0..<options.poses {
                var pose = poses[index % poses.count]
                pose.timestamp = Double(index) / frameRate
                checksum += touch(pose)
            }
            let baselineEnd = threadCPUNanoseconds()
            if checksum.isNaN { print("") }  // keeps the loop from being optimised away
            baseline.append(Double(baselineEnd &- baselineStart) / Double(options.poses))
        }
        let wallNs = median(wall)
        let cpuNs = median(cpu)
        let baselineNs = median(baseline)
        return """
            {"bench":"analysis","exercise":"\(exercise.id)","poses":\(options.poses),\
            "rounds":\(options.rounds),"nsPerPose":\(format(wallNs)),"cpuNsPerPose":\(format(cpuNs)),\
            "baselineNsPerPose":\(format(baselineNs)),"ratioToBaseline":\(format(cpuNs / baselineNs)),\
            "events":\(events),"reps":\(counted),"residentGrowthBytes":\(residentGrowth)}
            """
    }

    /// The least work on a pose: read every point and confidence once.
    @inline(never)
    static func touch(_ pose: Pose) -> Double {
        var sum = pose.timestamp
        for (_, point) in pose.points { sum += Double(point.x) + Double(point.y) }
        for (_, value) in pose.confidence { sum += value }
        return sum
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[sorted.count / 2]
    }

    static func format(_ value: Double) -> String {
        value.isFinite ? String(format: "%.1f", value) : "null"
    }

    static func threadCPUNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// The process's resident memory in bytes (Linux), or 0 where unknown.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
