import KinesiaClient
import KinesiaService
public import KinesiaWire

/// `kinesia watch`: a live terminal view of every session and process on the bus, the Linux
/// counterpart of the seeds' SwiftUI `Hud`.
///
/// Per session (`camera/session`): the value in degrees, the best, clean and rejected reps, a
/// hold progress bar, missing joints, setup issues, confidence, the last event and the last
/// form fault. Per process (from `health/`): name, role, pid, uptime and counters, `STALE` when
/// not heard from for 3 seconds. The model is ``WatchState`` and the drawing
/// ``WatchRenderer``; this command only subscribes and prints.
///
/// On a terminal the view is redrawn in place (at most ten times a second); when standard
/// output is not a terminal (or with `--plain`) it prints one line per event and a progress
/// report every 5 seconds, then the full view at the end.
public struct WatchCommand: ParsableCommand {
    /// `watch`, with its help.
    public static let configuration = CommandConfiguration(
        name: "watch", summary: "Show every session and process on the bus, live.",
        discussion: """
            Subscribes to snapshot/, event/ and health/. On a terminal, redraws the view in \
            place; otherwise (or with --plain) prints one line per event, progress every 5 \
            seconds and the full view at the end. Stops on SIGINT/SIGTERM, or by itself with \
            --once, --idle or --duration.
            """)

    /// The options.
    public static var arguments: [Argument<WatchCommand>] {
        [
            BusProcess.busArgument(\.bus),
            .option(
                "camera", \.cameras, valueName: "id",
                help: "Show only this camera's sessions (repeatable; processes are always shown)."),
            .flag("once", \.once, help: "Listen for --wait seconds, print the view once and exit."),
            .option(
                "wait", \.wait, valueName: "s",
                help: "How long --once listens before printing."),
            .option("idle", \.idle, valueName: "s", help: "Exit when nothing arrived for this many seconds."),
            .option("duration", \.duration, valueName: "s", help: "Exit after this many seconds."),
            .flag("plain", \.plain, help: "Print lines instead of redrawing, even on a terminal."),
        ] + BusSecurityOptions.clientArguments(\.security)
    }

    /// `--bus`.
    public var bus: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()
    /// `--camera`, possibly several.
    public var cameras: [String] = []
    /// `--once`.
    public var once = false
    /// `--wait`.
    public var wait = 1.5
    /// `--idle`.
    public var idle: Double?
    /// `--duration`.
    public var duration: Double?
    /// `--plain`.
    public var plain = false

    /// A command with every default.
    public init() {}

    /// Checks the camera names and the times.
    public func validate() throws(CLIError) {
        for camera in cameras where !Topic.isValidName(camera) {
            throw CLIError.usage(Topic.invalidNameMessage(camera, role: "camera"))
        }
        let times: [(String, Double?)] = [("--wait", wait), ("--idle", idle), ("--duration", duration)]
        for (name, value) in times {
            if let value, !(value.isFinite && value > 0) {
                throw CLIError.usage("\(name) must be a positive number of seconds")
            }
        }
    }

    /// The subscriptions: every session (or those of `--camera`) and every process.
    public var prefixes: [TopicPrefix] {
        guard !cameras.isEmpty else {
            return [.kind(.snapshot), .kind(.event), .kind(.session), .kind(.health)]
        }
        return cameras.flatMap { camera in
            [
                try! TopicPrefix.snapshots(camera: camera), try! TopicPrefix.events(camera: camera),
                try! TopicPrefix.runs(camera: camera),
            ]
        } + [.kind(.health)]
    }

    /// Shows the bus until a signal or a limit.
    public func run(context: CommandContext) async throws {
        let (bus, _) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let redraw = !plain && Terminal.isRedrawable(context.standardOutput, environment: context.environment)
        let address = bus.description
        let view = LiveView(
            bus: bus, prefixes: prefixes, mode: redraw ? .terminal : .plain,
            title: { _ in "kinesia watch \(address)" }, duration: duration, idle: idle,
            once: once ? wait : nil, announcesConnection: !once)
        let output = context.standardOutput
        // Control-C twice must not leave the terminal without its cursor.
        _ = try await BusProcess.run(
            context: context, thread: "watch",
            beforeForcedExit: { if redraw { output.write(Terminal.leave) } }
        ) { stop in
            try view.run(stop: stop, context: context)
        }
    }
}
