import Foundation
import KinesiaSystem

/// Something that turns text into audio: libespeak-ng in the process (``SpeechSynthesizer``)
/// or the `espeak-ng` command, one process per utterance (``SpeechCommand``).
///
/// Why both: the library answers in a few milliseconds but keeps state from one utterance to
/// the next (the same text comes out a few samples different after other speech); the command
/// starts a fresh engine every time, so its WAV for a text is always the same bytes, at the
/// price of a process start and the voice data loaded again (tens of milliseconds).
public protocol SpeechEngine: AnyObject {
    /// The voice (`en-us`, `pt-br`, `es`).
    var voice: String { get }
    /// Speaks `text` into samples.
    /// - Throws: ``SpeechError``.
    func synthesize(_ text: String) throws(SpeechError) -> WAVAudio
    /// Frees what the engine holds (idempotent).
    func close()
}

extension SpeechSynthesizer: SpeechEngine {
    /// Speaks `text` into samples.
    public func synthesize(_ text: String) throws(SpeechError) -> WAVAudio {
        try synthesize(text, firstSamples: {})
    }
}

/// The `espeak-ng` command, one process per utterance: `espeak-ng -v VOICE -w FILE`, the text
/// on standard input (so that a text starting with `-` is never read as an option).
///
/// ```swift
/// let espeak = try SpeechCommand(voice: "es")
/// let audio = try espeak.synthesize("Estira el codo")   // what `espeak-ng -v es -w` writes
/// ```
public final class SpeechCommand: SpeechEngine {
    /// The voice.
    public let voice: String
    /// The `espeak-ng` executable.
    public let executable: String
    private let directory: String
    private var count = 0

    /// Finds `espeak-ng` on `PATH` and checks the voice.
    /// - Throws: ``SpeechError/commandMissing`` or ``SpeechError/unknownVoice(_:)``.
    /// - Parameter environment: Whose `PATH` is searched (`nil`: the process's).
    public init(voice: String, environment: [String: String]? = nil) throws(SpeechError) {
        let path =
            (environment ?? ProcessInfo.processInfo.environment)["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        guard
            let executable = path.split(separator: ":").map({ "\($0)/espeak-ng" }).first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else { throw SpeechError.commandMissing }
        self.voice = voice
        self.executable = executable
        directory =
            NSTemporaryDirectory()
            + "kinesia-espeak-\(ProcessIdentity.id)-\(UInt32.random(in: 0...UInt32.max))"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw SpeechError.synthesisFailed(-1)
        }
        // An unknown voice makes espeak-ng exit 1 without a file.
        do {
            _ = try synthesize(" ")
        } catch {
            close()
            throw SpeechError.unknownVoice(voice)
        }
    }

    deinit { close() }

    /// Removes the scratch directory.
    public func close() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `espeak-ng` for `text` and reads the WAV it wrote.
    public func synthesize(_ text: String) throws(SpeechError) -> WAVAudio {
        count += 1
        let input = directory + "/\(count).txt"
        let output = directory + "/\(count).wav"
        defer {
            try? FileManager.default.removeItem(atPath: input)
            try? FileManager.default.removeItem(atPath: output)
        }
        guard FileManager.default.createFile(atPath: input, contents: Data(text.utf8)) else {
            throw SpeechError.synthesisFailed(-1)
        }
        var spawn = ProcessSpawn(
            executable: executable, arguments: ["espeak-ng", "-v", voice, "-w", output], environment: [])
        spawn.standardInput = input
        let status: TerminationStatus?
        do {
            status = try ChildProcess(spawn, name: "kinesia-espeak-ng").waitForExit()
        } catch {
            throw SpeechError.synthesisFailed(-1)
        }
        guard status?.isSuccess == true, let data = FileManager.default.contents(atPath: output) else {
            throw SpeechError.synthesisFailed(Int(status?.shellStatus ?? -1))
        }
        do {
            return try WAVAudio(parsing: Array(data))
        } catch {
            throw SpeechError.synthesisFailed(-2)
        }
    }
}
