import Foundation
import KinesiaAnalytics
import KinesiaMotion
import KinesiaSupervisor
import KinesiaTestSupport
import Testing

@testable import KinesiaCLI
@testable import KinesiaDemo

/// The demo's options, its output directory and the summary of what its consumers made (no
/// process: values in, lines out).
struct DemoSummaryTests {
    @Test func theDemoKeepsItsOutputInATimeStampedDirectoryUnlessGivenOne() throws {
        let demo = try DemoCommand.parse([])
        #expect(demo.output == nil)
        #expect(demo.speak == false)
        let given = try DemoCommand.parse(["--out", "runs/first", "--speak"])
        #expect(given.output == "runs/first")
        #expect(given.speak)

        // 2026-12-01 18:30:15 UTC, named in the local time zone.
        let date = Date(timeIntervalSince1970: 1_796_149_815)
        let name = DemoOutput.defaultName(at: date)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        #expect(name == "kinesia-demo-" + formatter.string(from: date))
        #expect(name.count == "kinesia-demo-20261201-183015".count)
        #expect(
            DemoOutput.resolve(nil, currentDirectory: "/home/ana", now: date).directory == "/home/ana/" + name
        )
        let relative = DemoOutput.resolve("runs/../first", currentDirectory: "/home/ana", now: date)
        #expect(relative.directory == "/home/ana/first")
        #expect(relative.database == "/home/ana/first/record.sqlite")
        #expect(relative.report == "/home/ana/first/report.html")
        #expect(relative.voice == "/home/ana/first/voice")
        #expect(
            DemoOutput.resolve("/srv/demo", currentDirectory: "/home/ana", now: date).directory == "/srv/demo"
        )
    }

    @Test func anEmptyOutIsAUsageError() {
        #expect(throws: CLIError.self) { try DemoCommand.parse(["--out", ""]).validate() }
    }

    @Test func theOutputDirectoryIsMadeAndAnEarlierDemosOutputIsRefused() throws {
        let root = NSTemporaryDirectory() + "kinesia-demo-output-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let output = DemoOutput(directory: root + "/a/b")
        try output.prepare()
        #expect(FileManager.default.fileExists(atPath: root + "/a/b"))
        try output.prepare()  // empty: fine
        try FileManager.default.createDirectory(atPath: output.voice, withIntermediateDirectories: false)
        #expect(
            throws: DemoError.failure(
                "\(root)/a/b already holds a demo's output (voice): give another --out DIR")
        ) {
            try output.prepare()
        }
        try Data().write(to: URL(fileURLWithPath: root + "/file"))
        #expect(throws: DemoError.failure("--out \(root)/file is not a directory")) {
            try DemoOutput(directory: root + "/file").prepare()
        }
    }

    @Test func theTopologyRunsTheCoordinatorAPoolWorkerTheRecorderAndTheVoice() throws {
        var demo = try DemoCommand.parse(["--seed", "3", "--exercise", "squat", "--language", "pt-BR"])
        let output = DemoOutput(directory: "/home/ana/out")
        var topology = demo.site.topology(bus: "/tmp/bus", output: output)
        try topology.validate()
        let commands = Dictionary(uniqueKeysWithValues: topology.processes.map { ($0.name, $0.command) })
        #expect(topology.processes.map(\.name) == ["broker", "coordinator", "worker", "record", "voice"])
        #expect(commands["coordinator"] == ["coordinator", "--state", "/tmp/bus/state/coordinator"])
        #expect(commands["worker"] == ["worker", "--pool", "demo", "--state", "/tmp/bus/state/worker"])
        #expect(commands["record"] == ["record", "--db", "/home/ana/out/record.sqlite", "--camera", "cam0"])
        // Both sides followed, so each is named; the espeak-ng command's own WAV files.
        let voice = [
            "voice", "--camera", "cam0", "--session", "left", "--session", "right", "--language", "pt-BR",
        ]
        #expect(commands["voice"] == voice + ["--engine", "command", "--output", "/home/ana/out/voice"])
        // The worker reports to a coordinator already there.
        let worker = try #require(topology.processes.firstIndex { $0.name == "worker" })
        let coordinator = try #require(topology.processes.firstIndex { $0.name == "coordinator" })
        #expect(topology.startDependencies()[worker].contains(coordinator))
        // Two patients, one seed each.
        #expect(demo.site.patients.map(\.reference) == ["demo-a", "demo-b"])
        #expect(demo.site.patients.map(\.seed) == [3, 4])

        demo.speak = true
        topology = demo.site.topology(bus: "/tmp/bus", output: output)
        #expect(topology.processes.first { $0.name == "voice-aloud" }?.command == voice)
    }

    static func summary(_ side: BodySide, reps: Int, clean: Int, slope: Double?, baseline: Double?)
        -> AnalyticsRecord
    {
        .setSummary(
            SetSummary(
                side: side, set: 1, isComplete: false, reps: reps, clean: clean,
                rejectedByFault: reps > clean ? [.keepTrunkUpright: reps - clean] : [:], firstPeak: 130,
                lastPeak: 126.04, peakSlope: slope, meanCleanPeak: baseline.map { $0 + 0.5 },
                baseline: baseline))
    }

    @Test func theAnalyticsLinesShowEachSidesLatestFiguresAndTheSymmetryOfThePairs() {
        let pair = { (number: Int, left: Double, right: Double) in
            AnalyticsRecord.repSymmetry(
                RepSymmetry(
                    set: 1, pair: number,
                    left: .init(number: number, peak: left, range: 100, timeUnderTension: 3),
                    right: .init(number: number, peak: right, range: 80, timeUnderTension: 3)))
        }
        let records: [AnalyticsRecord] = [
            Self.summary(.left, reps: 1, clean: 1, slope: nil, baseline: nil),
            Self.summary(.right, reps: 1, clean: 1, slope: nil, baseline: nil),
            pair(1, 130, 132.5),
            Self.summary(.left, reps: 4, clean: 2, slope: -1.26, baseline: 131),
            Self.summary(.right, reps: 2, clean: 2, slope: 0.02, baseline: nil),
            pair(2, 128, 127),
        ]
        #expect(
            DemoSummary.analyticsLines(records, session: "cam0/analytics") == [
                "Analytics (cam0/analytics):",
                "  left set 1    4 reps, 2 clean; fatigue: peaks 130.0° to 126.0°, trend -1.3°/rep; "
                    + "rejected 50% (keepTrunkUpright 2); baseline 131.0°, progress +0.5°",
                "  right set 1   2 reps, 2 clean; fatigue: peaks 130.0° to 126.0°, trend 0.0°/rep",
                "  symmetry      2 pairs; left minus right peak -2.5°, +1.0° (mean -0.8°); range ratio mean 0.80",
            ])
        #expect(
            DemoSummary.analyticsLines([], session: "cam0/analytics") == [
                "Analytics (cam0/analytics):", "  no analytics record was recorded",
            ])
    }

    @Test func utterancesAreReadFromTheVoicesLogAndListedWithTheirFiles() {
        let log = """
            {"file":"0001.wav","text":"1","cue":"repCounted","session":"left","t":3.2,"language":"en","voice":"en-us"}
            {"file":"0002.wav","text":"That one does not count. Keep your trunk upright","cue":"repRejected","session":"right","t":7,"language":"en","voice":"en-us"}
            {"file":"0003.wav","te
            """
        let utterances = DemoUtterance.parse(jsonLines: log)
        #expect(
            utterances == [
                DemoUtterance(file: "0001.wav", text: "1", cue: "repCounted", session: "left"),
                DemoUtterance(
                    file: "0002.wav", text: "That one does not count. Keep your trunk upright",
                    cue: "repRejected",
                    session: "right"),
            ])
        #expect(
            DemoSummary.voiceLines(utterances, directory: "/out/voice") == [
                "Voice (kinesia voice --output /out/voice): 2 utterances",
                "  0001.wav  left   \"1\" (repCounted)",
                "  0002.wav  right  \"That one does not count. Keep your trunk upright\" (repRejected)",
            ])
    }

    @Test func theFileLinesSayWhereTheReportDatabaseAndWavFilesAre() {
        let lines = DemoSummary.fileLines(
            DemoOutput(directory: "/out"), recorded: (events: 40, snapshots: 120, analytics: 1),
            report: [("analytics", 0), ("left", 4), ("right", 1)], wavFiles: 6)
        #expect(
            lines == [
                "Kept in /out:",
                "  report.html    kinesia report: analytics 0 reps, left 4 reps, right 1 rep; open file:///out/report.html",
                "  record.sqlite  kinesia record --db: 40 events, 120 snapshots, 1 analytics record",
                "  voice/         kinesia voice --output: 6 WAV files and utterances.jsonl",
            ])
    }
}
