import Foundation
import KinesiaService
import KinesiaSystem

/// `kinesia up FILE`: loads the topology, runs it under a ``Supervisor`` (a ``Service`` run by a
/// ``ServiceRunner``, as every process is) and stops it gracefully on SIGINT, SIGTERM or SIGHUP.
///
/// Writes one line per action through `log` (see ``SupervisorEvent``), each starting with
/// `kinesia up: `. A second SIGINT (Control-C again) during the shutdown kills every child at
/// once; further SIGTERMs and SIGHUPs change nothing.
///
/// ```swift
/// exit(await runUp(topologyPath: "deploy/local.json"))
/// ```
///
/// - Parameters:
///   - topologyPath: The JSON topology file (see ``Topology``).
///   - kinesiaExecutable: The executable for the `kinesia` commands; by default the running
///     executable.
///   - log: Receives each line (without a newline); by default written to standard error.
/// - Returns: The exit status: 0 after a clean run or a graceful shutdown; 1 when the file is
///   not a valid topology (reported as `kinesia up: error: FILE: FIELD: ...`), or the supervisor
///   gave up on a process (see ``SupervisorStateMachine`` for every case).
public func runUp(
    topologyPath: String, kinesiaExecutable: String? = nil,
    log: @escaping @Sendable (String) -> Void = Supervisor.printLine
) async -> Int32 {
    // Before any child exists: from now on a signal is a shutdown request, not the end.
    let signals = SignalStream([.interrupt, .terminate, .hangup])
    let topology: Topology
    do {
        topology = try Topology.load(contentsOf: URL(fileURLWithPath: topologyPath))
    } catch {
        log("kinesia up: error: \(error)")
        return 1
    }
    let supervisor = Supervisor(
        topology: topology, kinesiaExecutable: kinesiaExecutable ?? Supervisor.currentExecutable(),
        onEvent: { log("kinesia up: \($0)") })
    log(
        "kinesia up: \(topologyPath): \(topology.processes.count) processes, bus "
            + (topology.bus ?? "default (each command's per-user runtime directory)"))
    // The supervisor keeps its own shutdown deadlines; a second Control-C cancels its run,
    // which kills every child at once and still reaps them.
    let runner = ServiceRunner(logger: nil, stopDeadline: nil, forcedEnd: .cancelService)
    do {
        return try await runner.run(supervisor, signals: signals)
    } catch {
        // The supervisor's run throws nothing: not reached.
        log("kinesia up: error: \(error)")
        return 1
    }
}
