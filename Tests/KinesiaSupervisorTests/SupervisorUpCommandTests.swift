import Foundation
import Glibc
import KinesiaTestSupport
import Testing

@testable import KinesiaSupervisor

/// `kinesia up` as a real process, stopped by real signals.
@Suite(.timeLimit(.minutes(3)), .tags(.process))
struct SupervisorUpCommandTests {

    typealias Scratch = SupervisorProcessTests.Scratch

    /// Starts `kinesia up FILE` with its standard error in `scratch/up.log`.
    static func startUp(_ topology: String, in scratch: Scratch) throws -> TestProcess {
        let file = scratch.path("topology.json")
        try Data(topology.utf8).write(to: URL(fileURLWithPath: file))
        return try TestProcess(
            executable: PackagePaths.kinesia(), arguments: ["up", file],
            environment: ProcessInfo.processInfo.environment, standardError: scratch.path("up.log"))
    }

    /// The pids of the `started NAME (pid N)` lines of `up.log`, by name.
    static func startedPIDs(in scratch: Scratch) -> [String: Int32] {
        var pids: [String: Int32] = [:]
        for line in scratch.lines("up.log") {
            guard let range = line.range(of: "kinesia up: started ") else { continue }
            let rest = line[range.upperBound...]
            let parts = rest.split(separator: " ")
            guard parts.count == 3, let pid = Int32(parts[2].dropLast()) else { continue }
            pids[String(parts[0])] = pid
        }
        return pids
    }

    static func shellProcess(_ name: String, role: ProcessRole, script: String) -> String {
        let escaped = script.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
            of: "\"", with: "\\\""
        )
        .replacingOccurrences(of: "\n", with: "\\n")
        return
            #"{"name": "\#(name)", "role": "\#(role.rawValue)", "executable": "/bin/sh", "command": ["-c", "\#(escaped)"]}"#
    }

    @Test func sigtermToUpStopsEveryChildInDrainOrderAndLeavesNoProcessBehind() async throws {
        let scratch = try Scratch()
        let names: [(String, ProcessRole)] = [
            ("broker", .broker), ("worker", .worker), ("listen", .consumer), ("ingest", .ingest),
        ]
        let processes = names.map {
            Self.shellProcess(
                $0.0, role: $0.1,
                script: SupervisorProcessTests.drainingScript(
                    $0.0, log: scratch.path("stops"), scratch: scratch))
        }
        let up = try Self.startUp(
            #"{"processes": [\#(processes.joined(separator: ", "))], "startup": {"settleSeconds": 0}}"#,
            in: scratch)
        let ready = await SupervisorProcessTests.eventually {
            names.allSatisfy { scratch.exists("\($0.0).sleep") }
        }
        #expect(ready, "\(scratch.lines("up.log"))")

        up.send(SIGTERM)
        #expect(
            await SupervisorProcessTests.eventually { !up.isRunning },
            "up still runs: \(scratch.lines("up.log"))")
        #expect(up.exitStatus == 0)
        #expect(scratch.lines("stops") == ["ingest", "worker", "listen", "broker"])
        let log = scratch.lines("up.log")
        #expect(log.contains { $0.hasPrefix("kinesia up: shutting down (SIGTERM)") }, "\(log)")
        #expect(log.last == "kinesia up: stopped every process; exit status 0")
        let pids = Self.startedPIDs(in: scratch)
        #expect(Set(pids.keys) == Set(names.map(\.0)))
        for (name, pid) in pids {
            #expect(SupervisorProcessTests.isGone(pid), "\(name) (pid \(pid)) survived up")
        }
        for (name, _) in names {
            let sleep = scratch.lines("\(name).sleep").first.flatMap { Int32($0) } ?? 0
            #expect(await SupervisorProcessTests.eventually { SupervisorProcessTests.isGoneOrZombie(sleep) })
        }
    }

    @Test func aKinesiaChildStopsByItselfWhenUpIsKilled() async throws {
        // The outer up runs an inner `kinesia up` (a kinesia child, which asks for the
        // parent-death signal); SIGKILL to the outer one must still stop the inner one and its
        // shell child.
        let scratch = try Scratch()
        let inner = scratch.path("inner.json")
        let script = SupervisorProcessTests.drainingScript(
            "leaf", log: scratch.path("stops"), scratch: scratch)
        try Data(#"{"processes": [\#(Self.shellProcess("leaf", role: .consumer, script: script))]}"#.utf8)
            .write(to: URL(fileURLWithPath: inner))
        let up = try Self.startUp(
            #"{"processes": [{"name": "inner", "command": ["up", "\#(inner)"]}]}"#, in: scratch)
        #expect(
            await SupervisorProcessTests.eventually { scratch.exists("leaf.sleep") },
            "\(scratch.lines("up.log"))")
        let innerPID = Self.startedPIDs(in: scratch)["inner"] ?? 0

        up.send(SIGKILL)
        #expect(await up.waitForExit(timeout: .seconds(30)) == 128 + SIGKILL)

        // The inner up got SIGTERM from the kernel and stopped its child gracefully.
        #expect(
            await SupervisorProcessTests.eventually { scratch.lines("stops") == ["leaf"] },
            "\(scratch.lines("up.log"))")
        #expect(await SupervisorProcessTests.eventually { SupervisorProcessTests.isGoneOrZombie(innerPID) })
        if !SupervisorProcessTests.isGoneOrZombie(innerPID) {
            kill(innerPID, SIGTERM)  // the test failed: do not leave the inner up behind
        }
    }

    /// Runs `up` with one child that needs a moment to stop, sends `signals` once it runs and
    /// returns the log and the child's stop record.
    static func stopSlowChild(with signals: [Int32]) async throws -> (log: [String], stops: [String]) {
        let scratch = try Scratch()
        let script = """
            trap 'sleep 8; echo slow >> \(scratch.path("stops")); exit 0' TERM
            echo ready > \(scratch.path("ready"))
            while :; do sleep 0.05; done
            """
        let up = try startUp(
            #"{"processes": [\#(shellProcess("slow", role: .worker, script: script))], "shutdown": {"deadlineSeconds": 30}}"#,
            in: scratch)
        #expect(await SupervisorProcessTests.eventually { scratch.exists("ready") })
        // Two signals sent before `up` took the first would merge into one pending signal: each
        // next one goes once the shutdown is under way. The child takes 8 s to stop. The signals
        // are sent from a thread of their own: a test task waiting on the cooperative pool,
        // which the parallel suite's blocking tests can hold for seconds, sent the second SIGINT
        // after the child had stopped (a loaded run).
        let logPath = scratch.path("up.log")
        let sent = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            let thread = Thread {
                var underWay = true
                for (index, signal) in signals.enumerated() {
                    _ = up.send(signal)
                    guard index == 0 else { continue }
                    let deadline = Date(timeIntervalSinceNow: 30)
                    underWay = false
                    while !underWay, Date() < deadline {
                        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                        underWay = log.contains("stopping slow")
                        if !underWay { usleep(5_000) }
                    }
                }
                done.resume(returning: underWay)
            }
            thread.start()
        }
        #expect(sent, "the shutdown did not start: \(scratch.lines("up.log"))")
        #expect(await SupervisorProcessTests.eventually(timeout: .seconds(30)) { !up.isRunning })
        #expect(up.exitStatus == 0)
        return (scratch.lines("up.log"), scratch.lines("stops"))
    }

    @Test func aRepeatedSigtermDoesNotForceTheShutdown() async throws {
        let (log, stops) = try await Self.stopSlowChild(with: [SIGTERM, SIGTERM, SIGTERM])
        #expect(stops == ["slow"])
        #expect(!log.contains { $0.contains("second shutdown request") }, "\(log)")
    }

    @Test func aSecondSigintKillsEveryChildAtOnce() async throws {
        let (log, stops) = try await Self.stopSlowChild(with: [SIGINT, SIGINT])
        #expect(stops == [])
        #expect(log.contains("kinesia up: second shutdown request: killing every process now"), "\(log)")
        #expect(
            log.contains { $0.hasPrefix("kinesia up: exited slow") && $0.hasSuffix("signal SIGKILL)") },
            "\(log)")
    }

    @Test func anInvalidTopologyFileFailsWithTheFileAndTheField() async throws {
        let scratch = try Scratch()
        let up = try Self.startUp(
            #"{"processes": [{"name": "b", "command": ["broker"], "restart": "maybe"}]}"#, in: scratch)
        #expect(await up.waitForExit(timeout: .seconds(30)) == 1)
        let log = scratch.lines("up.log").joined(separator: "\n")
        #expect(
            log.contains(
                "topology.json:1:64: processes[0].restart: expected one of always, on-failure, never"),
            "\(log)")
    }
}
