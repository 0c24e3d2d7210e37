import Dispatch
import Foundation
package import KinesiaSystem
import Synchronization

/// The program that plays a WAV file on this machine's sound output, one file at a time.
///
/// Chosen by what is there: `paplay` with a PulseAudio (or PipeWire-Pulse) server, `pw-play`
/// with a PipeWire server, `aplay` with an ALSA device (`/dev/snd`). No server and no device:
/// ``find(environment:soundDevices:)`` fails saying so, and that `--output DIR` writes files instead.
package struct AudioPlayer: Sendable {
    /// The program's name (`paplay`).
    package var name: String
    /// Its path.
    package var executable: String
    /// Its arguments before the file.
    package var arguments: [String]
    /// The environment it runs with.
    package var environment: [String: String]
    /// What identifies the sound output it plays on (`paplay:/run/user/1000/pulse/native#`,
    /// with the sink after `#` when `$PULSE_SINK` or `$PIPEWIRE_NODE` names one): voices on
    /// the same output take turns (``OutputTurn``), voices on two outputs (two earpieces) do not.
    package var output: String

    /// Why this machine cannot play sound, and what to do about it.
    package struct Unavailable: Error, Hashable, Sendable {
        /// What is missing: no sound output, or no player for it.
        package var reason: String
        /// What to install or to use instead.
        package var remedy: String
    }

    /// The player for this machine, or why there is none.
    /// - Parameter soundDevices: The ALSA device directory.
    package static func find(environment: [String: String], soundDevices: String = "/dev/snd")
        throws(Unavailable)
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
        let candidates: [(Bool, String, [String], String)] = [
            (
                pulse, "paplay", [],
                (environment["PULSE_SERVER"] ?? runtime + "/pulse/native") + "#"
                    + (environment["PULSE_SINK"] ?? "")
            ),
            (
                pipewire, "pw-play", [],
                (environment["PIPEWIRE_REMOTE"] ?? runtime + "/pipewire-0") + "#"
                    + (environment["PIPEWIRE_NODE"] ?? "")
            ),
            (alsa, "aplay", ["-q"], soundDevices + "#" + (environment["ALSA_CARD"] ?? "")),
        ]
        for (available, name, arguments, output) in candidates where available {
            if let path = which(name, environment: environment) {
                return AudioPlayer(
                    name: name, executable: path, arguments: arguments, environment: environment,
                    output: name + ":" + output)
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
    package static func which(_ name: String, environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Plays `file` and waits until it has been played.
    /// - Throws: ``CueConsumerError/failure(_:)`` when the player cannot start or fails.
    package func play(_ file: String) throws(CueConsumerError) {
        let spawn = ProcessSpawn(
            executable: executable, arguments: [name] + arguments + [file],
            environment: environment.map { "\($0.key)=\($0.value)" })
        let child: ChildProcess
        do {
            child = try ChildProcess(spawn, name: "kinesia-audio-player")
        } catch {
            throw CueConsumerError.failure("cannot start \(name): \(error)")
        }
        // `.exited(-1)` when someone else reaped it: the player was lost.
        let status = child.waitForExit()
        guard let status, status.isSuccess else {
            throw CueConsumerError.failure(
                "\(name) failed (\(status.map { "\($0)" } ?? "unknown")) playing \(file)")
        }
    }
}

/// Plays WAV files one after the other on a serial queue of its own, so that receiving events
/// never waits for the sound: the voice never talks over itself, and the bus is read on time.
/// With an ``OutputTurn``, each file is played in a turn of the sound output, so that another
/// voice on the same output never talks over it either; a file whose turn has not come by its
/// deadline (the other voice held the output past the cue's age) is not played and is counted
/// (``late``). A file the player fails on is counted (``failures``) and told to `failed`; the
/// next one is played all the same.
package final class SerialAudioOutput: Sendable {
    private let player: AudioPlayer
    private let turn: OutputTurn?
    private let queue = DispatchQueue(label: "kinesia.voice.player")
    private let failureCount = Mutex(0)
    private let lateCount = Mutex(0)
    private let failed: @Sendable (CueConsumerError) -> Void
    private let directory: String
    private let clock: ElapsedClock

    /// - Parameters:
    ///   - turn: The turns of the sound output shared with other voices (`nil`: none).
    ///   - directory: Where the WAV files wait until played (removed after).
    ///   - clock: What the deadlines are on.
    ///   - failed: Told each failure of the player, on the player's queue.
    package init(
        player: AudioPlayer, turn: OutputTurn?, directory: String,
        clock: ElapsedClock = ElapsedClock(ContinuousClock()),
        failed: @escaping @Sendable (CueConsumerError) -> Void
    ) {
        self.player = player
        self.turn = turn
        self.directory = directory
        self.clock = clock
        self.failed = failed
    }

    /// How many files the player failed on.
    package var failures: Int { failureCount.withLock { $0 } }
    /// How many files were not played because their turn came after their deadline.
    package var late: Int { lateCount.withLock { $0 } }

    /// Queues `bytes` (a WAV file) to be played after what is queued.
    /// - Parameters:
    ///   - deadline: When it is too late to start playing it (on the output's clock).
    ///   - started: Called on the player's queue just before the player starts.
    ///   - skipped: Called on the player's queue when its turn came too late.
    package func enqueue(
        _ bytes: [UInt8], number: Int, deadline: Duration,
        started: @escaping @Sendable () -> Void, skipped: @escaping @Sendable () -> Void
    ) throws {
        let file = directory + "/utterance-\(number).wav"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        queue.async { [self] in
            defer { try? FileManager.default.removeItem(atPath: file) }
            do {
                let play = { () throws(CueConsumerError) in
                    started()
                    try self.player.play(file)
                }
                if let turn {
                    if try turn.take(until: deadline, on: self.clock, play) == nil {
                        self.lateCount.withLock { $0 += 1 }
                        skipped()
                    }
                } else {
                    guard self.clock.now <= deadline else {
                        self.lateCount.withLock { $0 += 1 }
                        skipped()
                        return
                    }
                    try play()
                }
            } catch let error as CueConsumerError {
                self.failureCount.withLock { $0 += 1 }
                self.failed(error)
            } catch {
                self.failureCount.withLock { $0 += 1 }
                self.failed(CueConsumerError.failure("\(error)"))
            }
        }
    }

    /// Waits until everything queued has been played.
    package func drain() {
        queue.sync {}
    }
}
