import Dispatch
import Foundation
import KinesiaSystem
import Synchronization

/// The program that plays a WAV file on this machine's sound output, one file at a time.
///
/// Chosen by what is there: `paplay` with a PulseAudio (or PipeWire-Pulse) server, `pw-play`
/// with a PipeWire server, `aplay` with an ALSA device (`/dev/snd`). No server and no device:
/// ``locate(environment:)`` fails saying so, and that `--output DIR` writes files instead.
struct AudioPlayer: Sendable {
    /// The program's name (`paplay`).
    var name: String
    /// Its path.
    var executable: String
    /// Its arguments before the file.
    var arguments: [String]
    /// The environment it runs with.
    var environment: [String: String]

    /// The player for this machine.
    /// - Throws: ``CLIError/failure(_:)`` when there is no sound output or no player for it.
    /// - Parameter soundDevices: The ALSA device directory.
    static func locate(environment: [String: String], soundDevices: String = "/dev/snd") throws(CLIError)
        -> AudioPlayer
    {
        let files = FileManager.default
        let runtime = environment["XDG_RUNTIME_DIR"] ?? ""
        let pulse =
            environment["PULSE_SERVER"] != nil
            || (!runtime.isEmpty && files.fileExists(atPath: runtime + "/pulse/native"))
        let pipewire = !runtime.isEmpty && files.fileExists(atPath: runtime + "/pipewire-0")
        let alsa = ((try? files.contentsOfDirectory(atPath: soundDevices)) ?? []).contains {
            $0.hasPrefix("pcmC")
        }
        let candidates: [(Bool, String, [String])] = [
            (pulse, "paplay", []), (pipewire, "pw-play", []), (alsa, "aplay", ["-q"]),
        ]
        for (available, name, arguments) in candidates where available {
            if let path = which(name, environment: environment) {
                return AudioPlayer(
                    name: name, executable: path, arguments: arguments, environment: environment)
            }
        }
        guard pulse || pipewire || alsa else {
            throw CLIError.failure(
                "no audio output on this machine (no PulseAudio or PipeWire server, no ALSA device in \(soundDevices)): "
                    + "use --output DIR to write each utterance as a WAV file instead")
        }
        throw CLIError.failure(
            "no audio player found for the sound output here: install pulseaudio-utils (paplay), "
                + "pipewire-bin (pw-play) or alsa-utils (aplay), or use --output DIR")
    }

    /// The first executable `name` on `PATH`.
    static func which(_ name: String, environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Plays `file` and waits until it has been played.
    /// - Throws: ``CLIError/failure(_:)`` when the player cannot start or fails.
    func play(_ file: String) throws(CLIError) {
        let spawn = ProcessSpawn(
            executable: executable, arguments: [name] + arguments + [file],
            environment: environment.map { "\($0.key)=\($0.value)" })
        let pid: pid_t
        do {
            pid = try spawn.spawn()
        } catch {
            throw CLIError.failure("cannot start \(name): \(error)")
        }
        let status: TerminationStatus?
        do {
            status = try ChildWait.reap(pid, blocking: true)
        } catch {
            throw CLIError.failure("\(name) was lost: \(error)")
        }
        guard let status, status.isSuccess else {
            throw CLIError.failure("\(name) failed (\(status.map { "\($0)" } ?? "unknown")) playing \(file)")
        }
    }
}

/// Plays WAV files one after the other on a serial queue of its own, so that receiving events
/// never waits for the sound: the voice never talks over itself, and the bus is read on time.
final class SerialAudioOutput: Sendable {
    private let player: AudioPlayer
    private let queue = DispatchQueue(label: "kinesia.voice.player")
    private let failure = Mutex<CLIError?>(nil)
    private let directory: String

    /// - Parameter directory: Where the WAV files wait until played (removed after).
    init(player: AudioPlayer, directory: String) {
        self.player = player
        self.directory = directory
    }

    /// The player's first failure, once it happened.
    var firstFailure: CLIError? { failure.withLock { $0 } }

    /// Queues `bytes` (a WAV file) to be played after what is queued.
    /// - Parameter started: Called on the player's queue just before the player starts.
    func enqueue(_ bytes: [UInt8], number: Int, started: @escaping @Sendable () -> Void) throws {
        let file = directory + "/utterance-\(number).wav"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        queue.async { [self] in
            defer { try? FileManager.default.removeItem(atPath: file) }
            started()
            do throws(CLIError) {
                try self.player.play(file)
            } catch {
                self.failure.withLock { if $0 == nil { $0 = error } }
            }
        }
    }

    /// Waits until everything queued has been played.
    func drain() {
        queue.sync {}
    }
}
