import Foundation
import KinesiaClient
public import KinesiaCueConsumers
import KinesiaMotion
import KinesiaService
import KinesiaSpeech
import KinesiaSystem
public import KinesiaVoice
import KinesiaWire

extension VoiceLanguage: ExpressibleByArgument {}

extension VoiceEngine: ExpressibleByArgument {}

/// `kinesia voice`: speaks the events of a camera's sessions (or of the sessions named) as cues
/// with espeak-ng.
///
/// The decisions are ``VoiceTimeline`` and ``VoiceCuePlanner`` (no I/O, pose time); this
/// command receives the events and snapshots with `BusMessages`, synthesizes each cue with
/// libespeak-ng in the process (``SpeechSynthesizer``), and either plays it (`paplay`,
/// `pw-play` or `aplay`, one at a time) or, with `--output DIR`, writes it as `DIR/0001.wav`,
/// `0002.wav`... with one line per utterance in `DIR/utterances.jsonl`. Following more than one
/// session, the cues of one side name it (`"Left, 2"`). Voices on one sound output (or one
/// `--output DIR`) take turns per utterance (``OutputTurn``).
public struct VoiceCommand: ParsableCommand {
    /// `voice`, with its help.
    public static let configuration = CommandConfiguration(
        name: "voice", summary: "Speak a camera's or some sessions' events as voice cues (espeak-ng).",
        discussion: """
            Counts clean reps aloud, says why a rep was rejected, corrects form, starts and ends \
            holds, names the joints out of view and the placement problems, in en, pt-BR or es. \
            Following more than one session (--session repeated, or a camera with a left and a \
            right session), the cues of one side name it ("Left, 2"). One utterance at a time; \
            setup before form before counts; a cue that waited too long is dropped, and the same \
            text is not repeated within 5 s (all in pose time). Voices on one sound output take \
            turns per utterance, never talking over each other. --output DIR \
            writes each utterance as DIR/NNNN.wav with DIR/utterances.jsonl instead of playing it. \
            --texts FILE reads edited texts (docs/voice-texts.md). Without a sound output it exits \
            1, unless --fallback-output DIR says where to write the utterances instead. Counters \
            (spoken, stale, repeated, late, speechErrors...) on health/<name>/.
            """)

    /// The options.
    public static var arguments: [Argument<VoiceCommand>] {
        CueConsumerOptions.targetArguments(\.options, done: "spoken")
            + [
                .option("language", \.language, valueName: "code", help: "The language of the cues."),
                .option(
                    "texts", \.texts, valueName: "file",
                    help: "A texts file to use instead of the built-in one of --language."),
                .option(
                    "engine", \.engine, valueName: "engine",
                    help:
                        "libespeak-ng in the process, or the espeak-ng command per cue (docs/voice-texts.md)."
                ),
                .option(
                    "output", \.output, valueName: "dir",
                    help:
                        "Write each utterance as DIR/NNNN.wav (and DIR/utterances.jsonl) instead of playing it."
                ),
                .option(
                    "fallback-output", \.fallbackOutput, valueName: "dir",
                    help:
                        "Where to write the utterances (as --output does) when this machine cannot play sound."
                ),
            ] + CueConsumerOptions.busArguments(\.options, role: "voice")
    }

    /// `--language`.
    public var language = VoiceLanguage.english
    /// `--texts`.
    public var texts: String?
    /// `--output`.
    public var output: String?
    /// `--fallback-output`.
    public var fallbackOutput: String?
    /// `--engine`.
    public var engine = VoiceEngine.library

    /// `--camera`, `--session`, `--bus`, `--name`, `--key`, `--server-key`, `--insecure`.
    var options = CueConsumerOptions()

    /// A command with every default.
    public init() {}

    /// Checks the names.
    public func validate() throws(CLIError) {
        try CLIError.from { () throws(CueConsumerError) in try options.target.validate() }
    }

    /// The sessions followed, which decide whether a cue names its side: the `--session`s
    /// given, else every session of the camera.
    var following: VoiceCuePlanner.Following {
        let sessions = options.target.sessions
        return sessions.isEmpty ? .camera : .sessions(Set(sessions))
    }

    /// The texts: `--texts FILE`, else the built-in ones of `--language`.
    /// - Throws: ``CLIError/failure(_:)`` naming the file and what is wrong in it.
    func loadTexts() throws(CLIError) -> VoiceTexts {
        let language = self.language
        return try CueConsumer.loadDataFile(
            texts, what: "texts", builtIn: { try VoiceTexts.builtIn(language) },
            parse: { try VoiceTexts(json: $0, source: $1) })
    }

    /// Where the utterances go: `--output DIR`, else the sound output, else
    /// `--fallback-output DIR` (saying so); the second value tells that the fallback was taken.
    /// - Throws: ``CLIError/failure(_:)`` when there is no sound output and no fallback, or a
    ///   directory cannot be used.
    func sink(context: CommandContext) throws(CLIError) -> (VoiceSink, fallback: Bool) {
        if let output {
            let directory = try CLIError.from { () throws(CueConsumerError) in
                try VoiceOutputDirectory(path: output)
            }
            return (.directory(directory), false)
        }
        do {
            return (.player(try AudioPlayer.find(environment: context.environment)), false)
        } catch {
            guard let fallbackOutput else {
                throw CLIError.failure(
                    error.reason + ": " + error.remedy + ", or --fallback-output DIR to do so only then")
            }
            context.logger.warning(
                "\(error.reason): writing each utterance to \(fallbackOutput) instead of playing it "
                    + "(--fallback-output; health/<name>/ reports noSoundOutput 1)")
            let directory = try CLIError.from { () throws(CueConsumerError) in
                try VoiceOutputDirectory(path: fallbackOutput)
            }
            return (.directory(directory), true)
        }
    }

    /// Speaks until SIGINT or SIGTERM, then decides what still waits and exits.
    public func run(context: CommandContext) async throws {
        let consumer = try options.consumer(role: "voice", context: context)
        let bus = consumer.bus
        let texts = try loadTexts()
        let (sink, fallback) = try sink(context: context)
        let engine = self.engine
        let following = self.following
        let environment = context.environment
        try await consumer.run(context: context) { log in
            let speaker = try VoiceSpeaker(
                texts: texts, engine: engine, sink: sink, following: following, noSoundOutput: fallback,
                environment: environment, logger: log)
            log.info(
                "speaking \(consumer.what) in \(texts.language) (espeak-ng voice \(texts.espeakVoice), \(engine)) on \(bus)"
                    + (sink.directoryPath.map { ", writing to \($0)" } ?? ", playing with \(sink.playerName)")
            )
            return speaker
        }
    }
}
