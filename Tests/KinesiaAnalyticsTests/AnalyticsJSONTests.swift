import Foundation
import KinesiaAnalytics
import KinesiaMotion
import KinesiaTestSupport
import Testing

struct AnalyticsJSONTests {
    static let tempo = RepTempo(
        side: .left, number: 3, set: 1, faults: [.keepTrunkUpright], peak: 92.5, low: 4.25, start: 10,
        peakTime: 10.75, end: 12.5, timeUp: 0.5, timeAtTop: 1, timeDown: 1)
    static let pair = RepSymmetry(
        set: 1, pair: 2, left: .init(number: 2, peak: 90, range: 88, timeUnderTension: 2.5),
        right: .init(number: 2, peak: 80, range: 77, timeUnderTension: 2))
    static let summary = SetSummary(
        side: .right, set: 2, isComplete: true, reps: 4, clean: 3, rejectedByFault: [.keepTrunkUpright: 1],
        firstPeak: 95, lastPeak: 89, peakSlope: -2, meanCleanPeak: 93, baseline: 90)

    @Test func theLinesAreTheDocumentedOnes() {
        #expect(
            AnalyticsJSON.encode(.repTempo(Self.tempo), at: 12.5)
                == #"{"type":"repTempo","t":12.5,"side":"left","rep":3,"set":1,"clean":false,"faults":["keepTrunkUpright"],"peak":92.5,"low":4.25,"range":88.25,"start":10.0,"peakTime":10.75,"end":12.5,"timeUp":0.5,"timeAtTop":1.0,"timeDown":1.0,"timeUnderTension":2.5}"#
        )
        #expect(
            AnalyticsJSON.encode(.repSymmetry(Self.pair), at: 20)
                == #"{"type":"repSymmetry","t":20.0,"set":1,"pair":2,"left":{"rep":2,"peak":90.0,"range":88.0,"timeUnderTension":2.5},"right":{"rep":2,"peak":80.0,"range":77.0,"timeUnderTension":2.0},"peakDifference":10.0,"rangeRatio":0.875,"tempoRatio":0.8}"#
        )
        #expect(
            AnalyticsJSON.encode(.setSummary(Self.summary), at: 40)
                == #"{"type":"setSummary","t":40.0,"side":"right","set":2,"complete":true,"reps":4,"clean":3,"rejected":1,"rejectedShare":0.25,"rejectedByFault":{"keepTrunkUpright":1},"rejectedShareByFault":{"keepTrunkUpright":0.25},"firstPeak":95.0,"lastPeak":89.0,"peakSlope":-2.0,"meanCleanPeak":93.0,"baseline":90.0,"progress":3.0,"progressPercent":3.3333333333333335}"#
        )
    }

    @Test(arguments: [
        AnalyticsRecord.repTempo(tempo), .repSymmetry(pair), .setSummary(summary),
        .setSummary(
            SetSummary(
                side: .left, set: 1, isComplete: false, reps: 1, clean: 0,
                rejectedByFault: [.keepHipsLevel: 1],
                firstPeak: 30, lastPeak: 30, peakSlope: nil, meanCleanPeak: nil, baseline: nil)),
    ])
    func everyRecordReadsBackAsItWas(_ record: AnalyticsRecord) throws {
        let line = AnalyticsJSON.encode(record, at: 1.25)
        let (t, decoded) = try AnalyticsJSON.decode(line)
        #expect(t == 1.25)
        #expect(decoded == record)
        #expect(AnalyticsJSON.isAnalytics(line))
    }

    @Test func motionEventsAndBrokenLinesAreRefusedWithAReason() {
        #expect(!AnalyticsJSON.isAnalytics(#"{"type":"holdStarted","t":1}"#))
        #expect(throws: MotionJSONError(.unknownType, detail: "unknown type \"holdStarted\"")) {
            try AnalyticsJSON.decode(#"{"type":"holdStarted","t":1}"#)
        }
        #expect { try AnalyticsJSON.decode("{") } throws: { ($0 as? MotionJSONError)?.kind == .invalidJSON }
        #expect {
            try AnalyticsJSON.decode(#"{"type":"repTempo","t":1,"side":"middle"}"#)
        } throws: { ($0 as? MotionJSONError)?.kind == .invalidRecord }
        let missing = AnalyticsJSON.encode(.setSummary(Self.summary), at: 1).replacingOccurrences(
            of: #""baseline":90.0,"#, with: "")
        #expect { try AnalyticsJSON.decode(missing) } throws: {
            ($0 as? MotionJSONError)?.kind == .invalidRecord
        }
    }
}

/// The Python client (`kinesia.wire`) reads the lines Swift writes, and tells them from motion events.
struct AnalyticsPythonTests {
    @Test func pythonReadsEveryRecordAndRefusesABrokenOne() throws {
        let lines = [
            AnalyticsJSON.encode(.repTempo(AnalyticsJSONTests.tempo), at: 12.5),
            AnalyticsJSON.encode(.repSymmetry(AnalyticsJSONTests.pair), at: 20),
            AnalyticsJSON.encode(.setSummary(AnalyticsJSONTests.summary), at: 40),
        ]
        let script = """
            import json, sys
            from kinesia import wire as kw
            for line in sys.argv[1:]:
                record = kw.decode_analytics(line)
                print(record["type"], record["t"], record.get("side"), record.get("timeUnderTension"), record.get("progress"))
            print(kw.decode_analytics('{"type":"holdStarted","t":1}'))
            try:
                kw.decode_analytics('{"type":"repTempo","t":1}')
            except kw.WireError as error:
                print(error.code)
            """
        let (status, output) = try TestProcess.run(
            try PackagePaths.python(), ["-c", script] + lines,
            environment: ProcessInfo.processInfo.environment)
        #expect(status == 0, "\(output)")
        #expect(
            output.split(separator: "\n").map(String.init) == [
                "repTempo 12.5 left 2.5 None", "repSymmetry 20.0 None None None",
                "setSummary 40.0 right None 3.0",
                "None", "invalidJSON",
            ])
    }
}
