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
