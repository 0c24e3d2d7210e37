import Foundation
import KinesiaClient
import KinesiaMotion
import KinesiaSpeech
import KinesiaVoice
import KinesiaWire

/// The shell of `kinesia voice`: feeds the bus's events and snapshots to a ``VoiceTimeline``
/// and performs what it decides (synthesize with libespeak-ng, then write or play), logging
/// each utterance with its latency and each dropped cue with why.
///
/// Owns the speech engine (libespeak-ng's one engine, or the command): made, used and closed by
/// the task that consumes the bus.
final class VoiceSpeaker {
    private var timeline: VoiceTimeline
    private let texts: VoiceTexts
    private let synthesizer: any SpeechEngine
    private let sink: VoiceSink
    private let audio: SerialAudioOutput?
    private let playDirectory: String?
    private let logger: Logger
    private let clock = ContinuousClock()
    /// When the latest event of each pose time arrived (for the latency of its cues).
    private var arrivals: [Double: ContinuousClock.Instant] = [:]
    private var played = 0
    private var connected = false
    /// Utterances spoken, and cues dropped.
    private(set) var spoken = 0
    private(set) var dropped = 0

    /// - Throws: ``CLIError/failure(_:)`` when libespeak-ng cannot start with the texts' voice.
    init(texts: VoiceTexts, engine: VoiceEngine, sink: VoiceSink, logger: Logger) throws(CLIError) {
        self.texts = texts
        self.sink = sink
        self.logger = logger
        timeline = VoiceTimeline(planner: VoiceCuePlanner(texts: texts))
        do {
            switch engine {
            case .library: synthesizer = try SpeechSynthesizer(voice: texts.espeakVoice)
            case .command: synthesizer = try SpeechCommand(voice: texts.espeakVoice)
            }
        } catch {
            throw CLIError.failure("speech: \(error)")
        }
        if case .player(let player) = sink {
            let directory = NSTemporaryDirectory() + "kinesia-voice-\(getpid())"
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            playDirectory = directory
            audio = SerialAudioOutput(player: player, directory: directory)
        } else {
            playDirectory = nil
            audio = nil
        }
    }

    /// Waits for the last sound and frees the engine.
    func close() {
        audio?.drain()
        if let playDirectory { try? FileManager.default.removeItem(atPath: playDirectory) }
        synthesizer.close()
    }

    /// One message of the bus.
    /// - Throws: When an utterance cannot be written or played.
    func handle(_ message: BusMessage) throws {
        if let failure = audio?.firstFailure { throw failure }
        let actions: [VoiceCuePlanner.Action]
        switch message {
        case .event(let event):
            arrivals[event.t] = clock.now
            if arrivals.count > 256, let oldest = arrivals.keys.min() { arrivals[oldest] = nil }
            actions = try timeline.receive(event.event, session: event.session, at: event.t, speak: speak)
        case .snapshot(let snapshot):
            actions = try timeline.tick(snapshot.t, speak: speak)
        case .gap(.senderRestarted(let topic, _)):
            if topic.kind == .event, let session = topic.session {
                timeline.sessionRestarted(session)
                logger.notice("\(topic): the worker restarted; the counts of \(session) start again")
            }
            actions = []
        case .gap(let gap):
            logger.warning("gap: \(gap)")
            actions = []
        case .malformed(let bad):
            logger.warning("malformed message: \(bad)")
            actions = []
        case .health:
            if !connected {
                connected = true
                logger.info("connected: the bus's health reports come through")
            }
            actions = []
        case .pose, .analytics:
            actions = []
        }
        report(actions)
    }

    /// The end: decides what still waits, then waits for the last sound.
    func finish() throws {
        report(try timeline.finish(speak: speak))
        audio?.drain()
        logger.info("\(spoken) utterances, \(dropped) cues dropped")
    }

    private func report(_ actions: [VoiceCuePlanner.Action]) {
        for case .drop(let cue, let reason) in actions {
            dropped += 1
            logger.info("dropped \(cue.text.quotedExcerpt()) (\(cue.session), \(cue.subject)): \(reason)")
        }
    }

    /// Synthesizes a cue, writes or queues it; returns its length in seconds.
    private func speak(_ cue: VoiceCue) throws -> Double {
        let arrival = arrivals[cue.receivedAt]
        let audio = try synthesizer.synthesize(cue.text)
        spoken += 1
        switch sink {
        case .directory(let directory):
            let name = try directory.write(audio, cue: cue, texts: texts)
            logger.info(
                "said \(cue.text.quotedExcerpt()) (\(cue.session), \(cue.subject), t=\(JSONWriter.number(cue.receivedAt))) "
                    + "as \(name)\(latency(since: arrival, to: "WAV written"))")
        case .player:
            played += 1
            let text = cue.text.quotedExcerpt()
            let subject = cue.subject.description
            let session = cue.session
            let note = latency(since: arrival, to: "synthesized")
            try self.audio?.enqueue(audio.encoded(), number: played) { [logger] in
                logger.info("saying \(text) (\(session), \(subject))\(note)")
            }
        }
        return audio.duration
    }

    private func latency(since arrival: ContinuousClock.Instant?, to what: String) -> String {
        guard let arrival else { return "" }
        let milliseconds = (clock.now - arrival).seconds * 1000
        return
            ": \(JSONWriter.number((milliseconds * 10).rounded() / 10)) ms from the event's arrival to the \(what)"
    }
}
