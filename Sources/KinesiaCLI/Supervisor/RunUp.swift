import Foundation

/// `kinesia up FILE`: loads the topology, runs it under a ``Supervisor`` and stops it gracefully
/// on SIGINT, SIGTERM or SIGHUP.
///
/// Prints one line per action on standard error (see ``SupervisorEvent``). A second signal
/// during the shutdown kills every child at once.
///
/// - Parameters:
///   - topologyPath: The JSON topology file (see ``Topology``).
///   - kinesiaExecutable: The executable for the `kinesia` commands; by default the running
///     executable.
///   - onEvent: Receives every event; by default printed as `kinesia up: ...` on standard error.
/// - Returns: The exit status: 0 after a clean run or a graceful shutdown; 1 when the file is
///   not a valid topology, or the supervisor gave up on a process (see
///   ``SupervisorStateMachine`` for every case).
public func runUp(
    topologyPath: String, kinesiaExecutable: String? = nil,
    onEvent: @escaping @Sendable (SupervisorEvent) -> Void = Supervisor.printEvent
) async -> Int32 {
    // Before any child exists: a signal from now on is a shutdown request, not the end.
    let signals = SignalStream([.interrupt, .terminate, .hangup])
    let topology: Topology
    do {
        topology = try Topology.load(contentsOf: URL(fileURLWithPath: topologyPath))
    } catch {
        Supervisor.printLine("kinesia up: \(error)")
        return 1
    }
    let supervisor = Supervisor(
        topology: topology, kinesiaExecutable: kinesiaExecutable ?? Supervisor.currentExecutable(),
        onEvent: onEvent)
    Supervisor.printLine(
        "kinesia up: \(topologyPath): \(topology.processes.count) processes, bus "
            + (topology.bus ?? "default (each command's per-user runtime directory)"))
    return await withTaskGroup(of: Void.self) { group in
        group.addTask {
            for await signal in signals {
                supervisor.requestShutdown(signal: signal)
            }
        }
        let status = await supervisor.run()
        group.cancelAll()
        return status
    }
}
