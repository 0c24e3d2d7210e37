import Foundation
import Glibc
import KinesiaTestSupport
import Testing

/// `kinesia up` as an operator runs it: a topology file of real `kinesia` children (a broker, a
/// worker, an ingest of a looping simulation and a listener) in a private bus directory, whose
/// broker and worker are then killed with SIGKILL. The supervisor must start them again (new
/// pids) and the bus must carry the worker's snapshots again after each kill; a child that
/// always fails must make `up` give up on it after the restart limit and exit non-zero.
@Suite(.timeLimit(.minutes(3)), .tags(.process))
struct UpRecoveryTests {
    /// One `kinesia up` run: its topology file, its bus and its outputs (the children's standard
    /// output, the listener's lines included, goes to `up.out`).
    final class UpRun {
        let directory: String
        let bus: String
        let up: KinesiaProcess

        /// Writes `topology.json` (`"bus"` set to a private directory) and starts `kinesia up`.
        init(processes: [String], restart: String) throws {
            directory = try ConsumerTestPaths.temporaryDirectory().path
            bus = directory + "/bus"
            let file = directory + "/topology.json"
            let text = """
                {"bus": "\(bus)",
                 "processes": [\(processes.joined(separator: ",\n  "))],
                 "restart": \(restart),
                 "startup": {"settleSeconds": 0.3},
                 "shutdown": {"deadlineSeconds": 5}}
                """
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            up = try KinesiaProcess("up", ["up", file], directory: directory)
        }

        deinit {
            if up.isRunning {
                up.signal(SIGTERM)
                _ = up.process.waitForExit()
            }
            try? FileManager.default.removeItem(atPath: directory)
        }

        /// Every `started NAME (pid N)` line of `up`, in order.
        var starts: [(name: String, pid: Int32)] {
            up.errorText.split(separator: "\n").compactMap { line in
                guard let match = line.wholeMatch(of: /kinesia up: started ([a-z-]+) \(pid ([0-9]+)\)/),
                    let pid = Int32(match.2)
                else { return nil }
                return (String(match.1), pid)
            }
        }

        /// The pids `name` was started with, in order.
        func pids(_ name: String) -> [Int32] { starts.filter { $0.name == name }.map(\.pid) }

        /// The listener's snapshot lines so far.
        var snapshots: [ListenedLine] {
            up.outputLines.compactMap(ListenedLine.init).filter { $0.topic.hasPrefix("snapshot/") }
        }

        /// What a failed expectation should show.
        var diagnostics: String {
            "--- up stderr ---\n\(up.errorText)\n--- up stdout (last 5 lines) ---\n"
                + up.outputLines.suffix(5).joined(separator: "\n")
        }
    }

    static func process(_ name: String, restart: String, _ command: [String]) -> String {
        let arguments = command.map { "\"\($0)\"" }.joined(separator: ", ")
        return #"{"name": "\#(name)", "restart": "\#(restart)", "command": [\#(arguments)]}"#
    }

    /// Whether `pid` no longer names a live process (gone, or a zombie).
    static func isDead(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return errno == ESRCH }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return stat.contains(") Z ")
    }

    @Test func restartsAKilledBrokerAndWorkerAndTheSnapshotsFlowAgain() async throws {
        let run = try UpRun(
            processes: [
                Self.process("broker", restart: "always", ["broker"]),
                Self.process(
                    "worker", restart: "always",
                    ["worker", "--camera", "cam0", "--session", "left=shoulderAbduction:left"]),
                Self.process("listen", restart: "always", ["listen", "snapshot/", "--format", "json"]),
                Self.process(
                    "ingest", restart: "always",
                    ["ingest", "--camera", "cam0", "--source", "sim:shoulderAbduction", "--loop"]),
            ],
            restart:
                #"{"initialDelaySeconds": 0.2, "maxDelaySeconds": 1, "maxRestarts": 5, "windowSeconds": 60}"#)

        // Everything runs and the worker's snapshots reach the listener.
        let flowing = await waitUntil(timeout: .seconds(60)) { run.snapshots.count >= 10 }
        #expect(flowing, "no snapshots at first:\n\(run.diagnostics)")
        try #require(flowing)
        #expect(
            Set(run.starts.map(\.name)) == ["broker", "worker", "listen", "ingest"], "\(run.diagnostics)")
        let firstWorkerStream = try #require(run.snapshots.last?.stream)

        // SIGKILL the broker: a new broker, and snapshots through it.
        let broker = try #require(run.pids("broker").first)
        kill(broker, SIGKILL)
        let brokerBack = await waitUntil(timeout: .seconds(30)) { run.pids("broker").count == 2 }
        #expect(brokerBack, "the broker was not started again:\n\(run.diagnostics)")
        try #require(brokerBack)
        let newBroker = run.pids("broker")[1]
        #expect(newBroker != broker)
        #expect(Self.isDead(broker))
        #expect(
            run.up.errorText.contains("kinesia up: exited broker (pid \(broker), signal SIGKILL)"),
            "\(run.diagnostics)")
        #expect(run.up.errorText.contains("kinesia up: restarting broker in 0.2 s (restart 1 of at most 5"))
        // Lines printed from now on went through the new broker (the old one is dead).
        let beforeBroker = run.snapshots.count
        let flowingAgain = await waitUntil(timeout: .seconds(60)) { run.snapshots.count >= beforeBroker + 10 }
        #expect(flowingAgain, "no snapshots after the broker's restart:\n\(run.diagnostics)")
        #expect(
            run.pids("worker").count == 1, "the worker should have survived the broker:\n\(run.diagnostics)")

        // SIGKILL the worker: a new worker whose snapshots arrive, on the same stream (its
        // session's stream identity is kept in the state directory and resumed).
        let worker = try #require(run.pids("worker").first)
        kill(worker, SIGKILL)
        let beforeWorker = run.snapshots.count
        let workerBack = await waitUntil(timeout: .seconds(30)) { run.pids("worker").count == 2 }
        #expect(workerBack, "the worker was not started again:\n\(run.diagnostics)")
        try #require(workerBack)
        #expect(run.pids("worker")[1] != worker)
        #expect(Self.isDead(worker))
        let newWorkerSnapshots = await waitUntil(timeout: .seconds(60)) {
            run.snapshots.count >= beforeWorker + 10
        }
        #expect(newWorkerSnapshots, "no snapshots from the restarted worker:\n\(run.diagnostics)")
        #expect(run.snapshots.dropFirst(beforeWorker).allSatisfy { $0.stream == firstWorkerStream })
        // Neither restart took the others down.
        #expect(run.pids("broker").count == 2 && run.pids("listen").count == 1, "\(run.diagnostics)")

        // A graceful stop still works after the restarts, and leaves nothing behind.
        run.up.signal(SIGTERM)
        #expect(await run.up.waitForExit(timeout: .seconds(60)) == 0, "\(run.diagnostics)")
        #expect(run.up.errorText.hasSuffix("kinesia up: stopped every process; exit status 0\n"))
        for (name, pid) in run.starts {
            #expect(Self.isDead(pid), "\(name) (pid \(pid)) survived up")
        }
    }

    @Test func givesUpOnAChildThatAlwaysFailsAndExitsNonZeroNamingIt() async throws {
        let missing = "/nonexistent/kinesia-recording.jsonl"
        let run = try UpRun(
            processes: [
                Self.process(
                    "ingest-missing", restart: "always",
                    ["ingest", "--camera", "cam0", "--source", missing, "--wait-seconds", "0"])
            ],
            restart:
                #"{"initialDelaySeconds": 0.05, "maxDelaySeconds": 0.2, "maxRestarts": 3, "windowSeconds": 60}"#
        )

        let status = await run.up.waitForExit(timeout: .seconds(60))
        #expect(status == 1, "\(run.diagnostics)")
        let log = run.up.errorText.split(separator: "\n").map(String.init)
        // The first start and three restarts, each a new process that failed.
        let pids = run.pids("ingest-missing")
        #expect(pids.count == 4, "\(run.diagnostics)")
        #expect(Set(pids).count == pids.count)
        #expect(
            log.filter {
                $0.hasPrefix("kinesia up: exited ingest-missing (pid ") && $0.hasSuffix(", status 1)")
            }
            .count == 4, "\(run.diagnostics)")
        #expect(log.filter { $0.hasPrefix("kinesia up: restarting ingest-missing in ") }.count == 3)
        #expect(
            log.suffix(2) == [
                "kinesia up: giving up on ingest-missing after 3 restarts within 60 s",
                "kinesia up: stopped every process; exit status 1",
            ], "\(run.diagnostics)")
        // The child's own reason reached the operator.
        #expect(run.up.errorText.contains(missing), "\(run.diagnostics)")
    }
}
