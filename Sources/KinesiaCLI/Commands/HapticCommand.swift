import Foundation
import KinesiaClient
import KinesiaCueConsumers
import KinesiaHaptic
import KinesiaMotion
import KinesiaService
import KinesiaSystem
import KinesiaWire

/// `kinesia haptic`: plays a pattern on a haptic device for each event of a camera or session.
///
/// The decisions are ``HapticPlanner`` (no I/O, pose time) over a ``HapticMapping`` (the
/// built-in one or `--mapping FILE`); the device is a force-feedback motor
/// (`--device /dev/input/eventN`, `FF_RUMBLE` through evdev) or a wearable on a serial port
/// (`--serial /dev/ttyACM0`, ``HapticLineProtocol``). Patterns play on a queue of their own, one
/// at a time, so that the bus is read on time (``HapticOutput``). A device that is missing,
/// unusable or unplugged is waited for (``HapticDeviceLink``), never fatal: under `kinesia up`
/// the process does not restart in a loop, and `health/<name>/` says `deviceMissing 1`.
public struct HapticCommand: ParsableCommand {
    /// `haptic`, with its help.
    public static let configuration = CommandConfiguration(
        name: "haptic", summary: "Play a haptic pattern for each event (evdev rumble or a serial wearable).",
        discussion: """
            A short pulse for a clean rep, a double pulse for a form fault or a rejected rep, a long \
            one for a setup issue or joints out of view, a rising one for a completed hold or the \
            baseline (the mapping is a data file: --mapping FILE, see docs/haptic-mapping.md). \
            --device drives a force-feedback motor (FF_RUMBLE through evdev: the user needs the \
            input group); --serial sends the line protocol of docs/haptic-serial-protocol.md. A \
            device that is missing or unplugged is waited for (tried again every 5 s at most, \
            logged once); health/<name>/ counts played, lost, deviceReady, deviceMissing, \
            deviceErrors.
            """)

    /// The options.
    public static var arguments: [Argument<HapticCommand>] {
        CueConsumerOptions.targetArguments(\.options, done: "played")
            + [
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
            ] + CueConsumerOptions.busArguments(\.options, role: "haptic")
    }

    /// `--device`.
    public var device: String?
    /// `--serial`.
    public var serial: String?
    /// `--baud`.
    public var baud = 115_200
    /// `--mapping`.
    public var mapping: String?

    /// `--camera`, `--session`, `--bus`, `--name`, `--key`, `--server-key`, `--insecure`.
    var options = CueConsumerOptions()

    /// A command with every default.
    public init() {}

    /// Checks the names and that exactly one device is given.
    public func validate() throws(CLIError) {
        try CLIError.from { () throws(CueConsumerError) in try options.target.validate() }
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
        try CueConsumer.loadDataFile(
            mapping, what: "mapping", builtIn: { try HapticMapping.builtIn() },
            parse: { try HapticMapping(json: $0, source: $1) })
    }

    /// Opens the device given (each time the output needs it: at the start, and after it was lost).
    var openDevice: @Sendable () throws(HapticDeviceError) -> any HapticDevice {
        let (serial, device, baud) = (self.serial, self.device, self.baud)
        return { () throws(HapticDeviceError) -> any HapticDevice in
            if let serial { return try SerialHapticDevice(path: serial, baudRate: baud) }
            return EvdevRumbleDriver(io: try EvdevDevice(path: device ?? ""))
        }
    }

    /// Plays until SIGINT or SIGTERM.
    public func run(context: CommandContext) async throws {
        let consumer = try options.consumer(role: "haptic", context: context)
        let bus = consumer.bus
        let mapping = try loadMapping()
        let target = serial.map { "serial \($0)" } ?? "evdev \(device ?? "")"
        let openDevice = self.openDevice
        try await consumer.run(context: context) { log in
            log.info("playing \(consumer.what) on \(target) from \(bus)")
            return HapticPlayer(
                mapping: mapping, output: HapticOutput(device: target, open: openDevice, logger: log),
                logger: log)
        }
    }
}
