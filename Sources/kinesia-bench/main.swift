// kinesia-bench: micro-benchmarks, run in release builds through scripts/bench.
//
//   kinesia-bench bus [--messages N] [--round-trips N] [--transport tcp|ipc|inproc]
//   kinesia-bench analysis [--poses N] [--rounds N] [--exercise ID]
//
// Each benchmark prints one JSON object per line on standard output.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "bus":
    exit(BusBench.main(Array(arguments.dropFirst())))
case "analysis":
    exit(AnalysisBench.main(Array(arguments.dropFirst())))
default:
    FileHandle.standardError.write(
        Data(
            ("usage: kinesia-bench bus [--messages N] [--round-trips N] [--transport tcp|ipc|inproc]\n"
                + "       kinesia-bench analysis [--poses N] [--rounds N] [--exercise ID]\n").utf8))
    exit(64)
}
