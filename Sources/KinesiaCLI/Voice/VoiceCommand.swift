import Foundation
import KinesiaClient
import KinesiaMotion
import KinesiaSpeech
import KinesiaSystem
public import KinesiaVoice
import KinesiaWire

extension VoiceLanguage: ExpressibleByArgument {}

/// How `kinesia voice` runs espeak-ng.
public enum VoiceEngine: String, CaseIterable, Sendable, ExpressibleByArgument {
    /// libespeak-ng in the process: a few milliseconds per cue (the default).
    case library
    /// The `espeak-ng` command, one process per cue: every WAV is exactly what `espeak-ng -w`
    /// writes for its text, tens of milliseconds later.
    case command
}

/// `kinesia voice`: speaks a camera's (or one session's) events as cues with espeak-ng.
///
/// The decisions are ``VoiceTimeline`` and ``VoiceCuePlanner`` (no I/O, pose time); this
/// command receives the events and snapshots with `BusMessages`, synthesizes each cue with
/// libespeak-ng in the process (``SpeechSynthesizer``), and either plays it (`paplay`,
/// `pw-play` or `aplay`, one at a time) or, with `--output DIR`, writes it as `DIR/0001.wav`,
/// `0002.wav`... with one line per utterance in `DIR/utterances.jsonl`.
public struct VoiceCommand: ParsableCommand {
    /// `voice`, with its help.
    public static let configuration = CommandConfiguration(
        name: "voice", summary: "Speak a camera's or a session's events as voice cues (espeak-ng).",
        discussion: """
            Counts clean reps aloud, says why a rep was rejected, corrects form, starts and ends \
            holds, names the joints out of view and the placement problems, in en, pt-BR or es. \
            One utterance at a time; setup before form before counts; a cue that waited too long is \
            dropped, and the same text is not repeated within 5 s (all in pose time). --output DIR \
            writes each utterance as DIR/NNNN.wav with DIR/utterances.jsonl instead of playing it. \
            --texts FILE reads edited texts (docs/voice-texts.md).
            """)

    /// The options.
    public static var arguments: [Argument<VoiceCommand>] {
        [
            .option("camera", \.camera, valueName: "id", help: "The camera whose events are spoken."),
            .option(
                "session", \.session, valueName: "name",
                help: "Only this session's events (default: every session of the camera)."),
            .option("language", \.language, valueName: "code", help: "The language of the cues."),
            .option(
                "texts", \.texts, valueName: "file",
                help: "A texts file to use instead of the built-in one of --language."),
            .option(
                "engine", \.engine, valueName: "engine",
                help: "libespeak-ng in the process, or the espeak-ng command per cue (docs/voice-texts.md)."),
            .option(
                "output", \.output, valueName: "dir",
                help: "Write each utterance as DIR/NNNN.wav (and DIR/utterances.jsonl) instead of playing it."
            ),
            BusProcess.busArgument(\.bus),
        ] + BusSecurityOptions.clientArguments(\.security)
    }

    /// `--camera`.
    public var camera = ""
    /// `--session`.
    public var session: String?
    /// `--language`.
    public var language = VoiceLanguage.english
    /// `--texts`.
    public var texts: String?
    /// `--output`.
    public var output: String?
    /// `--engine`.
    public var engine = VoiceEngine.library
    /// `--bus`.
    public var bus: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()

    /// A command with every default.
    public init() {}

    /// Checks the names.
    public func validate() throws(CLIError) {
        try CueTarget(camera: camera, session: session).validate()
    }

    /// The texts: `--texts FILE`, else the built-in ones of `--language`.
    /// - Throws: ``CLIError/failure(_:)`` naming the file and what is wrong in it.
    func loadTexts() throws(CLIError) -> VoiceTexts {
        do {
            guard let texts else { return try VoiceTexts.builtIn(language) }
            guard let data = FileManager.default.contents(atPath: texts) else {
                throw CLIError.failure("cannot read the texts file \(texts)")
            }
            return try VoiceTexts(json: Array(data), source: texts)
        } catch let error as VoiceTextsError {
            throw CLIError.failure(error.description)
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError.failure("\(error)")
        }
    }

    /// Speaks until SIGINT or SIGTERM, then decides what still waits and exits.
    public func run(context: CommandContext) async throws {
        let (bus, _) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let texts = try loadTexts()
        let topics = try CueTarget(camera: camera, session: session).topics()
        let sink: VoiceSink
        if let output {
            sink = .directory(try VoiceOutputDirectory(path: output))
        } else {
            sink = .player(try AudioPlayer.locate(environment: context.environment))
        }
        let log = context.logger
        let engine = self.engine
        let what = session.map { "session \(camera)/\($0)" } ?? "camera \(camera)"
        let signals = SignalStream([.interrupt, .terminate])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await signal in signals {
                    log.info("\(signal): stopping")
                    return
                }
            }
            group.addTask {
                let speaker = try VoiceSpeaker(texts: texts, engine: engine, sink: sink, logger: log)
                defer { speaker.close() }
                log.info(
                    "speaking \(what) in \(texts.language) (espeak-ng voice \(texts.espeakVoice), \(engine)) on \(bus)"
                        + (sink.directoryPath.map { ", writing to \($0)" }
                            ?? ", playing with \(sink.playerName)"))
                do {
                    for try await message in BusMessages(bus: bus, topics: topics) {
                        try speaker.handle(message)
                    }
                } catch let error as CancellationError {
                    throw error
                }
                try speaker.finish()
            }
            try await group.next()
            group.cancelAll()
            try await group.waitForAll()
        }
    }
}
