import Foundation
import KinesiaMotion
import KinesiaSpeech
import KinesiaSystem
import KinesiaVoice

/// `kinesia-bench voice [--rounds N]`: the latency of a voice cue from the event received to
/// audio ready, with libespeak-ng in the process and with the `espeak-ng` command.
///
/// For each language and each cue of a set of events (a count, a rejected rep, a form fault, a
/// setup issue, lost joints), measures the planner's decision, the time to the first samples
/// (when playback could start) and to the WAV written to a file, for both engines. Prints one
/// JSON object per engine and language with medians in milliseconds.
enum VoiceBench {
    static func main(_ arguments: [String]) -> Int32 {
        var rounds = 5
        if let index = arguments.firstIndex(of: "--rounds"), index + 1 < arguments.count {
            rounds = Int(arguments[index + 1]) ?? rounds
        }
        let events: [MotionEvent] = [
            .repCompleted(Rep(peak: 92, faults: [], start: 0, end: 2)),
            .repRejected(Rep(peak: 80, faults: [.keepTrunkUpright], start: 2, end: 4)),
            .formFault(.keepElbowStraight),
            .setupChanged([.turnSideways]),
            .visibilityChanged(Visibility(isVisible: false, missingJoints: [.leftKnee, .leftAnkle])),
        ]
        let directory = NSTemporaryDirectory() + "kinesia-bench-voice-\(ProcessIdentity.id)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ContinuousClock()
        for language in VoiceLanguage.allCases {
            guard let texts = try? VoiceTexts.builtIn(language) else { return 1 }
            for engineName in ["library", "command"] {
                var decide: [Double] = []
                var firstAudio: [Double] = []
                var written: [Double] = []
                let started = clock.now
                let engine: any SpeechEngine
                do {
                    engine =
                        engineName == "library"
                        ? try SpeechSynthesizer(voice: texts.espeakVoice)
                        : try SpeechCommand(voice: texts.espeakVoice)
                } catch {
                    FileHandle.standardError.write(Data("voice bench: \(error)\n".utf8))
                    return 1
                }
                let startup = (clock.now - started).milliseconds
                defer { engine.close() }
                var t = 0.0
                for _ in 0..<rounds {
                    for event in events {
                        t += 10  // far apart: nothing is stale or repeated
                        let received = clock.now
                        var timeline = VoiceTimeline(planner: VoiceCuePlanner(texts: texts))
                        var chosen: VoiceCue?
                        _ = timeline.receive(event, session: "left", at: t) { cue in
                            chosen = cue
                            return 1
                        }
                        _ = timeline.tick(t, session: "left") { cue in
                            chosen = cue
                            return 1
                        }
                        guard let cue = chosen else { continue }
                        decide.append((clock.now - received).milliseconds)
                        let audio: WAVAudio
                        do {
                            if let library = engine as? SpeechSynthesizer {
                                audio = try library.synthesize(cue.text) {
                                    firstAudio.append((clock.now - received).milliseconds)
                                }
                            } else {
                                audio = try engine.synthesize(cue.text)
                                firstAudio.append((clock.now - received).milliseconds)
                            }
                            try Data(audio.encoded()).write(to: URL(fileURLWithPath: directory + "/cue.wav"))
                        } catch {
                            FileHandle.standardError.write(Data("voice bench: \(error)\n".utf8))
                            return 1
                        }
                        written.append((clock.now - received).milliseconds)
                    }
                }
                print(
                    "{\"bench\":\"voice\",\"engine\":\"\(engineName)\",\"language\":\"\(language.code)\","
                        + "\"cues\":\(written.count),\"startup_ms\":\(round2(startup)),"
                        + "\"decide_median_ms\":\(round2(median(decide))),"
                        + "\"first_audio_median_ms\":\(round2(median(firstAudio))),"
                        + "\"wav_written_median_ms\":\(round2(median(written))),"
                        + "\"wav_written_max_ms\":\(round2(written.max() ?? 0))}")
            }
        }
        return 0
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[sorted.count / 2]
    }

    static func round2(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}

extension Duration {
    fileprivate var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) * 1e-15
    }
}
