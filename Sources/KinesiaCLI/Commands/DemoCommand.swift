import Foundation
import KinesiaBus
import KinesiaClient
public import KinesiaMotion
import KinesiaSystem
import KinesiaWire
import Synchronization

/// `kinesia demo`: the whole fan-out on one box, for a newcomer, with one command.
///
/// In a private temporary bus directory it starts, as real child processes of the same
/// executable and under the ``Supervisor`` of `kinesia up`: a broker, a left and a right worker
/// (`--session left=EXERCISE:left`, `--session right=EXERCISE:right`, one process each) and an
/// ingest of the built-in simulator (`sim:EXERCISE,side=both,seed=N`, at the recording's pace,
/// looping). It shows the live view of `kinesia watch` in the foreground for `--seconds`
/// (counted from the moment the ingest starts), then stops everything gracefully (intake
/// first, the broker last), prints each session's summary (clean reps, rejected reps with their
/// faults, the best value, the events received) and exits 0.
///
/// The same seed gives the same poses, so the same reps in every run. Control-C stops early and
/// still prints the summary; a second Control-C kills the children at once. No child outlives
/// the demo: the supervisor reaps every one before the summary, and a child whose demo dies
/// is sent SIGTERM by the kernel (``ParentDeathSignal``).
public struct DemoCommand: ParsableCommand {
    /// `demo`, with its help.
    public static let configuration = CommandConfiguration(
        name: "demo", summary: "Run a broker, an ingest and two workers with the live view, then summarise.",
        discussion: """
            Starts, in a temporary bus directory, a broker, a left and a right worker and an \
            ingest of a simulated exercise (repeatable: seeded), shows the live view for \
            --seconds, stops everything and prints each session's reps, faults, best value and \
            events. When standard output is not a terminal (or with --plain), prints progress \
            lines instead of redrawing. Needs nothing beyond the build.
            """)

    /// The options.
    public static var arguments: [Argument<DemoCommand>] {
        [
            .option(
                "seconds", \.seconds, valueName: "n",
                help: "How long the exercise runs once the ingest starts."),
            .option(
                "exercise", \.exercise, valueName: "id",
                help: "The catalog exercise to simulate and analyse."),
            .option(
                "seed", \.seed, valueName: "n",
                help: "The simulator's seed (the same seed gives the same reps)."),
            .flag("plain", \.plain, help: "Print lines instead of redrawing, even on a terminal."),
        ]
    }

    /// `--seconds`.
    public var seconds = 30.0
    /// `--exercise`.
    public var exercise = Exercise.named("shoulderAbduction")!
    /// `--seed`.
    public var seed = 7
    /// `--plain`.
    public var plain = false

    /// The camera of the demo.
    static let camera = "cam0"

    /// A command with every default.
    public init() {}

    /// Checks `--seconds` and `--seed`.
    public func validate() throws(CLIError) {
        guard seed >= 0 else { throw CLIError.usage("--seed must be 0 or more, got \(seed)") }
        guard seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            throw CLIError.usage("--seconds must be more than 0 and at most 86400")
        }
    }

    /// The processes of the demo, on the bus `directory`.
    func topology(bus directory: String) -> Topology {
        let camera = Self.camera
        let logLevel = ["KINESIA_LOG_LEVEL": "warning"]
        var processes = [
            ProcessSpec(name: "broker", command: ["broker"], role: .broker, environment: logLevel)
        ]
        for side in [BodySide.left, .right] {
            processes.append(
                ProcessSpec(
                    name: "worker-\(side.rawValue)",
                    command: [
                        "worker", "--camera", camera, "--session",
                        "\(side.rawValue)=\(exercise.id):\(side.rawValue)",
                    ], role: .worker, environment: logLevel))
        }
        processes.append(
            ProcessSpec(
                name: "ingest-\(camera)",
                command: [
                    "ingest", "--camera", camera, "--source", "sim:\(exercise.id),side=both,seed=\(seed)",
                    "--pace", "recording", "--loop",
                ], role: .ingest, environment: logLevel))
        return Topology(
            bus: directory, processes: processes, shutdown: ShutdownPolicy(deadline: .seconds(5)),
            restart: RestartLimits(maxRestarts: 3), startup: StartupPolicy(settle: .milliseconds(300)))
    }

    /// What each session is, for the summary.
    var labels: [WatchState.SessionID: String] {
        Dictionary(
            uniqueKeysWithValues: [BodySide.left, .right].map { side in
                (
                    WatchState.SessionID(camera: Self.camera, session: side.rawValue),
                    "\(exercise.id), \(side.rawValue) side"
                )
            })
    }

    /// Runs the demo.
    /// - Throws: ``CLIError/failure(_:)`` when the bus directory cannot be made, a process of
    ///   the demo failed, or nothing was heard from the workers.
    public func run(context: CommandContext) async throws {
        // Before any child exists: a signal from now on stops the demo, it does not end it.
        let signals = SignalStream([.interrupt, .terminate, .hangup])
        let directory: IPCDirectory
        do {
            directory = try IPCDirectory.makeTemporary(prefix: "kinesia-demo")
        } catch {
            throw CLIError.failure("cannot make a bus directory: \(error.message)")
        }
        defer { directory.remove() }
        let bus: BusAddress
        do {
            bus = try BusAddress(parsing: directory.path)
        } catch {
            throw CLIError.failure(error.description)
        }
        let topology = self.topology(bus: directory.path)
        try? topology.validate()

        let output = context.standardOutput
        let redraw = !plain && Terminal.isRedrawable(output, environment: context.environment)
        let log = Mutex<[String]>([])
        let (ingestStarted, ingestStartedContinuation) = AsyncStream<Void>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        let ingestName = "ingest-\(Self.camera)"
        let supervisor = Supervisor(topology: topology) { event in
            if case .started(let name, _) = event, name == ingestName { ingestStartedContinuation.yield() }
            if redraw {
                log.withLock { $0 = Array(($0 + ["demo: \(event)"]).suffix(4)) }
            } else {
                output.write("demo: \(event)\n")
                output.flush()
            }
        }

        let seconds = self.seconds
        let exerciseID = exercise.id
        let view = LiveView(
            bus: bus, prefixes: [.kind(.snapshot), .kind(.event), .kind(.health)],
            mode: redraw ? .terminal : .plain,
            title: { elapsed in "kinesia demo \(exerciseID) | \(Int(elapsed)) s" },
            footer: { log.withLock { $0 } }, printsFinalView: false)
        if !redraw {
            output.write(
                "demo: \(exerciseID) on a simulated camera (seed \(seed)) for \(WatchRenderer.number(seconds, 0)) s, "
                    + "bus \(bus)\n")
        }
        let stop = StopToken()
        let interrupted = StopToken()

        async let collected = Self.onThread { try view.run(stop: stop, context: context) }
        let status = await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                for await signal in signals {
                    interrupted.request(signal)
                    supervisor.requestShutdown(signal: signal)
                }
                return nil
            }
            group.addTask {
                for await _ in ingestStarted { break }
                guard (try? await Task.sleep(for: .seconds(double: seconds))) != nil else { return nil }
                supervisor.requestShutdown()
                return nil
            }
            group.addTask { await supervisor.run() }
            var status: Int32 = 1
            while let result = await group.next() {
                if let result {
                    status = result
                    break
                }
            }
            ingestStartedContinuation.finish()
            group.cancelAll()
            return status
        }
        // Every child has been reaped; the last messages are already in the view's queue.
        try? await Task.sleep(for: .milliseconds(200))
        stop.request()
        let state: WatchState
        do {
            state = try await collected
        } catch {
            throw CLIError.failure("cannot read the bus: \(error)")
        }

        output.write(
            "\nSummary of \(exerciseID) (seed \(seed))"
                + (interrupted.signal.map { ", stopped early by \($0)" } ?? "")
                + ":\n")
        output.write(WatchRenderer.summaryLines(state, labels: labels).joined(separator: "\n") + "\n")
        output.flush()
        guard status == 0 else {
            throw CLIError.failure(
                "a process of the demo failed (exit status \(status)); see the lines above")
        }
        guard !state.sessions.isEmpty else {
            throw CLIError.failure("no event or snapshot arrived from the workers")
        }
    }

    /// Runs `body` on a thread of its own (libzmq sockets block and stay on one thread).
    private static func onThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result)
        async throws -> Result
    {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Swift.Result { try body() }) }
            thread.name = "kinesia.demo.view"
            thread.start()
        }
    }
}
