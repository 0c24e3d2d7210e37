import KinesiaJournal
import Testing

/// Scanning segment bytes: no file, no I/O.
struct SegmentScanTests {
    private func scan(_ bytes: [UInt8]) -> SegmentScan { bytes.withUnsafeBytes { SegmentScan($0) } }

    @Test func aCleanSegmentHasEveryRecordAndNoTail() {
        let bytes = JournalFixtures.segment([0, 1, 2, 5])
        let result = scan(bytes)
        #expect(result.records.map(\.sequence) == [0, 1, 2, 5])
        #expect(result.tailBytes == 0)
        #expect(result.damage.isEmpty)
        #expect(result.validEnd == bytes.count)
    }

    @Test func recordsRoundTripTheirFramesByteForByte() {
        let bytes = JournalFixtures.segment([9])
        let frames = bytes.withUnsafeBytes { JournalRecord.frames($0, at: JournalRecord.segmentMagic.count) }
        #expect(frames == JournalFixtures.frames(9))
    }

    /// A write cut anywhere inside the last record leaves the records before it and a tail.
    @Test func aRecordCutAtAnyByteIsATornTail() {
        let whole = JournalFixtures.segment([0, 1, 2])
        let lastStart = scan(whole).records[2].offset
        for cut in lastStart..<whole.count {
            let result = scan(Array(whole[..<cut]))
            #expect(result.records.map(\.sequence) == [0, 1], "cut at \(cut)")
            #expect(result.validEnd == lastStart)
            #expect(result.tailBytes == cut - lastStart)
            #expect(result.damage.isEmpty)
        }
    }

    @Test func aZeroFilledTailIsATailNotARecord() {
        let whole = JournalFixtures.segment([0, 1])
        let result = scan(whole + [UInt8](repeating: 0, count: 4096))
        #expect(result.records.map(\.sequence) == [0, 1])
        #expect(result.validEnd == whole.count)
        #expect(result.tailBytes == 4096)
    }

    /// Any flipped byte of a middle record makes it damage; the records after it are kept.
    @Test func aFlippedByteInTheMiddleIsDamageAndTheRestIsKept() {
        let whole = JournalFixtures.segment([0, 1, 2, 3])
        let middle = scan(whole).records[1]
        for position in middle.offset..<(middle.offset + middle.size) {
            var bytes = whole
            bytes[position] ^= 0x20
            let result = scan(bytes)
            #expect(result.records.map(\.sequence) == [0, 2, 3], "flip at \(position)")
            #expect(result.damage.map(\.offset) == [middle.offset])
            #expect(result.damage.map(\.length) == [middle.size])
            #expect(result.tailBytes == 0)
        }
    }

    @Test func aFlippedByteInTheLastRecordIsATailButNotATornOne() {
        var bytes = JournalFixtures.segment([0, 1, 2])
        bytes[bytes.count - 3] ^= 0x01
        let result = scan(bytes)
        #expect(result.records.map(\.sequence) == [0, 1])
        #expect(result.tailBytes > 0)
        #expect(!result.tailIsTorn, "a whole record failing its checksum is corruption")
    }

    /// What an interrupted write leaves: a record cut anywhere, zeros, a header cut short.
    @Test(arguments: [1, 5, 8, 20, 47])
    func aRecordCutShortIsATornTail(cut: Int) {
        let bytes = Array(JournalFixtures.segment([0, 1, 2]).dropLast(cut))
        let result = scan(bytes)
        #expect(result.records.map(\.sequence) == [0, 1])
        #expect(result.tailIsTorn)
        #expect(scan(JournalFixtures.segment([0]) + [UInt8](repeating: 0, count: 64)).tailIsTorn)
        #expect(scan(Array(JournalRecord.segmentMagic.prefix(5))).tailIsTorn)
        #expect(!scan(JournalFixtures.segment([0, 1])).tailIsTorn, "no tail, nothing torn")
    }

    @Test func aSegmentWithoutItsHeaderServesNothing() {
        var bytes = JournalFixtures.segment([0, 1])
        bytes[0] = UInt8(ascii: "X")
        let result = scan(bytes)
        #expect(!result.hasHeader)
        #expect(result.records.isEmpty)
        #expect(result.damage.count == 1)
    }

    @Test func aHeaderCutShortIsATail() {
        let result = scan(Array(JournalRecord.segmentMagic.prefix(5)))
        #expect(!result.hasHeader)
        #expect(result.damage.isEmpty)
        #expect(result.tailBytes == 5)
    }

    @Test func aRecordWhoseSequenceGoesBackIsNotServed() {
        let bytes = JournalFixtures.segment([4, 5]) + Array(JournalFixtures.segment([3]).dropFirst(8))
        let result = scan(bytes)
        #expect(result.records.map(\.sequence) == [4, 5])
        #expect(result.tailBytes > 0)
    }

    @Test func continuingAScanFindsTheRecordsAppendedSince() {
        let first = JournalFixtures.segment([0, 1])
        let whole = JournalFixtures.segment([0, 1, 2, 3])
        let rest = Array(whole[first.count...])
        let result = rest.withUnsafeBytes { SegmentScan(continuing: $0, at: first.count, after: 1) }
        #expect(result.records.map(\.sequence) == [2, 3])
        #expect(result.records.first?.offset == first.count)
        #expect(result.validEnd == whole.count)
    }
}

struct SyncScheduleTests {
    @Test func anIntervalSyncsTheFirstRecordThenAtMostOncePerInterval() {
        var schedule = SyncSchedule(.interval(.milliseconds(200)))
        let first = schedule.appended(at: .milliseconds(0))
        #expect(first)
        schedule.synced(at: .milliseconds(0))
        let second = schedule.appended(at: .milliseconds(50))
        #expect(!second)
        #expect(!schedule.isDue(at: .milliseconds(199)))
        #expect(schedule.isDue(at: .milliseconds(200)))
        schedule.synced(at: .milliseconds(200))
        #expect(!schedule.isDue(at: .milliseconds(900)), "nothing appended since")
    }

    @Test func alwaysSyncsEveryRecordAndNeverNone() {
        var always = SyncSchedule(.always)
        var never = SyncSchedule(.never)
        for step in 0..<5 {
            let syncsAlways = always.appended(at: .milliseconds(step))
            #expect(syncsAlways)
            always.synced(at: .milliseconds(step))
            let syncsNever = never.appended(at: .seconds(step * 1000))
            #expect(!syncsNever)
        }
    }

    @Test(arguments: [
        ("always", JournalPolicy.Sync.always), ("never", .never), ("250", .interval(.milliseconds(250))),
    ])
    func parsesTheFsyncOption(text: String, expected: JournalPolicy.Sync) {
        #expect(JournalPolicy.Sync(parsing: text) == expected)
        #expect(expected.description == text)
    }

    @Test(arguments: ["", "0", "-5", "soon", "1.5"])
    func refusesAnFsyncOptionThatIsNone(text: String) {
        #expect(JournalPolicy.Sync(parsing: text) == nil)
    }
}

struct RetentionPlanTests {
    private func segment(_ name: String, bytes: Int, age: Int, held: Bool = false) -> RetentionPlan.Segment {
        RetentionPlan.Segment(
            stream: JournalFixtures.stream, name: name, bytes: bytes, changedAt: .seconds(1000 - age),
            isBeingWritten: held)
    }

    @Test func deletesTheOldestBeyondTheSizeLimit() {
        let plan = RetentionPlan(
            segments: [
                segment("c", bytes: 100, age: 10), segment("a", bytes: 100, age: 30),
                segment("b", bytes: 100, age: 20),
            ],
            maximumBytes: 150, maximumAge: .seconds(10_000), now: .seconds(1000))
        #expect(plan.deleted.map(\.name) == ["a", "b"])
        #expect(plan.keptBytes == 100)
    }

    @Test func deletesWhatIsOlderThanTheAgeLimit() {
        let plan = RetentionPlan(
            segments: [segment("old", bytes: 1, age: 500), segment("new", bytes: 1, age: 5)],
            maximumBytes: 1 << 30, maximumAge: .seconds(100), now: .seconds(1000))
        #expect(plan.deleted.map(\.name) == ["old"])
    }

    @Test func neverDeletesTheSegmentBeingWritten() {
        let plan = RetentionPlan(
            segments: [segment("active", bytes: 1000, age: 5000, held: true)],
            maximumBytes: 10, maximumAge: .seconds(1), now: .seconds(1000))
        #expect(plan.deleted.isEmpty)
    }
}
