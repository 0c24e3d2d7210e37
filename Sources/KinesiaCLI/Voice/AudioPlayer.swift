import Dispatch
import Foundation
import KinesiaSystem
import Synchronization

/// The program that plays a WAV file on this machine's sound output, one file at a time.
///
/// Chosen by what is there: `paplay` with a PulseAudio (or PipeWire-Pulse) server, `pw-play`
/// with a PipeWire server, `aplay` with an ALSA device (`/dev/snd`). No server and no device:
/// ``find(environment:soundDevices:)`` fails saying so, and that `--output DIR` writes files instead.
struct AudioPlayer: Sendable {
    /// The program's name (`paplay`).
    var name: String
    /// Its path.
    var executable: String
    /// Its arguments before the file.
    var arguments: [String]
    /// The environment it runs with.
    var environment: [String: String]

    /// Why this machine cannot play sound, and what to do about it.
    struct Unavailable: Error, Hashable, Sendable {
        /// What is missing: no sound output, or no player for it.
        var reason: String
        /// What to install or to use instead.
        var remedy: String
    }

    /// The player for this machine, or why there is none.
    /// - Parameter soundDevices: The ALSA device directory.
    static func find(environment: [String: String], soundDevices: String = "/dev/snd") throws(Unavailable)
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
            throw Unavailable(
                reason:
                    "no audio output on this machine (no PulseAudio or PipeWire server, no ALSA device in \(soundDevices))",
                remedy: "use --output DIR to write each utterance as a WAV file instead")
        }
        throw Unavailable(
            reason: "no audio player found for the sound output here",
            remedy:
                "install pulseaudio-utils (paplay), pipewire-bin (pw-play) or alsa-utils (aplay), or use --output DIR"
        )
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
/// A file the player fails on is counted (``failures``) and told to `failed`; the next one is
/// played all the same.
final class SerialAudioOutput: Sendable {
    private let player: AudioPlayer
    private let queue = DispatchQueue(label: "kinesia.voice.player")
    private let failureCount = Mutex(0)
    private let failed: @Sendable (CLIError) -> Void
    private let directory: String

    /// - Parameters:
    ///   - directory: Where the WAV files wait until played (removed after).
    ///   - failed: Told each failure of the player, on the player's queue.
    init(player: AudioPlayer, directory: String, failed: @escaping @Sendable (CLIError) -> Void) {
        self.player = player
        self.directory = directory
        self.failed = failed
    }

    /// How many files the player failed on.
    var failures: Int { failureCount.withLock { $0 } }

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
                self.failureCount.withLock { $0 += 1 }
                self.failed(error)
            }
        }
    }

    /// Waits until everything queued has been played.
    func drain() {
        queue.sync {}
    }
}
