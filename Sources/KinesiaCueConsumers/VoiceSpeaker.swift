import Foundation
package import KinesiaClient
import KinesiaControl
import KinesiaJSON
import KinesiaMotion
package import KinesiaService
import KinesiaSpeech
import KinesiaSystem
package import KinesiaVoice
package import KinesiaWire

/// The shell of `kinesia voice`: feeds the bus's events and snapshots to a ``VoiceTimeline``
/// and performs what it decides (synthesize with libespeak-ng, then write or play), logging
/// each utterance with its latency and each dropped cue with why, and counting them for
/// `health/<name>/`.
///
/// Owns the speech engine (libespeak-ng's one engine, or the command): made, used and closed on
/// the consumer's bus thread (``CueConsumer``). A cue that cannot be synthesized, written or
/// played is logged and counted (`speechErrors`); the voice goes on with the next one.
package final class VoiceSpeaker: CueHandler {
    private var timeline: VoiceTimeline
    private let rules: VoiceCuePlanner.Rules
    private let texts: VoiceTexts
    private let synthesizer: any SpeechEngine
    private let sink: VoiceSink
    private let audio: SerialAudioOutput?
    private let playDirectory: String?
    private let logger: Logger
    /// The time of arrivals, latencies and the sound output's deadlines.
    private let clock: ElapsedClock
    /// When the latest event of each pose time arrived (for the latency of its cues).
    private var arrivals: [Double: Duration] = [:]
    /// Who is in front of each session followed (to greet another patient anew).
    private var patients = SessionPatients()
    private var played = 0
    /// Utterances spoken (written or queued for the player).
    private(set) var spoken = 0
    /// Cues dropped, by reason (`stale`, `repeated`, `superseded`, `queueFull`).
    private(set) var dropped: [String: Int] = [:]
    /// Cues that could not be synthesized or written.
    private(set) var speechErrors = 0
    /// Whether the utterances go to files because this machine cannot play sound.
    package let noSoundOutput: Bool

    /// - Parameters:
    ///   - following: The sessions followed (`--session`, or every session of the camera).
    ///   - noSoundOutput: The sink is a directory in place of the sound output
    ///     (`--fallback-output`): reported as `noSoundOutput 1`.
    ///   - clock: What arrivals, latencies and the sound output's deadlines are timed on.
    /// - Throws: ``CueConsumerError/failure(_:)`` when libespeak-ng cannot start with the texts' voice.
    package init(
        texts: VoiceTexts, engine: VoiceEngine, sink: VoiceSink,
        following: VoiceCuePlanner.Following = .camera,
        noSoundOutput: Bool = false, environment: [String: String] = [:], logger: Logger,
        clock: some Clock<Duration> = ContinuousClock()
    ) throws(CueConsumerError) {
        self.clock = ElapsedClock(clock)
        self.texts = texts
        self.sink = sink
        self.logger = logger
        self.noSoundOutput = noSoundOutput
        let planner = VoiceCuePlanner(texts: texts, following: following)
        rules = planner.rules
        timeline = VoiceTimeline(planner: planner)
        do {
            switch engine {
            case .library: synthesizer = try SpeechSynthesizer(voice: texts.espeakVoice)
            case .command: synthesizer = try SpeechCommand(voice: texts.espeakVoice)
            }
        } catch {
            throw CueConsumerError.failure("speech: \(error)")
        }
        if case .player(let player) = sink {
            let directory = NSTemporaryDirectory() + "kinesia-voice-\(ProcessIdentity.id)"
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            playDirectory = directory
            // Voices on the same sound output take turns per utterance; without the lock file
            // this voice still plays, only not in turns.
            var turn: OutputTurn?
            do {
                turn = try OutputTurn(
                    path: OutputTurn.path(forOutput: player.output, environment: environment))
            } catch {
                logger.warning("\(error): other voices on this sound output may talk over this one")
            }
            audio = SerialAudioOutput(player: player, turn: turn, directory: directory, clock: self.clock) {
                [logger] error in
                logger.warning("speech error: \(error)")
            }
        } else {
            playDirectory = nil
            audio = nil
        }
    }

    deinit {
        audio?.drain()
        if let playDirectory { try? FileManager.default.removeItem(atPath: playDirectory) }
        synthesizer.close()
    }

    /// The counters of `health/<name>/`.
    package var counters: [String: Int] {
        var counters = [
            "spoken": spoken, "speechErrors": speechErrors + (audio?.failures ?? 0),
            "noSoundOutput": noSoundOutput ? 1 : 0, "late": audio?.late ?? 0,
        ]
        for reason in ["stale", "repeated", "superseded", "queueFull"] {
            counters[reason] = dropped[reason, default: 0]
        }
        return counters
    }

    package func receive(_ event: BusEvent) {
        arrivals[event.t] = clock.now
        patients.heard(from: event.session, stream: event.streamID)
        if arrivals.count > 256, let oldest = arrivals.keys.min() { arrivals[oldest] = nil }
        report(timeline.receive(event.event, session: event.session, at: event.t, speak: speak))
    }

    package func receive(_ snapshot: BusSnapshot) {
        report(timeline.tick(snapshot.t, session: snapshot.topic.session ?? "", speak: speak))
    }

    package func senderRestarted(_ topic: Topic) -> Bool {
        guard topic.kind == .event, let session = topic.session else { return false }
        timeline.sessionRestarted(session)
        logger.notice(
            "\(topic): a new stream (a new run, or its worker restarted); the counts of \(session) start again"
        )
        return true
    }

    /// A run started: another patient's (by its reference) is greeted anew, and so is a new run
    /// after one this voice never saw begin (``SessionPatients``). A run of the same patient, or
    /// of none named after one of none named, is the same person: welcomed back; the record of
    /// the run the voice joined changes nothing.
    package func receive(_ run: BusRun) {
        guard case .started(let plan) = run.record else { return }
        let session = plan.key.name
        guard patients.runStarted(on: session, patient: plan.patient, stream: run.streamID) else { return }
        timeline.patientChanged(session)
        logger.notice("\(run.topic): run \(plan.run) of another patient: greeted anew")
    }

    package func idle() {}

    /// The end: decides what still waits, then waits for the last sound.
    package func finish() {
        report(timeline.finish(speak: speak))
        audio?.drain()
        let drops = dropped.values.reduce(0, +)
        logger.info(
            "\(spoken) utterances, \(drops) cues dropped, \(counters["speechErrors"] ?? 0) speech errors")
    }

    private func report(_ actions: [VoiceCuePlanner.Action]) {
        for case .drop(let cue, let reason) in actions {
            dropped[Self.name(reason), default: 0] += 1
            logger.info("dropped \(cue.text.quotedExcerpt()) (\(cue.session), \(cue.subject)): \(reason)")
        }
    }

    /// The counter of a drop reason.
    package static func name(_ reason: VoiceCuePlanner.DropReason) -> String {
        switch reason {
        case .stale: "stale"
        case .repeated: "repeated"
        case .superseded: "superseded"
        case .queueFull: "queueFull"
        }
    }

    /// Synthesizes a cue, writes or queues it; returns its length in seconds (0 when it failed:
    /// the voice is free again at once).
    private func speak(_ cue: VoiceCue) -> Double {
        do {
            return try speakOrThrow(cue)
        } catch {
            speechErrors += 1
            logger.warning(
                "speech error: \(cue.text.quotedExcerpt()) (\(cue.session), \(cue.subject)): \(error)")
            return 0
        }
    }

    private func speakOrThrow(_ cue: VoiceCue) throws -> Double {
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
            // Too late to start once it has waited its rank's age for the sound output.
            // (The rules are read from a copy: this runs inside a mutation of the timeline.)
            let age = rules.maximumAge[cue.priority, default: 2]
            try self.audio?.enqueue(
                audio.encoded(), number: played, deadline: clock.now + .seconds(double: age),
                started: { [logger] in logger.info("saying \(text) (\(session), \(subject))\(note)") },
                skipped: { [logger] in
                    logger.info(
                        "dropped \(text) (\(session), \(subject)): the sound output stayed busy for \(JSONWriter.number(age)) s"
                    )
                })
        }
        return audio.duration
    }

    private func latency(since arrival: Duration?, to what: String) -> String {
        guard let arrival else { return "" }
        let milliseconds = (clock.now - arrival).seconds * 1000
        return
            ": \(JSONWriter.number((milliseconds * 10).rounded() / 10)) ms from the event's arrival to the \(what)"
    }
}
