import Foundation
import KinesiaMotion

/// `kinesia-bench memory`: resident memory after a thousand poses and after ten million, to
/// show that a session's memory stays flat however long it runs.
///
/// Method: one pose loop per exercise (as in ``EngineBench``) and a left and a right
/// ``MotionSession`` per exercise (20 sessions with the whole catalog). Pose `i` goes to the
/// sessions of exercise `i % count`, from that exercise's loop, so every session sees its own
/// unbroken timeline. `VmRSS` and `VmHWM` (the peak) are read from `/proc/self/status` after
/// 1,000 poses (everything allocated: the loops, the sessions) and at every power of ten up to
/// `--poses`; the ratio of the last peak to the first is the figure (flat = 1.00). This runs in
/// its own process so that no other benchmark's memory is in the peak.
enum MemoryBench {
    static let usage = "usage: kinesia-bench memory [--poses N>=1000] [--loop POSES] [--exercise ID]\n"

    @MainActor
    static func main(_ arguments: [String]) -> Int32 {
        var poses = 10_000_000
        var loopSize = 5_000
        var only: String?
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--poses", let value?) where Int(value).map({ $0 >= 1000 }) == true:
                poses = Int(value)!
            case ("--loop", let value?) where Int(value).map({ $0 >= 100 }) == true:
                loopSize = Int(value)!
            case ("--exercise", let value?) where Exercise.named(value) != nil:
                only = value
            default:
                FileHandle.standardError.write(Data(usage.utf8))
                return 64
            }
        }
        let exercises = Exercise.catalog.filter { only == nil || $0.id == only }
        do {
            var loops = try exercises.map { try PoseLoop(exercise: $0, count: loopSize) }
            let sessions = exercises.map {
                [MotionSession(exercise: $0, side: .left), MotionSession(exercise: $0, side: .right)]
            }
            var checkpoints: [Int] = [1000]
            while checkpoints[checkpoints.count - 1] * 10 < poses {
                checkpoints.append(checkpoints.last! * 10)
            }
            if checkpoints.last! != poses { checkpoints.append(poses) }
            var first: (rss: Int, hwm: Int)?
            var done = 0
            var events = 0
            for checkpoint in checkpoints {
                while done < checkpoint {
                    let which = done % exercises.count
                    let pose = loops[which].next()
                    events &+= sessions[which][0].process(pose).count
                    events &+= sessions[which][1].process(pose).count
                    done += 1
                }
                let status = ProcessStatus.read()
                if first == nil { first = (status.rss, status.hwm) }
                emit(
                    ["bench": "memory", "scope": only ?? "catalog"],
                    [
                        "poses": .int(done), "sessions": .int(2 * exercises.count),
                        "vm_rss_kb": .int(status.rss), "vm_hwm_kb": .int(status.hwm),
                        "hwm_ratio_to_first": .double(Double(status.hwm) / Double(first!.hwm), 3),
                        "rss_ratio_to_first": .double(Double(status.rss) / Double(first!.rss), 3),
                        "events": .int(events),
                    ])
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench memory: \(error)\n".utf8))
            return 1
        }
    }
}

/// `VmRSS` and `VmHWM` of this process, in kB.
enum ProcessStatus {
    static func read() -> (rss: Int, hwm: Int) {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
            return (0, 0)
        }
        var rss = 0
        var hwm = 0
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let value = Int(fields[1]) else { continue }
            if fields[0] == "VmRSS:" { rss = value }
            if fields[0] == "VmHWM:" { hwm = value }
        }
        return (rss, hwm)
    }
}
