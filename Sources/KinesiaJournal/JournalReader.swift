import KinesiaSystem

/// Reads a stream's records, as a replay or an analysis needs them: by sequence number, in
/// bounded batches, never returning a damaged record.
///
/// A reader may follow a stream that a writer (in this process or another) is appending to:
/// ``refresh()`` looks again at the last segment (and for new segments), and
/// ``entries(from:limit:)`` refreshes when what it knows cannot fill the batch asked for. An
/// incomplete record at the very end is a write still under way (or a torn tail the next writer
/// will cut): it is not read, and not counted as damage.
///
/// Damage is skipped, never served: a damaged range between good records (a flipped byte, a
/// file overwritten in the middle), a segment without a valid header, or a torn record at the
/// end of a segment that is not the last. The records in it are simply absent (their sequence
/// numbers are missing from what ``entries(from:limit:)`` returns, as a loss is), and each
/// damaged range counts once in ``damagedRanges`` and is described in ``damage``.
///
/// Losses that leave no damaged bytes are found too (``damageFound``): a segment that is not
/// the last and ends where the next one does not follow on (``JournalDamage/Kind/missingRecords``,
/// with the sequence numbers lost; ``JournalDamage/Kind/truncatedSegment`` when it ends inside a
/// record), and a segment that disappears when retention would not have removed it (the last
/// one, or one between others: ``JournalDamage/Kind/deletedSegment``).
///
/// Not `Sendable`: use it on one thread.
///
/// ```swift
/// let reader = try JournalReader(directory: store.path(of: stream))
/// var next = reader.firstSequence ?? 0
/// while case let batch = try reader.entries(from: next, limit: 256), let last = batch.last {
///     send(batch)
///     next = last.sequence + 1
/// }
/// ```
public final class JournalReader {
    /// The stream directory.
    public let directory: String
    /// The first sequence number held (`nil`: no record).
    public private(set) var firstSequence: UInt64?
    /// The last sequence number held, as of the last ``refresh()``.
    public private(set) var lastSequence: UInt64?
    /// Damaged ranges found so far (each counted once).
    public private(set) var damagedRanges = 0
    /// Everything found damaged or missing so far, each once, in the order found.
    public private(set) var damageFound: [JournalDamage] = []
    /// What was damaged, as sentences (``JournalDamage/description``).
    public var damage: [String] { damageFound.map(\.description) }

    /// What the reader knows of one segment.
    private struct Segment {
        var name: String
        var firstSequence: UInt64
        var records: [SegmentScan.Record] = []
        /// How far the scan went (a growing last segment is scanned on from here).
        var scannedTo = 0
        var hasHeader = true
        var countedDamage: Set<Int> = []
        /// Whether it was scanned to its end as a segment that is not the last (done once).
        var complete = false
        /// Whether its continuity with the next segment was checked (done once).
        var checkedContinuity = false
        /// The index in ``damageFound`` of a truncated end, to say what it lost.
        var truncation: Int?
    }

    private var segments: [Segment] = []

    /// Opens the stream directory `directory` (made by a ``JournalWriter``).
    ///
    /// - Throws: ``JournalError/notAJournal(_:)`` when it is no stream directory;
    ///   ``JournalError/unsafePath(_:)`` when others may reach it.
    public init(directory: String) throws(JournalError) {
        self.directory = directory
        try JournalStore.openPrivate(directory, creating: false).close()
        try refresh()
        guard !segments.isEmpty else { throw JournalError.notAJournal(directory) }
    }

    /// Looks again for new segments and new records at the end of the last one (retention may
    /// also have removed the oldest).
    ///
    /// - Throws: ``JournalError`` when the directory cannot be read.
    public func refresh() throws(JournalError) {
        let names = SegmentName.sorted(try JournalStore.names(in: directory))
        let present = Set(names)
        var kept: [Segment] = []
        for name in names {
            if let known = segments.first(where: { $0.name == name }) {
                kept.append(known)
            } else if let first = SegmentName.firstSequence(name) {
                kept.append(Segment(name: name, firstSequence: first))
            }
        }
        // Retention removes the oldest segments, never the one being written: a segment gone
        // after one still there, or the last one gone while others stay, was deleted.
        if !present.isEmpty {
            let stillThere = segments.lastIndex { present.contains($0.name) }
            for (index, segment) in segments.enumerated() where !present.contains(segment.name) {
                let isRetention =
                    stillThere.map { index < $0 } ?? false
                    && !segments[..<index].contains { present.contains($0.name) }
                guard !isRetention else { continue }
                let missing = segment.records.last.map { segment.records.first!.sequence...$0.sequence }
                note(JournalDamage(kind: .deletedSegment, segment: segment.name, missing: missing))
            }
        }
        segments = kept
        // Every segment but the last is complete: scanned once, and only when it matters: the
        // first (where the stream starts), one that was the last (followed until a new one
        // began), and the others when a read reaches them (``ensureScanned(_:)``). The last is
        // scanned on at every refresh. So opening a long stream, or following it, costs what
        // its ends hold, not all of it.
        for index in segments.indices {
            let isLast = index == segments.count - 1
            if isLast || (!segments[index].complete && (index == 0 || segments[index].scannedTo > 0)) {
                try scan(index, isLast: isLast)
            }
        }
        // An empty last segment (one just begun): the stream ends in the one before.
        var index = segments.count - 2
        while index >= 0, segments[(index + 1)...].allSatisfy({ $0.records.isEmpty }) {
            try ensureScanned(index)
            index -= 1
        }
        checkContinuity()
        updateEnds()
    }

    /// Looks again only for what retention changes, the oldest segments gone, and leaves the
    /// records written since the last ``refresh()`` unread: what an announcement needs of a
    /// stream whose last record its writer knows. A segment that retention removed is passed
    /// over; the new first one is scanned once (it is complete).
    ///
    /// - Throws: ``JournalError`` when the directory cannot be read.
    public func refreshFirst() throws(JournalError) {
        let present = Set(try JournalStore.names(in: directory))
        guard let firstKept = segments.firstIndex(where: { present.contains($0.name) }) else {
            // Nothing known, or every known segment gone: the whole look.
            try refresh()
            return
        }
        guard firstKept > 0 else { return }
        segments.removeFirst(firstKept)
        try ensureScanned(0)
        updateEnds()
    }

    /// ``firstSequence`` and ``lastSequence`` from what is scanned (a segment not scanned yet
    /// starts at its name's sequence number).
    private func updateEnds() {
        firstSequence = nil
        for segment in segments {
            if let first = segment.records.first?.sequence {
                firstSequence = first
                break
            }
            if !segment.complete && segment.scannedTo == 0 {
                firstSequence = segment.firstSequence
                break
            }
        }
        lastSequence = segments.reversed().lazy.compactMap { $0.records.last?.sequence }.first
    }

    /// Scans segment `index` to its end when it is not the last and was not yet.
    private func ensureScanned(_ index: Int) throws(JournalError) {
        guard index < segments.count - 1, !segments[index].complete else { return }
        try scan(index, isLast: false)
        checkContinuity()
    }

    /// The records from sequence number `from` on (the first held at or after it), at most
    /// `limit` of them, in order.
    ///
    /// - Parameters:
    ///   - from: The first sequence number wanted.
    ///   - limit: The most records returned (positive).
    /// - Returns: The records; empty when none is held at or after `from` (yet). Damaged records
    ///   are skipped (counted in ``damagedRanges``).
    /// - Throws: ``JournalError`` when a segment cannot be read.
    public func entries(from: UInt64, limit: Int) throws(JournalError) -> [JournalEntry] {
        var result: [JournalEntry] = []
        guard limit > 0 else { return result }
        // Looked again when what it knows cannot fill the batch (a writer may have gone on
        // since): a batch is as long as what is written, not as what the last look found.
        if lastSequence.map({ from > $0 || $0 - from < UInt64(limit) - 1 }) ?? true {
            try refresh()
        }
        // The segment that may hold `from`: the last whose first sequence is not above it.
        var index = max(0, (segments.lastIndex { $0.firstSequence <= from }) ?? 0)
        while index < segments.count, result.count < limit {
            try ensureScanned(index)
            let records = segments[index].records
            let start = Self.firstIndex(in: records, atOrAfter: from)
            if start < records.count {
                let chosen = records[start..<min(records.count, start + limit - result.count)]
                let first = chosen.first!.offset
                let end = chosen.last!.offset + chosen.last!.size
                let name = segments[index].name
                let bytes: [UInt8]
                do {
                    let file = try FileDescriptor.open(
                        directory + "/" + name, .read.notFollowingLinks.nonBlocking)
                    bytes = try file.read(upTo: end - first, at: first)
                } catch {
                    if error == .noSuchFile {
                        // Retention removed it meanwhile: what it held is gone.
                        index += 1
                        continue
                    }
                    throw JournalError.from(error, path: directory + "/" + name, call: "read")
                }
                bytes.withUnsafeBytes { buffer in
                    for record in chosen {
                        let offset = record.offset - first
                        // Checked again: the file may have changed since it was scanned.
                        guard offset + record.size <= buffer.count,
                            case .record(let sequence, _) = JournalRecord.check(buffer, at: offset),
                            sequence == record.sequence
                        else {
                            noteDamage(segment: index, offset: record.offset, length: record.size)
                            continue
                        }
                        result.append(
                            JournalEntry(sequence: sequence, frames: JournalRecord.frames(buffer, at: offset))
                        )
                    }
                }
            }
            index += 1
        }
        return result
    }

    /// Every record of the stream, in order (for an analysis of a whole recording).
    ///
    /// - Throws: ``JournalError``.
    public func allEntries() throws(JournalError) -> [JournalEntry] {
        var result: [JournalEntry] = []
        var next = firstSequence ?? 0
        while true {
            let batch = try entries(from: next, limit: 4096)
            guard let last = batch.last else { return result }
            result += batch
            if last.sequence == UInt64.max { return result }
            next = last.sequence + 1
        }
    }

    // MARK: Scanning

    private static func firstIndex(in records: [SegmentScan.Record], atOrAfter sequence: UInt64) -> Int {
        var low = 0
        var high = records.count
        while low < high {
            let middle = (low + high) / 2
            if records[middle].sequence < sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func scan(_ index: Int, isLast: Bool) throws(JournalError) {
        let name = segments[index].name
        let path = directory + "/" + name
        let file: FileDescriptor
        do {
            // O_NONBLOCK: a FIFO named like a segment is read as empty, never waited on.
            file = try FileDescriptor.open(path, .read.notFollowingLinks.nonBlocking)
        } catch {
            if error == .noSuchFile { return }
            throw JournalError.from(error, path: path, call: "open")
        }
        let size: Int
        do {
            size = try file.size()
        } catch {
            throw JournalError.from(error, path: path, call: "fstat")
        }
        let segment = segments[index]
        if !isLast, segment.scannedTo > 0, size <= segment.scannedTo {
            // Followed to its end while it was the last: nothing came after.
            segments[index].complete = true
            return
        }
        guard size > segment.scannedTo || (segment.scannedTo == 0 && !isLast) else { return }
        let bytes: [UInt8]
        do {
            bytes = try file.read(upTo: size - segment.scannedTo, at: segment.scannedTo)
        } catch {
            throw JournalError.from(error, path: path, call: "read")
        }
        let scan: SegmentScan
        if segment.scannedTo == 0 {
            scan = bytes.withUnsafeBytes { SegmentScan($0) }
            segments[index].hasHeader = scan.hasHeader
        } else {
            scan = bytes.withUnsafeBytes {
                SegmentScan(continuing: $0, at: segment.scannedTo, after: segment.records.last?.sequence)
            }
        }
        segments[index].records += scan.records
        for range in scan.damage { noteDamage(segment: index, offset: range.offset, length: range.length) }
        if isLast {
            // A tail may be a write under way: scanned again next time.
            segments[index].scannedTo = scan.hasHeader || segment.scannedTo > 0 ? scan.validEnd : 0
        } else {
            if scan.tailBytes > 0 {
                noteDamage(
                    segment: index, offset: scan.validEnd, length: scan.tailBytes,
                    kind: scan.tailIsTorn ? .truncatedSegment : .corruption)
                if scan.tailIsTorn { segments[index].truncation = damageFound.count - 1 }
            }
            segments[index].scannedTo = max(size, 1)
            segments[index].complete = true
        }
    }

    /// Between two segments, the second must start right after the first's last record (its
    /// name is the sequence number of its first record, as written): what is between is lost.
    private func checkContinuity() {
        for index in segments.indices.dropLast()
        where segments[index].complete && !segments[index].checkedContinuity {
            segments[index].checkedContinuity = true
            let segment = segments[index]
            // A segment whose records are all damaged ends where it started.
            let expected = segment.records.last.map { $0.sequence &+ 1 } ?? segment.firstSequence
            let nextFirst = segments[index + 1].firstSequence
            guard nextFirst > expected, segment.records.last?.sequence != UInt64.max else { continue }
            let missing = expected...(nextFirst - 1)
            if let truncation = segment.truncation {
                damageFound[truncation].missing = missing
            } else {
                note(JournalDamage(kind: .missingRecords, segment: segment.name, missing: missing))
            }
        }
    }

    private func noteDamage(
        segment index: Int, offset: Int, length: Int, kind: JournalDamage.Kind = .corruption
    ) {
        guard segments[index].countedDamage.insert(offset).inserted else { return }
        damagedRanges += 1
        note(JournalDamage(kind: kind, segment: segments[index].name, offset: offset, bytes: length))
    }

    private func note(_ damage: JournalDamage) {
        damageFound.append(damage)
    }
}
