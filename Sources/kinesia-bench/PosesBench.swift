import Foundation
import KinesiaMotion
import KinesiaSimulation

/// `kinesia-bench poses`: the simulator's poses as a JSON Lines recording, for the end to end's
/// cameras: `kinesia ingest` then publishes poses it holds (as the C floor's publishers hold
/// their records) instead of simulating each one as it goes, which is the stand-in for a
/// detector that a site runs outside the bus.
///
///     kinesia-bench poses --source sim:shoulderAbduction,fps=60,seed=1 --seconds 20 > cam0.jsonl
enum PosesBench {
    static let usage = "usage: kinesia-bench poses --source sim:EXERCISE[,key=value...] --seconds S>0\n"

    static func main(_ arguments: [String]) -> Int32 {
        var spec: String?
        var seconds: Double?
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--source", let value?): spec = value
            case ("--seconds", let value?) where (Double(value) ?? 0) > 0: seconds = Double(value)
            default:
                FileHandle.standardError.write(Data(usage.utf8))
                return 64
            }
        }
        guard let spec, let seconds else {
            FileHandle.standardError.write(Data(usage.utf8))
            return 64
        }
        let simulator: ExerciseSimulator
        do {
            simulator = try SimulationSpec(parsing: spec).makeSimulator()
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench poses: \(spec): \(error)\n".utf8))
            return 64
        }
        var lines = ""
        var stream = simulator.endless()
        var first: Double?
        while let pose = stream.next() {
            first = first ?? pose.timestamp
            if let first, pose.timestamp - first >= seconds { break }
            lines += PoseJSONLine.encode(pose)
            lines += "\n"
        }
        FileHandle.standardOutput.write(Data(lines.utf8))
        return 0
    }
}
