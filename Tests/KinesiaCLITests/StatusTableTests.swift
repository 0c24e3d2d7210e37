import KinesiaCLI
import KinesiaWire
import Testing

struct StatusTableTests {
    let reports = [
        HealthReport(
            process: "worker-cam0-left", role: "worker", pid: 4250, uptime: 11.7,
            counters: [
                "poses": 3600, "events": 14, "gaps": 0, "decodeErrors": 1, "decodeErrors.truncated": 1,
                "dropped.nonFinite": 2, "dropped.backwards": 1, "sessions": 2,
            ]),
        HealthReport(process: "listen", role: "listen", pid: 4300, uptime: 3, counters: ["received": 20]),
        HealthReport(
            process: "broker", role: "broker", pid: 4242, uptime: 12.2,
            counters: ["published": 9000, "subscriptions": 3]),
        HealthReport(
            process: "ingest-cam0", role: "ingest", pid: 4260, uptime: 125,
            counters: ["sent": 3600, "paused": 0]),
    ]

    @Test func oneRowPerProcessBrokersFirstThenIngestsWorkersAndOthers() {
        let lines = StatusTable.render(reports)
        #expect(lines.count == 5)
        #expect(
            lines.dropFirst().map { String($0.prefix { $0 != " " }) } == [
                "broker", "ingest-cam0", "worker-cam0-left", "listen",
            ])
    }

    @Test func theUsualCountersGetAColumnAndTheOthersFollowByName() {
        let lines = StatusTable.render(reports)
        #expect(
            lines == [
                "process           role     pid    uptime  poses  events  sent  published  received  gaps  decodeErrors  dropped  other",
                "broker            broker  4242      12 s      -       -     -       9000         -     -             -        -  subscriptions 3",
                "ingest-cam0       ingest  4260  2 m 05 s      -       -  3600          -         -     -             -        -  paused 0",
                "worker-cam0-left  worker  4250      11 s   3600      14     -          -         -     0             1        3  sessions 2",
                "listen            listen  4300       3 s      -       -     -          -        20     -             -        -",
            ])
    }

    /// The consumers of `deploy/local.json` after the workers, by name; what each did and the
    /// state of its output lead its other counters (a wide table is read from the left).
    @Test func theConsumersFollowTheWorkersWithWhatTheyDidFirst() {
        let lines = StatusTable.render([
            HealthReport(
                process: "voice", role: "voice", pid: 4260, uptime: 40,
                counters: [
                    "events": 11, "gaps": 0, "malformed": 0, "spoken": 8, "noSoundOutput": 1,
                    "speechErrors": 0,
                    "repeated": 3, "stale": 0,
                ]),
            HealthReport(
                process: "haptic", role: "haptic", pid: 4262, uptime: 40,
                counters: [
                    "events": 11, "gaps": 0, "played": 0, "deviceReady": 0, "deviceMissing": 1, "lost": 9,
                    "deviceErrors": 0, "deviceOpens": 0,
                ]),
            HealthReport(
                process: "record", role: "record", pid: 4258, uptime: 40,
                counters: ["gaps": 0, "stored": 228, "duplicates": 0, "malformed": 0]),
            HealthReport(
                process: "worker-sides", role: "worker", pid: 4250, uptime: 40, counters: ["events": 26]),
        ])
        #expect(
            lines == [
                "process       role     pid  uptime  events  gaps  other",
                "worker-sides  worker  4250    40 s      26     -",
                "haptic        haptic  4262    40 s      11     0  played 0  deviceReady 0  deviceMissing 1  lost 9  deviceErrors 0  deviceOpens 0",
                "record        record  4258    40 s       -     0  stored 228  duplicates 0  malformed 0",
                "voice         voice   4260    40 s      11     0  spoken 8  noSoundOutput 1  speechErrors 0  malformed 0  repeated 3  stale 0",
            ])
    }

    @Test func dottedDetailsAreSummedOnlyWhenTheirTotalIsMissing() {
        let totals = StatusTable.render([
            HealthReport(
                process: "w", role: "worker", pid: 1, uptime: 1,
                counters: [
                    "decodeErrors": 3, "decodeErrors.truncated": 2, "decodeErrors.badMagic": 1,
                    "dropped.a": 4, "dropped.b": 5,
                ])
        ])
        #expect(
            totals == [
                "process  role    pid  uptime  decodeErrors  dropped",
                "w        worker    1     1 s             3        9",
            ])
    }

    @Test func theLatestReportOfAProcessWins() {
        let older = HealthReport(
            process: "broker", role: "broker", pid: 1, uptime: 2, counters: ["published": 1])
        let newer = HealthReport(
            process: "broker", role: "broker", pid: 1, uptime: 3, counters: ["published": 5])
        #expect(StatusTable.render([newer, older]) == StatusTable.render([older, newer]))
        #expect(StatusTable.render([older, newer]).last?.hasSuffix(" 5") == true)
    }

    @Test func countersThatWouldOverflowSaturate() {
        let report = HealthReport(
            process: "w", role: "worker", pid: 1, uptime: 1, counters: ["dropped.a": Int.max, "dropped.b": 5])
        #expect(StatusTable.render([report]).last?.hasSuffix(String(Int.max)) == true)
    }

    @Test func aTableWithoutCountersHasTheFourFixedColumns() {
        let report = HealthReport(process: "w", role: "worker", pid: 7, uptime: 0.5, counters: [:])
        #expect(
            StatusTable.render([report]) == ["process  role    pid  uptime", "w        worker    7     0 s"])
    }
}
