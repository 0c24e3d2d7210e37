import Foundation
import Glibc
import KinesiaTestSupport
import Synchronization
import Testing

/// One test's topology: a private bus directory, the processes started, and their cleanup.
final class Topology: @unchecked Sendable {
    let directory: String
    let bus: String
    /// The security flags of each command (`--insecure`, `--key ...`), by subcommand name.
    let security: @Sendable (String) -> [String]
    private let processes = Mutex<[KinesiaProcess]>([])

    /// A topology in a new private directory; its bus is `DIR/bus` unless `bus` is given
    /// (`tcp://...`); `security` gives each command its security flags (by subcommand), added
    /// with `--bus`.
    init(bus: String? = nil, security: @escaping @Sendable (String) -> [String] = { _ in [] }) throws {
        self.security = security
        var template = Array("/tmp/kinesia-it.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { throw POSIXError(.EIO) }
        directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.bus = bus ?? directory + "/bus"
    }

    /// Starts `kinesia <arguments> --bus <bus>` (without `--bus` when `addingBus` is false),
    /// through `launcher` when given (another host: ``NamespaceNetwork/launcher(for:)``), with
    /// `environment` added to the test's.
    @discardableResult
    func start(
        _ name: String, _ arguments: [String], standardInput: String = "/dev/null", addingBus: Bool = true,
        launcher: [String] = [], environment: [String: String] = [:]
    ) throws -> KinesiaProcess {
        let process = try KinesiaProcess(
            name, arguments + (addingBus ? ["--bus", bus] + security(arguments.first ?? "") : []),
            directory: directory, standardInput: standardInput, launcher: launcher, environment: environment)
        processes.withLock { $0.append(process) }
        return process
    }

    /// Starts a broker and waits until it serves.
    func startBroker(_ name: String = "broker") async throws -> KinesiaProcess {
        let broker = try start(name, ["broker"])
        let ready = await broker.waitForError(containing: "serving", timeout: .seconds(60))
        #expect(ready, "\(broker.diagnostics)")
        return broker
    }

    /// Starts a listener and waits until it is connected to the broker.
    func startListener(_ name: String, _ arguments: [String]) async throws -> KinesiaProcess {
        let listener = try start(name, ["listen"] + arguments)
        let ready = await listener.waitForError(containing: "listening to", timeout: .seconds(60))
        #expect(ready, "\(listener.diagnostics)")
        return listener
    }

    /// Starts a worker and waits until it hosts its sessions.
    func startWorker(_ name: String, _ arguments: [String]) async throws -> KinesiaProcess {
        let worker = try start(name, ["worker", "--name", name] + arguments)
        let ready = await worker.waitForError(containing: "hosting", timeout: .seconds(60))
        #expect(ready, "\(worker.diagnostics)")
        return worker
    }

    /// Stops every process still running (SIGTERM, then SIGKILL after three seconds) and
    /// removes the directory. Synchronous, for `defer`.
    func tearDown() {
        let all = processes.withLock { $0 }
        for process in all where process.isRunning { process.signal(SIGTERM) }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(3))
        while all.contains(where: \.isRunning), clock.now < deadline { usleep(10_000) }
        for process in all where process.isRunning { process.signal(SIGKILL) }
        for process in all { _ = process.process.waitForExit() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The pids of the running processes whose command line mentions this topology's
    /// directory (its bus, its files): after a clean stop, none.
    func processesUsingDirectory() -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry),
                let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self).contains(directory)
            else { return nil }
            // A zombie is gone but for its parent's wait.
            let status = (try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8)) ?? ""
            return status.contains(") Z ") ? nil : pid
        }
    }

    /// Everything the processes printed on standard error, for failure messages.
    var diagnostics: String {
        processes.withLock { $0 }.map(\.diagnostics).joined(separator: "\n")
    }
}
