import Testing

@testable import KinesiaSpeech

/// libespeak-ng in the process: one engine at a time, so the suite is serialized.
@Suite(.serialized)
struct SpeechSynthesizerTests {
    @Test func theEnginesVoiceSpeaksTheText() throws {
        let speech = try SpeechSynthesizer(voice: "en-us")
        defer { speech.close() }
        let first = try speech.synthesize("Keep your trunk upright")
        #expect(first.sampleRate == 22050)
        // About a second and a half of speech, with sound in it.
        #expect(first.duration > 0.8 && first.duration < 3, "\(first.duration)")
        #expect(first.samples.contains { abs(Int($0)) > 1000 })
    }

    /// libespeak-ng carries state from one utterance to the next (the same text comes out a few
    /// samples longer or shorter), which is why `kinesia voice` can also run the command.
    @Test func anEngineKeepsStateBetweenUtterances() throws {
        let speech = try SpeechSynthesizer(voice: "en-us")
        defer { speech.close() }
        let first = try speech.synthesize("Keep your trunk upright")
        let second = try speech.synthesize("Keep your trunk upright")
        #expect(abs(first.samples.count - second.samples.count) < first.samples.count / 50)
    }

    @Test func eachLanguagesVoiceSpeaks() throws {
        let speech = try SpeechSynthesizer(voice: "pt-br")
        defer { speech.close() }
        let portuguese = try speech.synthesize("Estique o cotovelo")
        try speech.select(voice: "es")
        let spanish = try speech.synthesize("Estira el codo")
        #expect(!portuguese.samples.isEmpty && !spanish.samples.isEmpty && portuguese != spanish)
    }

    @Test func firstSamplesAreAnnouncedOnceBeforeTheCallReturns() throws {
        let speech = try SpeechSynthesizer(voice: "en-us")
        defer { speech.close() }
        var calls = 0
        _ = try speech.synthesize("Hold it") { calls += 1 }
        #expect(calls == 1)
    }

    @Test func oneEngineAtATimeAndUnknownVoicesAreRefused() throws {
        let speech = try SpeechSynthesizer(voice: "en-us")
        #expect(throws: SpeechError.engineInUse) { _ = try SpeechSynthesizer(voice: "es") }
        #expect(throws: SpeechError.unknownVoice("xx-nope")) { try speech.select(voice: "xx-nope") }
        speech.close()
        #expect(throws: SpeechError.closed) { _ = try speech.synthesize("x") }
        // Closed: another may start.
        let again = try SpeechSynthesizer(voice: "es")
        again.close()
    }
}

struct WAVAudioTests {
    @Test func aWAVFileHasTheCanonicalHeaderAndReadsBack() throws {
        let audio = WAVAudio(samples: [0, 1, -1, 32767, -32768], sampleRate: 22050)
        let bytes = audio.encoded()
        #expect(bytes.count == 44 + 10)
        #expect(Array(bytes[0..<4]) == Array("RIFF".utf8) && Array(bytes[8..<16]) == Array("WAVEfmt ".utf8))
        #expect(Array(bytes[4..<8]) == [54 - 8, 0, 0, 0])
        #expect(Array(bytes[24..<28]) == [0x22, 0x56, 0, 0])  // 22050
        #expect(Array(bytes[44..<48]) == [0, 0, 1, 0])
        #expect(try WAVAudio(parsing: bytes) == audio)
        #expect(audio.duration == 5.0 / 22050)
    }

    @Test func aTruncatedFileIsRefused() {
        let bytes = WAVAudio(samples: [1, 2, 3], sampleRate: 22050).encoded()
        #expect(throws: WAVFormatError.self) { try WAVAudio(parsing: Array(bytes.dropLast(2))) }
        #expect(throws: WAVFormatError.self) { try WAVAudio(parsing: Array(bytes.prefix(20))) }
    }
}
