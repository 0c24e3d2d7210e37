import Foundation
import KinesiaJSON
import KinesiaMotion
package import KinesiaSpeech
package import KinesiaSystem
package import KinesiaVoice
import Synchronization

/// Where `kinesia voice` puts its utterances.
package enum VoiceSink: Sendable {
    /// Numbered WAV files and `utterances.jsonl` in a directory.
    case directory(VoiceOutputDirectory)
    /// An audio player, one utterance at a time.
    case player(AudioPlayer)

    package var directoryPath: String? {
        if case .directory(let directory) = self { directory.path } else { nil }
    }

    package var playerName: String {
        if case .player(let player) = self { player.name } else { "" }
    }
}

/// `--output DIR`: `0001.wav`, `0002.wav`... and one JSON line per utterance in
/// `utterances.jsonl` (`file`, `text`, `cue`, `session`, `t`, `language`, `voice`). Numbering
/// goes on after the highest number already there, so a restarted voice appends. Each
/// utterance is written in a turn of `DIR/utterances.lock` (``OutputTurn``): two voices writing
/// to one directory take turns, never take the same number, and never mix their lines.
package final class VoiceOutputDirectory: Sendable {
    package let path: String
    private let next: Mutex<Int>
    private let turn: OutputTurn
    /// What the wait for the directory's turn is timed on.
    private let clock: ElapsedClock

    /// Makes the directory (and its parents) if needed.
    /// - Parameter clock: What the wait for the directory's turn is timed on (10 s at most).
    /// - Throws: ``CueConsumerError/failure(_:)`` when it cannot be made or is not a directory.
    package init(path: String, clock: ElapsedClock = ElapsedClock(ContinuousClock())) throws(CueConsumerError)
    {
        self.path = path
        self.clock = clock
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        if files.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw CueConsumerError.failure("--output \(path) is not a directory")
            }
        } else {
            do {
                try files.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw CueConsumerError.failure(
                    "cannot make the output directory \(path): \(error.localizedDescription)")
            }
        }
        guard files.isWritableFile(atPath: path) else {
            throw CueConsumerError.failure("the output directory \(path) is not writable")
        }
        let highest = ((try? files.contentsOfDirectory(atPath: path)) ?? []).compactMap { name -> Int? in
            guard name.hasSuffix(".wav") else { return nil }
            return Int(name.dropLast(4))
        }.max()
        next = Mutex((highest ?? 0) + 1)
        turn = try OutputTurn(path: path + "/utterances.lock", pause: .zero)
    }

    /// Writes one utterance: its WAV, then its line.
    /// - Returns: The WAV's file name.
    /// - Throws: ``CueConsumerError/failure(_:)`` when another voice held the directory for 10 s, or
    ///   what writing throws.
    package func write(_ audio: WAVAudio, cue: VoiceCue, texts: VoiceTexts) throws -> String {
        let written = try turn.take(until: clock.now + .seconds(10), on: clock) { () throws -> String in
            try writeInTurn(audio, cue: cue, texts: texts)
        }
        guard let written else { throw CueConsumerError.failure("\(turn.path) stayed locked for 10 s") }
        return written
    }

    private func writeInTurn(_ audio: WAVAudio, cue: VoiceCue, texts: VoiceTexts) throws -> String {
        // The next number no file has: another voice may have written since.
        let name = next.withLock { value in
            while FileManager.default.fileExists(atPath: path + "/" + Self.fileName(value)) { value += 1 }
            defer { value += 1 }
            return Self.fileName(value)
        }
        try Data(audio.encoded()).write(to: URL(fileURLWithPath: path + "/" + name), options: .atomic)
        var line = "{\"file\":"
        JSONWriter.appendString(name, to: &line)
        line += ",\"text\":"
        JSONWriter.appendString(cue.text, to: &line)
        line += ",\"cue\":"
        JSONWriter.appendString(cue.subject.description, to: &line)
        line += ",\"session\":"
        JSONWriter.appendString(cue.session, to: &line)
        line += ",\"t\":"
        JSONWriter.appendNumber(cue.receivedAt, to: &line)
        line += ",\"language\":"
        JSONWriter.appendString(texts.language, to: &line)
        line += ",\"voice\":"
        JSONWriter.appendString(texts.espeakVoice, to: &line)
        line += "}\n"
        let log = path + "/utterances.jsonl"
        if !FileManager.default.fileExists(atPath: log),
            !FileManager.default.createFile(atPath: log, contents: nil)
        {
            throw CueConsumerError.failure("cannot make \(log)")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line.utf8))
        return name
    }

    /// `0007.wav`.
    package static func fileName(_ number: Int) -> String {
        var name = String(number)
        if name.count < 4 { name = String(repeating: "0", count: 4 - name.count) + name }
        return name + ".wav"
    }
}
