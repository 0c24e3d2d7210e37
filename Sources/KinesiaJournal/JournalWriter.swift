package import KinesiaSystem

/// Appends a stream's records, before they are published: one writer per stream, held by a
/// lock (`flock` on the stream's `lock` file, released by the kernel even on `kill -9`).
///
/// Opening cuts a torn tail of the last segment (``recovery`` says how much, and how many
/// damaged records it passed). ``append(sequence:frames:)`` writes one record (``JournalRecord``)
/// at the end of the current segment, starting a new segment when the current one has reached
/// ``JournalPolicy/segmentBytes`` (then runs the store's retention when it is due), and syncs as
/// ``JournalPolicy/sync`` says. Call ``syncIfDue()`` when idle so that an interval policy holds
/// on a quiet stream.
///
/// A failed write (a full disk, an I/O error) cuts what it wrote, **stops** the writer and
/// throws; every later append throws ``JournalError/stopped(_:)`` at once, so a publisher logs
/// the first error, counts the rest and goes on publishing. Nothing is retried.
///
/// Not `Sendable`: use it on one thread.
///
/// ```swift
/// let writer = try store.openWriter(for: stream)
/// if writer.recovery.cutBytes > 0 { log.warning("journal tail cut: \(writer.recovery)") }
/// try writer.append(sequence: header.sequence, frames: frames)
/// ```
public final class JournalWriter {
    /// The lock file's name in a stream directory.
    static let lockName = "lock"

    /// What opening found in the last segment.
    public struct Recovery: Hashable, Sendable, CustomStringConvertible {
        /// The segment it was found in (`nil`: the stream had none).
        public var segment: String?
        /// Bytes cut at the end (a torn or zero-filled tail, or a corrupt last record).
        public var cutBytes = 0
        /// Damaged ranges passed in the last segment (never served).
        public var damagedRanges = 0
        /// What the cut and the damaged ranges were: a ``JournalDamage/Kind/tornTail`` for an
        /// interrupted write, ``JournalDamage/Kind/corruption`` for the rest.
        public var damage: [JournalDamage] = []

        /// Whether all that was found is a torn tail (what `kill -9` or a power cut leaves).
        public var isOnlyATornTail: Bool { !damage.isEmpty && damage.allSatisfy { $0.kind == .tornTail } }

        /// `cut 37 bytes of a torn tail in 00000000000000000000.journal`.
        public var description: String {
            guard let segment, cutBytes > 0 || damagedRanges > 0 else { return "clean" }
            var parts: [String] = []
            if cutBytes > 0 {
                let torn = damage.contains { $0.kind == .tornTail }
                parts.append("cut \(cutBytes) bytes of " + (torn ? "a torn tail" : "a corrupt last record"))
            }
            if damagedRanges > 0 { parts.append("\(damagedRanges) corrupt range(s) skipped") }
            return parts.joined(separator: ", ") + " in \(segment)"
        }
    }

    /// The counters of a writer (for `health/`).
    public struct Counters: Hashable, Sendable {
        /// Records appended.
        public var records = 0
        /// Bytes appended.
        public var bytes = 0
        /// `fdatasync` calls.
        public var syncs = 0
        /// Segments started.
        public var segments = 0
        /// Appends refused because the writer had stopped.
        public var refused = 0
    }

    /// A write function that replaces `pwrite` (tests inject a full disk with it).
    package typealias WriteFunction = (_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, _ offset: Int) ->
        (
            written: Int, error: Errno?
        )

    /// The stream.
    public let stream: JournalStream
    /// The stream's directory.
    public let path: String
    /// What opening cut or passed.
    public let recovery: Recovery
    /// The last sequence number appended (or found on opening), `nil` for an empty stream.
    public private(set) var lastSequence: UInt64?
    /// Why the writer stopped (`nil` while it works).
    public private(set) var stopReason: JournalError?
    /// What it wrote.
    public private(set) var counters = Counters()
    /// Damage found while writing: the segment being written deleted by someone else
    /// (``JournalDamage/Kind/deletedSegment``; the writer goes on in a new segment). Checked by
    /// ``syncIfDue()`` and ``flush()``, at most once a second.
    public private(set) var damage: [JournalDamage] = []

    /// Replaces `pwrite` (tests).
    package var writeFunction: WriteFunction?
    /// The clock of the sync schedule (tests replace it).
    package var now: () -> Duration

    private let store: JournalStore
    /// The stream's directory and its lock, open until ``close()``.
    private var directory: PrivateDirectory?
    private var lock: FileDescriptor?
    private var segment: FileDescriptor?
    private var segmentName: String?
    private var segmentEnd = 0
    private var segmentRecords = 0
    private var schedule: SyncSchedule
    private var buffer: [UInt8] = []
    /// Records gathered by ``writesBehind``, encoded, not written yet.
    private var pending: [UInt8] = []
    private var pendingRecords = 0
    private var segmentFirst: UInt64?
    private var checkedAt: Duration?

    init(store: JournalStore, stream: JournalStream, path: String) throws(JournalError) {
        self.store = store
        self.stream = stream
        self.path = path
        let directory = try JournalStore.openPrivate(path, creating: true)
        let lock: FileDescriptor
        do {
            lock = try directory.openFile(Self.lockName, .readWrite.creating)
        } catch {
            throw JournalError.unsafePath(error.description)
        }
        let taken: Bool
        do {
            taken = try lock.tryLock()
        } catch {
            throw JournalError.from(error, path: path, call: "flock")
        }
        guard taken else { throw JournalError.inUse(path: path) }
        let elapsed = store.elapsed
        now = { elapsed.now }
        schedule = SyncSchedule(store.policy.sync)
        let names: [String]
        do {
            names = SegmentName.sorted(try directory.descriptor.entryNames())
        } catch {
            throw JournalError.system(path: path, call: "readdir", message: error.description)
        }
        var recovery = Recovery()
        var last: UInt64?
        // The last segment: cut its tail, and carry on writing in it.
        if let name = names.last {
            recovery.segment = name
            let file = try Self.open(directory, name, .readWrite, path: path)
            let bytes = try Self.readAll(file, path: path + "/" + name)
            let scan = bytes.withUnsafeBytes { SegmentScan($0) }
            recovery.damagedRanges = scan.damage.count
            recovery.cutBytes = scan.tailBytes
            recovery.damage = scan.damage.map {
                JournalDamage(kind: .corruption, segment: name, offset: $0.offset, bytes: $0.length)
            }
            if scan.tailBytes > 0 {
                recovery.damage.append(
                    JournalDamage(
                        kind: scan.tailIsTorn ? .tornTail : .corruption, segment: name, offset: scan.validEnd,
                        bytes: scan.tailBytes))
            }
            last = scan.records.last?.sequence
            if scan.hasHeader {
                if scan.tailBytes > 0 {
                    do {
                        try file.truncate(to: scan.validEnd)
                        try file.synchronizeData()
                    } catch {
                        throw JournalError.from(error, path: path + "/" + name, call: "ftruncate")
                    }
                }
                segmentEnd = scan.validEnd
                segmentRecords = scan.records.count
                segment = consume file
                segmentName = name
                segmentFirst = SegmentName.firstSequence(name)
            } else if scan.damage.isEmpty {
                // A header cut short: the file holds nothing; start it again.
                do {
                    try file.truncate(to: 0)
                } catch {
                    throw JournalError.from(error, path: path + "/" + name, call: "ftruncate")
                }
                if let first = SegmentName.firstSequence(name), first > 0 { last = last ?? first - 1 }
            }
            // A segment without a valid header stays as it is (its damage is the readers' to
            // report); the next append starts a new segment.
        }
        // The last sequence of an empty last segment is in the one before.
        var index = names.count - 2
        while last == nil, index >= 0 {
            if let file = try? Self.open(directory, names[index], .read, path: path),
                let bytes = try? Self.readAll(file, path: path)
            {
                last = bytes.withUnsafeBytes { SegmentScan($0) }.records.last?.sequence
            }
            index -= 1
        }
        lastSequence = last
        self.recovery = recovery
        self.directory = consume directory
        self.lock = consume lock
    }

    deinit {
        try? writePending()
        if schedule.hasUnsyncedRecords, store.policy.sync != .never {
            try? segment?.synchronizeData()
        }
    }

    /// Appends the record of one published message.
    ///
    /// - Parameters:
    ///   - sequence: Its sequence number: above ``lastSequence`` (gaps are allowed: a
    ///     message that was never sent has no record).
    ///   - frames: The ZeroMQ frames, byte for byte as they are published.
    /// - Throws: ``JournalError/sequenceNotIncreasing(_:last:)`` (nothing written),
    ///   ``JournalError/recordTooLarge(_:)``, ``JournalError/diskFull(path:)`` or
    ///   ``JournalError/system(path:call:message:)`` (the writer stops),
    ///   ``JournalError/stopped(_:)`` after a stop.
    public func append(sequence: UInt64, frames: [[UInt8]]) throws(JournalError) {
        try append(sequence: sequence, size: JournalRecord.encodedSize(of: frames)) {
            (buffer) throws(JournalError) in
            try JournalRecord.encode(sequence: sequence, frames: frames, appendingTo: &buffer)
        }
    }

    /// Appends the record of one published message whose frames are already laid out as a
    /// record holds them (``JournalRecord/appendFrames(_:to:)``): what ``JournalWriteQueue``
    /// hands over. Throws as ``append(sequence:frames:)``.
    public func append(sequence: UInt64, encodedFrames: UnsafeRawBufferPointer) throws(JournalError) {
        let size = JournalRecord.headerSize + 8 + encodedFrames.count
        try append(sequence: sequence, size: size) { (buffer) throws(JournalError) in
            try JournalRecord.encode(sequence: sequence, encodedFrames: encodedFrames, appendingTo: &buffer)
        }
    }

    /// Appends a record of `size` bytes that `encode` appends to a buffer.
    private func append(
        sequence: UInt64, size: Int, encode: (inout [UInt8]) throws(JournalError) -> Void
    ) throws(JournalError) {
        if let stopReason {
            counters.refused += 1
            throw .stopped(stopReason.description)
        }
        if let lastSequence, sequence <= lastSequence {
            throw .sequenceNotIncreasing(sequence, last: lastSequence)
        }
        guard size - JournalRecord.headerSize <= JournalRecord.maximumBodyLength else {
            throw .recordTooLarge(size - JournalRecord.headerSize)
        }
        let rollsOver =
            segment != nil && segmentRecords + pendingRecords > 0
            && segmentEnd + pending.count + size > store.policy.segmentBytes
        if segment == nil || rollsOver {
            // What is gathered belongs to the segment before.
            try writePending()
            if segment == nil || rollsOver { try startSegment(firstSequence: sequence) }
        }
        if writesBehind {
            try encode(&pending)
            pendingRecords += 1
            lastSequence = sequence
            counters.records += 1
            counters.bytes += size
            if pending.count >= Self.pendingLimit { try writePending() }
            return
        }
        buffer.removeAll(keepingCapacity: true)
        try encode(&buffer)
        let (written, error) = write(buffer, to: segment?.rawValue ?? -1, at: segmentEnd)
        if let error {
            // Nothing half-written stays: the tail goes back to the last whole record.
            if written > 0 { try? segment?.truncate(to: segmentEnd) }
            throw stop(JournalError.from(error, path: path + "/" + (segmentName ?? ""), call: "write"))
        }
        segmentEnd += buffer.count
        segmentRecords += 1
        lastSequence = sequence
        counters.records += 1
        counters.bytes += buffer.count
        try scheduleSync()
    }

    /// Whether ``append(sequence:frames:)`` gathers records in memory and writes them in one
    /// write each: by ``writePending()`` (the publisher calls it at most ``writeBehind`` after
    /// a record was gathered, and before anything reads the journal) or when
    /// ``pendingLimit`` bytes have gathered. `false` (the default): each record is written
    /// when it is appended.
    ///
    /// A process that writes behind publishes a record before it is in the page cache, so a
    /// `kill -9` can lose the last few milliseconds of records it sent. That is safe only
    /// where the restarted process publishes the same records again, under the same numbers,
    /// with the same content (a worker rebuilds its sessions from the poses).
    public var writesBehind = false

    /// The most bytes gathered before they are written whatever the time.
    public static let pendingLimit = 64 << 10

    /// Whether records are gathered and not written yet.
    public var hasPending: Bool { pendingRecords > 0 }

    /// Writes the records gathered by ``writesBehind`` (one write), then syncs as the policy
    /// says. Does nothing when none is gathered.
    ///
    /// - Throws: ``JournalError/diskFull(path:)`` or ``JournalError/system(path:call:message:)``:
    ///   the writer stops, and the records gathered are lost.
    public func writePending() throws(JournalError) {
        guard pendingRecords > 0, stopReason == nil else { return }
        if segment == nil {
            // The segment was deleted under the writer: the gathered records start a new one.
            try startSegment(firstSequence: Self.firstSequence(in: pending))
        }
        let (written, error) = write(pending, to: segment?.rawValue ?? -1, at: segmentEnd)
        let count = pending.count
        let records = pendingRecords
        pending.removeAll(keepingCapacity: true)
        pendingRecords = 0
        if let error {
            if written > 0 { try? segment?.truncate(to: segmentEnd) }
            throw stop(JournalError.from(error, path: path + "/" + (segmentName ?? ""), call: "write"))
        }
        segmentEnd += count
        segmentRecords += records
        try scheduleSync()
    }

    /// The sequence number of the first record in `records` (encoded records).
    private static func firstSequence(in records: [UInt8]) -> UInt64 {
        records.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
    }

    /// After a write: syncs, or hands the file to the group, when the policy says it is time.
    private func scheduleSync() throws(JournalError) {
        guard schedule.appended(at: now()) else { return }
        if let groupSync, syncsInGroup {
            // Handed to the group's thread: nothing waits for the disk here.
            if let raw = segment?.rawValue { groupSync.schedule(raw) }
            schedule.synced(at: now())
        } else {
            try sync()
        }
    }

    /// The group that syncs this writer's files when ``syncsInGroup`` (`nil`: none).
    public var groupSync: JournalGroupSync?

    /// Whether a ``JournalGroupSync`` makes this writer's records durable (an interval policy
    /// on a store of many streams): ``append(sequence:frames:)`` and ``syncIfDue()`` then never
    /// sync; ``flush()`` still does (at a graceful stop).
    public var syncsInGroup = false

    /// Syncs the records appended since the last sync when the policy says it is time (an
    /// interval policy on a quiet stream). Cheap when there is nothing to do.
    ///
    /// - Throws: ``JournalError`` when the sync fails (the writer stops).
    public func syncIfDue() throws(JournalError) {
        guard stopReason == nil else { return }
        checkSegmentIfDue()
        guard schedule.isDue(at: now()) else { return }
        if let groupSync, syncsInGroup {
            if let raw = segment?.rawValue { groupSync.schedule(raw) }
            schedule.synced(at: now())
            return
        }
        try sync()
    }

    /// Gives the stream up at a graceful stop: what is gathered is written and synced, the
    /// stream's lock is released and its files are closed at once (not when the writer is
    /// freed), so that another writer may take the stream (a pool worker's session moved to
    /// another worker of the box) and a process that runs many sessions, one after the other,
    /// keeps no descriptor of the ones that ended. The writer refuses records from then on.
    public func close() {
        try? flush()
        abandon()
    }

    /// Lets the stream go without writing what it gathered: the lock is released and the files
    /// closed (a holder that lost the stream to another: a pool worker fenced past its lease).
    /// The writer refuses records from then on.
    public func abandon() {
        pending.removeAll()
        pendingRecords = 0
        if stopReason == nil { stopReason = .stopped("the journal writer was closed") }
        try? lock?.unlock()
        lock = nil
        segment = nil
        directory = nil
    }

    /// Syncs what was appended, whatever the policy (at a graceful stop).
    ///
    /// - Throws: ``JournalError`` when the sync fails (the writer stops).
    public func flush() throws(JournalError) {
        guard stopReason == nil else { return }
        // A segment deleted under the writer is found first: what is gathered goes to a new one.
        checkSegmentIfDue()
        try writePending()
        guard schedule.hasUnsyncedRecords else { return }
        try sync()
    }

    /// Whether the segment being written still has a name (at most once a second): one
    /// deleted under the writer is damage (what it held is gone for readers and after a
    /// restart), and the next record starts a new segment.
    private func checkSegmentIfDue() {
        let time = now()
        if let checkedAt, time - checkedAt < .seconds(1) { return }
        checkedAt = time
        guard let name = segmentName, let status = try? segment?.status(), status.linkCount == 0 else {
            return
        }
        let first = segmentFirst ?? 0
        // What was written to it is lost; what is still gathered goes to the next segment.
        let lastWritten =
            pendingRecords > 0
            ? Self.firstSequence(in: pending).subtractingReportingOverflow(1).partialValue : lastSequence
        let lost = pendingRecords > 0 && Self.firstSequence(in: pending) <= first ? nil : lastWritten
        damage.append(
            JournalDamage(
                kind: .deletedSegment, segment: name,
                missing: lost.flatMap { $0 >= first ? first...$0 : nil }))
        segment = nil
        segmentName = nil
        segmentFirst = nil
    }

    private func sync() throws(JournalError) {
        do {
            try segment?.synchronizeData()
        } catch {
            throw stop(JournalError.from(error, path: path + "/" + (segmentName ?? ""), call: "fdatasync"))
        }
        counters.syncs += 1
        schedule.synced(at: now())
    }

    private func write(_ bytes: [UInt8], to descriptor: Int32, at offset: Int) -> (
        written: Int, error: Errno?
    ) {
        bytes.withUnsafeBytes { bytes in
            if let writeFunction { return writeFunction(descriptor, bytes, offset) }
            return FileDescriptor.write(descriptor: descriptor, bytes, at: offset)
        }
    }

    private func stop(_ error: JournalError) -> JournalError {
        stopReason = error
        return error
    }

    /// Closes the current segment (synced unless the policy is `never`) and starts the one
    /// whose first record is `firstSequence`, then applies retention.
    private func startSegment(firstSequence: UInt64) throws(JournalError) {
        var closedBytes = 0
        if segment != nil {
            if store.policy.sync != .never, schedule.hasUnsyncedRecords { try sync() }
            segment = nil
            closedBytes = segmentEnd
        }
        let name = SegmentName.name(firstSequence: firstSequence)
        let file: FileDescriptor
        do throws(Errno) {
            switch directory {
            case .some(let directory):
                file = try directory.descriptor.open(
                    entry: name, .readWrite.creating.truncating, permissions: 0o600)
            case .none:
                throw Errno.badDescriptor
            }
        } catch {
            throw stop(JournalError.from(error, path: path + "/" + name, call: "open"))
        }
        let magic = JournalRecord.segmentMagic
        let (_, error) = write(magic, to: file.rawValue, at: 0)
        if let error {
            try? file.truncate(to: 0)
            throw stop(JournalError.from(error, path: path + "/" + name, call: "write"))
        }
        if store.policy.sync != .never {
            // The new file's name must survive a power cut too.
            if let groupSync, syncsInGroup, let raw = directory?.descriptor.rawValue {
                groupSync.schedule(raw)
            } else {
                try? directory?.descriptor.synchronize()
            }
        }
        segment = consume file
        segmentName = name
        segmentFirst = firstSequence
        segmentEnd = magic.count
        segmentRecords = 0
        counters.segments += 1
        store.enforceRetentionIfDue(closedBytes: closedBytes)
    }

    private static func open(
        _ directory: borrowing PrivateDirectory, _ name: String, _ access: FileAccess, path: String
    )
        throws(JournalError) -> FileDescriptor
    {
        do {
            // O_NONBLOCK changes nothing on a segment; on a FIFO put there it keeps open from waiting.
            return try directory.descriptor.open(entry: name, access.nonBlocking)
        } catch {
            throw JournalError.from(error, path: path + "/" + name, call: "open")
        }
    }

    static func readAll(_ file: borrowing FileDescriptor, path: String) throws(JournalError) -> [UInt8] {
        do {
            return try file.read(upTo: try file.size(), at: 0)
        } catch {
            throw JournalError.from(error, path: path, call: "read")
        }
    }
}
