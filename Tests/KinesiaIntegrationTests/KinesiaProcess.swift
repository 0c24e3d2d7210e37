import Foundation
import Glibc
import KinesiaTestSupport
import Synchronization
import Testing

/// Where the package and the built `kinesia` executable are.
enum Package {
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url
            }
            url.deleteLastPathComponent()
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// `<package>/.build/debug/kinesia` (`swift build --build-tests` makes it).
    static let kinesia = root.appendingPathComponent(".build/debug/kinesia").path

    static func path(_ relative: String) -> String {
        root.appendingPathComponent(relative).path
    }
}

/// A running `kinesia` process whose standard output and error go to files in the test's
/// directory (no pipe can fill up and block it), started as a ``TestProcess``.
final class KinesiaProcess: Sendable {
    let name: String
    let arguments: [String]
    let process: TestProcess
    let outputPath: String
    let errorPath: String

    /// Starts `kinesia ARGUMENTS`; standard input from `standardInput` (`/dev/null` by default).
    init(_ name: String, _ arguments: [String], directory: String, standardInput: String = "/dev/null") throws
    {
        self.name = name
        self.arguments = arguments
        outputPath = directory + "/\(name).out"
        errorPath = directory + "/\(name).err"
        var environment = ProcessInfo.processInfo.environment
        environment["KINESIA_BUS"] = nil
        environment["KINESIA_PROCESS_NAME"] = nil
        environment["KINESIA_SUPERVISOR_PID"] = nil
        environment["KINESIA_LOG_LEVEL"] = "info"
        process = try TestProcess(
            executable: Package.kinesia, arguments: arguments, environment: environment,
            standardInput: standardInput, standardOutput: outputPath, standardError: errorPath)
    }

    var pid: Int32 { process.pid }
    var isRunning: Bool { process.isRunning }

    var output: String { TestProcess.readFile(outputPath) }
    var errorText: String { TestProcess.readFile(errorPath) }

    var outputLines: [String] {
        output.split(separator: "\n").map(String.init)
    }

    func signal(_ number: Int32) {
        process.send(number)
    }

    /// Waits until the process exits; `nil` when it is still running after `timeout`.
    func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
        await process.waitForExit(timeout: timeout)
    }

    /// Waits until its standard error contains `text`.
    @discardableResult
    func waitForError(containing text: String, timeout: Duration = .seconds(20)) async -> Bool {
        await waitUntil(timeout: timeout) { self.errorText.contains(text) }
    }

    /// Waits until its standard output has at least `count` lines.
    @discardableResult
    func waitForOutputLines(_ count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        await waitUntil(timeout: timeout) { self.outputLines.count >= count }
    }

    /// SIGTERM, then SIGKILL if it is still there after `grace`; returns the exit status.
    @discardableResult
    func stop(grace: Duration = .seconds(5)) async -> Int32? {
        await process.stop(grace: grace)
    }

    /// What a failed expectation should show.
    var diagnostics: String {
        "\(name) (\(arguments.joined(separator: " "))):\n--- stderr ---\n\(errorText)"
    }
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes.
func waitUntil(timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while !condition() {
        if clock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// One test's topology: a private bus directory, the processes started, and their cleanup.
final class Topology: @unchecked Sendable {
    let directory: String
    let bus: String
    private let processes = Mutex<[KinesiaProcess]>([])

    /// A topology in a new private directory; its bus is `DIR/bus` unless `bus` is given
    /// (`tcp://...`).
    init(bus: String? = nil) throws {
        var template = Array("/tmp/kinesia-it.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { throw POSIXError(.EIO) }
        directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.bus = bus ?? directory + "/bus"
        #expect(
            FileManager.default.isExecutableFile(atPath: Package.kinesia), "build kinesia first: swift build")
    }

    /// Starts `kinesia <arguments> --bus <bus>` (without `--bus` when `addingBus` is false).
    @discardableResult
    func start(
        _ name: String, _ arguments: [String], standardInput: String = "/dev/null", addingBus: Bool = true
    ) throws -> KinesiaProcess {
        let process = try KinesiaProcess(
            name, arguments + (addingBus ? ["--bus", bus] : []), directory: directory,
            standardInput: standardInput)
        processes.withLock { $0.append(process) }
        return process
    }

    /// Starts a broker and waits until it serves.
    func startBroker(_ name: String = "broker") async throws -> KinesiaProcess {
        let broker = try start(name, ["broker"])
        let ready = await broker.waitForError(containing: "serving")
        #expect(ready, "\(broker.diagnostics)")
        return broker
    }

    /// Starts a listener and waits until it is connected to the broker.
    func startListener(_ name: String, _ arguments: [String]) async throws -> KinesiaProcess {
        let listener = try start(name, ["listen"] + arguments)
        let ready = await listener.waitForError(containing: "listening to")
        #expect(ready, "\(listener.diagnostics)")
        return listener
    }

    /// Starts a worker and waits until it hosts its sessions.
    func startWorker(_ name: String, _ arguments: [String]) async throws -> KinesiaProcess {
        let worker = try start(name, ["worker", "--name", name] + arguments)
        let ready = await worker.waitForError(containing: "hosting")
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
