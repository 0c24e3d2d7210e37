// kinesia-bench: micro-benchmarks, run in release builds through scripts/bench.
//
//   kinesia-bench engine [--poses N] [--rounds R] [--loop POSES] [--exercise ID]
//   kinesia-bench memory [--poses N] [--loop POSES] [--exercise ID]
//   kinesia-bench worker-path [--poses N] [--rounds R] [--exercise ID]
//   kinesia-bench bus [--messages N] [--round-trips N] [--transport tcp|ipc|inproc]
//   kinesia-bench broker [--messages N]
//   kinesia-bench analysis [--poses N] [--rounds N] [--exercise ID]
//   kinesia-bench probe --bus DIR --sessions N [--seconds S] [--warmup S]
//   kinesia-bench blast --bus DIR --cameras N --rate POSES_PER_S --seconds S [--exercise ID]
//   kinesia-bench voice [--rounds N]
//   kinesia-bench replay [--events N] [--rounds R]
//   kinesia-bench replay-latency --endpoint ENDPOINT [--topic T] [--requests N]
//   kinesia-bench checkpoint [--rounds N] [--exercise ID]
//   kinesia-bench poses --source sim:EXERCISE[,key=value...] --seconds S
//
// probe and blast are the consumer and the load generator of scripts/bench_e2e.py; poses makes
// its cameras' recordings.
// Each benchmark prints one JSON object per line on standard output.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "engine":
    exit(EngineBench.main(Array(arguments.dropFirst())))
case "worker-path":
    exit(WorkerPathBench.main(Array(arguments.dropFirst())))
case "memory":
    exit(MemoryBench.main(Array(arguments.dropFirst())))
case "bus":
    exit(BusBench.main(Array(arguments.dropFirst())))
case "broker":
    exit(BrokerBench.main(Array(arguments.dropFirst())))
case "analysis":
    exit(AnalysisBench.main(Array(arguments.dropFirst())))
case "probe":
    exit(ProbeBench.main(Array(arguments.dropFirst())))
case "blast":
    exit(BlastBench.main(Array(arguments.dropFirst())))
case "voice":
    exit(VoiceBench.main(Array(arguments.dropFirst())))
case "replay":
    exit(ReplayBench.main(Array(arguments.dropFirst())))
case "replay-latency":
    exit(ReplayLatencyBench.main(Array(arguments.dropFirst())))
case "checkpoint":
    exit(CheckpointBench.main(Array(arguments.dropFirst())))
case "poses":
    exit(PosesBench.main(Array(arguments.dropFirst())))
default:
    FileHandle.standardError.write(
        Data(
            """
            usage: kinesia-bench engine [--poses N] [--rounds R] [--loop POSES] [--exercise ID]
                   kinesia-bench memory [--poses N] [--loop POSES] [--exercise ID]
                   kinesia-bench worker-path [--poses N] [--rounds R] [--exercise ID]
                   kinesia-bench bus [--messages N] [--round-trips N] [--transport tcp|ipc|inproc]
                   kinesia-bench broker [--messages N]
                   kinesia-bench analysis [--poses N] [--rounds N] [--exercise ID]
                   kinesia-bench probe --bus DIR --sessions N [--seconds S] [--warmup S]
                   kinesia-bench blast --bus DIR --cameras N --rate POSES_PER_S --seconds S [--exercise ID]
                   kinesia-bench voice [--rounds N]
                   kinesia-bench replay [--events N] [--rounds R]
                   kinesia-bench replay-latency --endpoint ENDPOINT [--topic T] [--requests N]
                   kinesia-bench checkpoint [--rounds N] [--exercise ID]
                   kinesia-bench poses --source sim:EXERCISE[,key=value...] --seconds S

            """.utf8))
    exit(64)
}
