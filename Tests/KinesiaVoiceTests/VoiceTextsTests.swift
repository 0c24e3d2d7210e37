import Foundation
import KinesiaMotion
import Testing

@testable import KinesiaVoice

struct VoiceTextsTests {
    @Test(arguments: VoiceLanguage.allCases)
    func everyCueFaultSetupIssueAndJointHasATextInEveryLanguage(_ language: VoiceLanguage) throws {
        let texts = try VoiceTexts.builtIn(language)
        #expect(texts.language == language.code)
        for entry in VoiceTexts.Entry.allCases {
            let text = try #require(texts.cues[entry], "\(language.code): no text for \(entry)")
            #expect(!text.isEmpty)
        }
        for fault in FormFeedback.allCases {
            #expect(texts.formFeedback[fault]?.isEmpty == false, "\(language.code): no text for \(fault)")
        }
        for issue in SetupIssue.allCases {
            #expect(texts.setupIssues[issue]?.isEmpty == false, "\(language.code): no text for \(issue)")
        }
        for joint in Joint.allCases {
            #expect(texts.joints[joint]?.isEmpty == false, "\(language.code): no name for \(joint)")
        }
        for side in BodySide.allCases {
            #expect(texts.sides[side]?.isEmpty == false, "\(language.code): no name for the \(side) side")
        }
        for entry in VoiceTexts.SidedEntry.allCases {
            let text = try #require(texts.sidedCues[entry], "\(language.code): no sided text for \(entry)")
            #expect(text.contains("{side}"), "\(language.code): \(entry) names no side: \(text)")
        }
        #expect(texts.cues[.visibilityGained] != texts.cues[.visibilityRegained])
    }

    @Test(arguments: VoiceLanguage.allCases)
    func everyEventOfOneSideGivesASpokenTextNamingItWhenBothAreFollowed(_ language: VoiceLanguage) throws {
        let texts = try VoiceTexts.builtIn(language)
        var planner = VoiceCuePlanner(texts: texts, following: .sessions(["left", "right"]))
        let rep = Rep(peak: 91.6, faults: [], start: 1, end: 3)
        var events: [MotionEvent] = [
            .repCompleted(rep), .repRejected(Rep(peak: 80, faults: [.keepTrunkUpright], start: 4, end: 6)),
            .holdStarted, .repCompleted(rep), .holdStarted,
            .repRejected(Rep(peak: 80, faults: [.keepThighStill], start: 4, end: 6)),
            .baselineCompleted(93.4),
        ]
        events += FormFeedback.allCases.filter(\.concernsOneSide).map { .formFault($0) }
        for event in events {
            let cues = planner.cues(for: event, session: "right", at: 0)
            #expect(cues.count == 1)
            for cue in cues {
                #expect(cue.text.contains(texts.sides[.right]!), "\(cue)")
                #expect(!cue.text.contains("{") && !cue.text.contains("}"), "\(cue)")
            }
        }
    }

    @Test func aFileWithoutTheSidesIsRefusedNamingThem() throws {
        var text = String(decoding: VoiceLanguage.english.builtInTextsFile, as: UTF8.self)
        text = text.replacingOccurrences(of: "\"sides\"", with: "\"sidez\"")
        let error = #expect(throws: VoiceTextsError.self) {
            try VoiceTexts(json: Array(text.utf8), source: "en-old.json")
        }
        #expect(error?.description.contains("\"sidez\"") == true, "\(String(describing: error))")
        let sided = String(decoding: VoiceLanguage.english.builtInTextsFile, as: UTF8.self)
            .replacingOccurrences(of: "\"{side}, {count}\"", with: "\"{side}, {cuont}\"")
        let placeholder = #expect(throws: VoiceTextsError.self) {
            try VoiceTexts(json: Array(sided.utf8), source: "en.json")
        }
        #expect(
            placeholder?.description.contains("{count}, {peak}, {side}") == true,
            "\(String(describing: placeholder))")
    }

    @Test(arguments: VoiceLanguage.allCases)
    func everyEventGivesASpokenTextInEveryLanguage(_ language: VoiceLanguage) throws {
        var planner = VoiceCuePlanner(texts: try .builtIn(language))
        let rep = Rep(peak: 91.6, faults: [], start: 1, end: 3)
        var events: [MotionEvent] = [
            .repCompleted(rep), .repRejected(Rep(peak: 80, faults: [.keepTrunkUpright], start: 4, end: 6)),
            .repRejected(Rep(peak: 80, faults: [], start: 4, end: 6)), .holdStarted, .repCompleted(rep),
            .holdStarted,
            .repRejected(Rep(peak: 80, faults: [.keepThighStill], start: 4, end: 6)),
            .visibilityChanged(Visibility(isVisible: false, missingJoints: [.leftKnee, .leftAnkle])),
            .visibilityChanged(Visibility(isVisible: true, missingJoints: [])), .setupChanged([]),
            .baselineCompleted(93.4),
        ]
        events += FormFeedback.allCases.map { .formFault($0) }
        events += SetupIssue.allCases.map { .setupChanged([$0]) }
        for event in events {
            let cues = planner.cues(for: event, session: "left", at: 0)
            #expect(cues.count == 1)
            for cue in cues {
                #expect(!cue.text.isEmpty && !cue.text.contains("{") && !cue.text.contains("}"), "\(cue)")
            }
        }
    }

    @Test func aFileMissingAnEntryIsRefusedNamingIt() throws {
        var text = String(decoding: VoiceLanguage.spanish.builtInTextsFile, as: UTF8.self)
        text = text.replacingOccurrences(of: "\"keepHipsLevel\": \"Nivela la cadera\"", with: "\"x\": \"y\"")
            .replacingOccurrences(of: ",\n    \"x\": \"y\"", with: "")
        let error = #expect(throws: VoiceTextsError.self) {
            try VoiceTexts(json: Array(text.utf8), source: "es-edited.json")
        }
        #expect(
            error?.description.hasPrefix("es-edited.json: missing key \"keepHipsLevel\"") == true,
            "\(String(describing: error))")
    }

    @Test func aPlaceholderTheEntryCannotFillIsRefusedWithItsLine() throws {
        var text = String(decoding: VoiceLanguage.english.builtInTextsFile, as: UTF8.self)
        text = text.replacingOccurrences(
            of: "\"repCounted\": \"{count}\"", with: "\"repCounted\": \"{cuont}\"")
        let error = #expect(throws: VoiceTextsError.self) {
            try VoiceTexts(json: Array(text.utf8), source: "en.json")
        }
        let description = error?.description ?? ""
        #expect(description.contains("{cuont}") && description.contains("{count}, {peak}"), "\(description)")
        #expect(description.contains("line 7"), "\(description)")
    }

    @Test func anUnknownKeyIsATypo() throws {
        var text = String(decoding: VoiceLanguage.english.builtInTextsFile, as: UTF8.self)
        text = text.replacingOccurrences(of: "\"tooFar\"", with: "\"tooFra\"")
        let error = #expect(throws: VoiceTextsError.self) {
            try VoiceTexts(json: Array(text.utf8), source: "en.json")
        }
        #expect(error?.description.contains("unknown key \"tooFra\"") == true, "\(String(describing: error))")
    }

    @Test func listsJoinNamesTheLanguagesWay() throws {
        #expect(try VoiceTexts.builtIn(.english).list(["a", "b", "c"]) == "a, b and c")
        #expect(try VoiceTexts.builtIn(.brazilianPortuguese).list(["a", "b"]) == "a e b")
        #expect(try VoiceTexts.builtIn(.spanish).list(["a"]) == "a")
    }
}
