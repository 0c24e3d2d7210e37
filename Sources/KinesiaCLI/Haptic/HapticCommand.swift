import Dispatch
import Foundation
import KinesiaClient
import KinesiaHaptic
import KinesiaMotion
import KinesiaSystem
import KinesiaWire
import Synchronization

/// `kinesia haptic`: plays a pattern on a haptic device for each event of a camera or session.
///
/// The decisions are ``HapticPlanner`` (no I/O, pose time) over a ``HapticMapping`` (the
/// built-in one or `--mapping FILE`); the device is a force-feedback motor
/// (`--device /dev/input/eventN`, `FF_RUMBLE` through evdev) or a wearable on a serial port
/// (`--serial /dev/ttyACM0`, ``HapticLineProtocol``). Patterns play on a queue of their own, one
/// at a time, so that the bus is read on time.
public struct HapticCommand: ParsableCommand {
    /// `haptic`, with its help.
    public static let configuration = CommandConfiguration(
        name: "haptic", summary: "Play a haptic pattern for each event (evdev rumble or a serial wearable).",
        discussion: """
            A short pulse for a clean rep, a double pulse for a form fault or a rejected rep, a long \
            one for a setup issue or joints out of view, a rising one for a completed hold or the \
            baseline (the mapping is a data file: --mapping FILE, see docs/haptic-mapping.md). \
            --device drives a force-feedback motor (FF_RUMBLE through evdev: the user needs the \
            input group); --serial sends the line protocol of docs/haptic-serial-protocol.md.
            """)

    /// The options.
    public static var arguments: [Argument<HapticCommand>] {
        [
            .option("camera", \.camera, valueName: "id", help: "The camera whose events are played."),
            .option(
                "session", \.session, valueName: "name",
                help: "Only this session's events (default: every session of the camera)."),
            .option(
                "device", \.device, valueName: "path",
                help: "An evdev input device with a rumble motor (/dev/input/eventN)."),
            .option(
                "serial", \.serial, valueName: "path",
                help: "A serial port with a wearable speaking the line protocol (/dev/ttyACM0)."),
            .option("baud", \.baud, valueName: "rate", help: "The serial port's speed."),
            .option(
                "mapping", \.mapping, valueName: "file",
                help: "A mapping file (default: the built-in one, docs/haptic-mapping.md)."),
            BusProcess.busArgument(\.bus),
        ] + BusSecurityOptions.clientArguments(\.security)
    }

    /// `--camera`.
    public var camera = ""
    /// `--session`.
    public var session: String?
    /// `--device`.
    public var device: String?
    /// `--serial`.
    public var serial: String?
    /// `--baud`.
    public var baud = 115_200
    /// `--mapping`.
    public var mapping: String?
    /// `--bus`.
    public var bus: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()

    /// A command with every default.
    public init() {}

    /// Checks the names and that exactly one device is given.
    public func validate() throws(CLIError) {
        try CueTarget(camera: camera, session: session).validate()
        switch (device, serial) {
        case (nil, nil):
            throw CLIError.usage("give a device: --device /dev/input/eventN or --serial /dev/ttyX")
        case (.some, .some): throw CLIError.usage("give one device: --device or --serial, not both")
        default: break
        }
        guard SerialHapticDevice.isSupported(baudRate: baud) else {
            throw CLIError.usage(
                "--baud must be one of 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600; got \(baud)"
            )
        }
    }

    /// The mapping: `--mapping FILE`, else the built-in one.
    func loadMapping() throws(CLIError) -> HapticMapping {
        do {
            guard let mapping else { return try HapticMapping.builtIn() }
            guard let data = FileManager.default.contents(atPath: mapping) else {
                throw CLIError.failure("cannot read the mapping file \(mapping)")
            }
            return try HapticMapping(json: Array(data), source: mapping)
        } catch let error as HapticMappingError {
            throw CLIError.failure(error.description)
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError.failure("\(error)")
        }
    }

    /// Opens the device.
    func openDevice() throws(CLIError) -> any HapticDevice {
        do {
            if let serial { return try SerialHapticDevice(path: serial, baudRate: baud) }
            return EvdevRumbleDriver(io: try EvdevDevice(path: device ?? ""))
        } catch {
            throw CLIError.failure(error.description)
        }
    }

    /// Plays until SIGINT or SIGTERM.
    public func run(context: CommandContext) async throws {
        let (bus, _) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let mapping = try loadMapping()
        let output = HapticOutput(device: try openDevice())
        let topics = try CueTarget(camera: camera, session: session).topics()
        let log = context.logger
        let what = session.map { "session \(camera)/\($0)" } ?? "camera \(camera)"
        let target = serial.map { "serial \($0)" } ?? "evdev \(device ?? "")"
        let signals = SignalStream([.interrupt, .terminate])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await signal in signals {
                    log.info("\(signal): stopping")
                    return
                }
            }
            group.addTask {
                var planner = HapticPlanner(mapping: mapping)
                var connected = false
                log.info("playing \(what) on \(target) from \(bus)")
                for try await message in BusMessages(bus: bus, topics: topics) {
                    if let failure = output.firstFailure { throw CLIError.failure(failure.description) }
                    let actions: [HapticPlanner.Action]
                    switch message {
                    case .event(let event):
                        actions = planner.receive(event.event, session: event.session, at: event.t)
                    case .snapshot(let snapshot): actions = planner.tick(snapshot.t)
                    case .gap(let gap):
                        log.warning("gap: \(gap)")
                        actions = []
                    case .malformed(let bad):
                        log.warning("malformed message: \(bad)")
                        actions = []
                    case .health:
                        if !connected {
                            connected = true
                            log.info("connected: the bus's health reports come through")
                        }
                        actions = []
                    case .pose, .analytics: actions = []
                    }
                    for action in actions {
                        switch action {
                        case .play(let pattern, let trigger):
                            log.info(
                                "\(trigger): \(pattern.steps.count) steps, \(Int(pattern.duration * 1000)) ms"
                            )
                            output.enqueue(pattern)
                        case .drop(let trigger, let reason):
                            log.info("\(trigger): not played (\(reason))")
                        }
                    }
                }
            }
            try await group.next()
            group.cancelAll()
            try await group.waitForAll()
        }
        output.drain()
        if let failure = output.firstFailure { throw CLIError.failure(failure.description) }
    }
}

/// Plays patterns on a serial queue of its own. The device is used only on that queue (hence
/// `@unchecked Sendable`: the queue is the confinement).
final class HapticOutput: @unchecked Sendable {
    private let device: any HapticDevice
    private let queue = DispatchQueue(label: "kinesia.haptic.device")
    private let failure = Mutex<HapticDeviceError?>(nil)

    init(device: any HapticDevice) {
        self.device = device
    }

    /// The device's first failure.
    var firstFailure: HapticDeviceError? { failure.withLock { $0 } }

    /// Plays `pattern` after what is queued.
    func enqueue(_ pattern: HapticPattern) {
        queue.async { [self] in
            do throws(HapticDeviceError) {
                try device.play(pattern)
            } catch {
                failure.withLock { if $0 == nil { $0 = error } }
            }
        }
    }

    /// Waits until everything queued has been played.
    func drain() { queue.sync {} }
}
