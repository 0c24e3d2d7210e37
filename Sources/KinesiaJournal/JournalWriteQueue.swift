import Foundation
import KinesiaSystem

/// Journal writes off the publishing thread: records are gathered (``append(_:sequence:frames:)``:
/// the frames' bytes copied into a buffer of the publishing thread's own, no lock, so the
/// publisher's own buffers stay its own and are reused without a copy-on-write), handed over in
/// one lock a turn of the publisher's loop (``handOver()``, or when 256 KiB gathered), and a
/// thread of its own encodes them, writes each writer's batch in one `pwrite` every
/// ``interval``, syncs what the fsync policy says is due, and runs the jobs queued behind them
/// (``run(label:after:_:)``: a checkpoint that counts on the records before it), in the order
/// they were queued.
///
/// For a publisher that publishes the same records again after a `kill -9` (a worker, which
/// rebuilds them from the poses): what was queued and not written is lost with the process,
/// as with ``JournalWriter/writesBehind``, and never ahead of a job queued after it.
///
/// The publishing side (``append(slot:sequence:frames:)``, ``run(label:after:_:)``,
/// ``handOver()``, ``handedOver(_:)``, ``drain()``, ``stop()``, ``abandon()``) is one thread's: the
/// publisher's.
///
/// How long the publishing thread can wait, and when:
/// - ``handOver()`` (and an append that fills the gathering buffer) waits only when
///   ``limitBytes`` of frames are queued (a disk slower than the records for longer than that
///   takes; counted in ``waits``);
/// - ``drain()`` (before a reader reads the files) waits for what is queued: at most one
///   ``interval`` of records and their writes;
/// - ``withWriters(_:)`` (attaching a stream) waits for the batch under way, syncs included;
/// - ``reports`` (health counters) never waits for a batch: the thread leaves a copy of every
///   writer's counters after each one.
///
/// Every writer is used only under the queue's lock once it is ``register(_:)``ed: by the thread
/// for a batch, by the caller through ``withWriters(_:)``.
///
/// A batch is due ``interval`` after the end of the previous one (the first, after the queue
/// was made), timed on the clock given (the system's by default, a ``ManualClock`` in tests);
/// ``drain()`` and ``stop()`` bring it forward.
///
/// ```swift
/// let queue = JournalWriteQueue()
/// queue.withWriters { queue.register(writer) }
/// queue.append(writer, sequence: 0, frames: frames)
/// queue.run(label: "checkpoint") { try save() }
/// for failure in queue.takeFailures() { report(failure) }
/// queue.stop()   // everything queued written, the thread ended
/// ```
public final class JournalWriteQueue: @unchecked Sendable {
    /// What went wrong on the thread, for the publishing thread to report.
    public enum Failure {
        /// A writer stopped (its first error; later records to it are refused silently).
        case writer(JournalWriter, JournalError)
        /// A job threw.
        case job(label: String, description: String)
    }

    /// A record handed over: its writer's slot and frames `start..<end` of its chunk's byte
    /// buffer, laid out as a record holds them (``JournalRecord/appendFrames(_:to:)``). Plain
    /// values: handing one over counts no reference and hashes nothing.
    private struct QueuedRecord {
        var slot: Int
        var sequence: UInt64
        var start: Int
        var end: Int
    }

    /// A job queued behind the records handed over before it (`afterRecords` of them, in the
    /// same chunk): those of the writers in `slots` (`nil`: every writer's).
    private struct QueuedRun {
        var afterRecords: Int
        var slots: [Int]?
        var label: String
        var body: () throws -> Void
    }

    /// How often the thread writes what was handed over.
    public let interval: Duration
    /// The most bytes of frames queued before a hand-over (``handOver()``) waits.
    public let limitBytes: Int

    /// Guards the queue, the counts and the failures; signals the thread and the waiters.
    private let condition = NSCondition()
    /// The chunks handed over and not taken by the thread yet, in order.
    private var chunks: [Chunk] = []
    /// The bytes of frames in ``chunks``.
    private var queuedBytes = 0
    /// Chunks the thread wrote, emptied with their capacity kept, for the publisher's next
    /// gatherings (at most ``spareChunks``).
    private var spare: [Chunk] = []
    private static let spareChunks = 4
    private var queued = 0
    private var done = 0
    private var wanted = 0
    private var stopping = false
    private var ended = false
    private var failures: [Failure] = []
    private var waitCount = 0
    private var completedJobs: [String: Int] = [:]
    private var writtenThrough: [ObjectIdentifier: UInt64] = [:]
    private var writerReports: [ObjectIdentifier: WriterReport] = [:]
    /// Records and jobs in the order they came, with the records' frames: what the publishing
    /// thread gathers, then hands over whole (no copy) for the thread to write.
    private struct Chunk {
        var records: [QueuedRecord] = []
        var runs: [QueuedRun] = []
        var bytes: [UInt8] = []

        var isEmpty: Bool { records.isEmpty && runs.isEmpty }

        mutating func append(slot: Int, sequence: UInt64, frames: [[UInt8]]) {
            let start = bytes.count
            JournalRecord.appendFrames(frames, to: &bytes)
            records.append(QueuedRecord(slot: slot, sequence: sequence, start: start, end: bytes.count))
        }

        mutating func removeAll() {
            records.removeAll(keepingCapacity: true)
            runs.removeAll(keepingCapacity: true)
            bytes.removeAll(keepingCapacity: true)
        }
    }
    /// What the publishing thread gathered since its last hand-over: its own, no lock.
    private var gathered = Chunk()
    /// The last sequence number handed over or gathered, by slot (the publishing thread's).
    private var handedOverBySlot: [UInt64?] = []
    /// The bytes gathered that are handed over at once, whatever the publisher's loop does.
    static let handOverBytes = 256 << 10
    /// The slot of each registered writer (read by the writer-based calls).
    private var slotOfWriter: [ObjectIdentifier: Int] = [:]

    /// Guards the writers (held by the thread for a batch).
    private let writersLock = NSLock()
    private var writers: [ObjectIdentifier: JournalWriter] = [:]
    /// The registered writers by slot (`nil`: unregistered). Slots are never reused: a record
    /// queued for a writer unregistered since is dropped, never written by another.
    private var slotWriters: [JournalWriter?] = []
    /// The slots whose writer failed (later records to it are refused silently).
    private var failedSlots: [Bool] = []
    private var thread: Thread?
    /// The batches' time, counted from the queue's start.
    private let elapsed: ElapsedClock
    /// What the thread does after each batch.
    private let afterEachBatch: @Sendable () -> Void

    /// A queue whose thread writes every `interval` on `clock`, with at most `limitBytes` waiting.
    /// - Parameters:
    ///   - interval: The time between the end of a batch and the next.
    ///   - limitBytes: The most bytes of frames queued before a hand-over waits.
    ///   - clock: What the interval is timed on: read once a batch, and again whenever the thread
    ///     wakes before the batch is due (at least every `interval` of real time).
    ///   - afterEachBatch: Work of the journal's that must not hold up the publishing thread,
    ///     done on the queue's thread after each batch, also an empty one (at least every
    ///     `interval`): the store's retention when it is due
    ///     (``JournalStore/enforceRetentionIfDue(closedBytes:)``).
    public init(
        interval: Duration = .milliseconds(20), limitBytes: Int = 16 << 20,
        clock: some Clock<Duration> = ContinuousClock(), afterEachBatch: @escaping @Sendable () -> Void = {}
    ) {
        self.interval = interval
        self.limitBytes = limitBytes
        self.afterEachBatch = afterEachBatch
        elapsed = ElapsedClock(clock)
        let first = TimedWait(limit: interval, startedAt: elapsed.now)
        let thread = Thread.named("kinesia.journal-write") { [self] in loop(first: first) }
        self.thread = thread
        thread.start()
    }

    /// Times a hand-over waited for the thread (the queue was full).
    public var waits: Int { condition.withLock { waitCount } }

    /// The last sequence number of `writer` handed over or gathered (`nil`: none yet).
    public func handedOver(_ writer: JournalWriter) -> UInt64? {
        condition.withLock { slotOfWriter[ObjectIdentifier(writer)] }.flatMap {
            handedOverBySlot[$0]
        }
    }

    /// The last sequence number of `writer` that the thread has written (`nil`: none yet).
    public func written(_ writer: JournalWriter) -> UInt64? {
        condition.withLock { writtenThrough[ObjectIdentifier(writer)] }
    }

    /// The jobs of `label` that ran without an error.
    public func completed(_ label: String) -> Int { condition.withLock { completedJobs[label, default: 0] } }

    /// What a registered writer had done at the end of the thread's last batch: what
    /// ``reports`` gives without waiting for a batch under way.
    public struct WriterReport: Sendable {
        /// The writer's counters.
        public var counters: JournalWriter.Counters
        /// Whether it stopped.
        public var stopped: Bool
        /// The damage it found while writing (``JournalWriter/damage``).
        public var damage: [JournalDamage]

        /// The report of `writer` now (read it where nothing else uses it).
        public init(_ writer: JournalWriter) {
            counters = writer.counters
            stopped = writer.stopReason != nil
            damage = writer.damage
        }
    }

    /// Every registered writer's report as of the end of the last batch (or its registration),
    /// by writer. Takes the queue's lock only: a batch under way (its writes and syncs) is not
    /// waited for.
    public var reports: [ObjectIdentifier: WriterReport] { condition.withLock { writerReports } }

    /// Makes `writer` the thread's to write and sync (call inside ``withWriters(_:)``); it
    /// gathers its records (``JournalWriter/writesBehind``). What it already holds counts as
    /// handed over and written.
    ///
    /// - Returns: The writer's slot, to hand its records over by (``append(slot:sequence:frames:)``).
    @discardableResult
    public func register(_ writer: JournalWriter) -> Int {
        let id = ObjectIdentifier(writer)
        writer.writesBehind = true
        writers[id] = writer
        let slot = slotWriters.count
        slotWriters.append(writer)
        failedSlots.append(false)
        let report = WriterReport(writer)
        handedOverBySlot.append(writer.lastSequence)
        condition.withLock {
            slotOfWriter[id] = slot
            writtenThrough[id] = writer.lastSequence
            writerReports[id] = report
        }
        return slot
    }

    /// Takes `writer` back from the thread (call inside ``withWriters(_:)``, after ``drain()``).
    public func unregister(_ writer: JournalWriter) {
        let id = ObjectIdentifier(writer)
        writers[id] = nil
        let slot = condition.withLock {
            writtenThrough[id] = nil
            writerReports[id] = nil
            return slotOfWriter.removeValue(forKey: id)
        }
        if let slot { slotWriters[slot] = nil }
    }

    /// Hands over one record of a registered writer (``append(slot:sequence:frames:)`` without
    /// knowing its slot: one lookup more). A writer not registered, or taken back, has nothing
    /// queued, as a slot taken back has nothing written.
    public func append(_ writer: JournalWriter, sequence: UInt64, frames: [[UInt8]]) {
        guard let slot = condition.withLock({ slotOfWriter[ObjectIdentifier(writer)] }) else { return }
        append(slot: slot, sequence: sequence, frames: frames)
    }

    /// Gathers one record of the writer registered in `slot` (``register(_:)``): the frames'
    /// bytes copied, no lock, no lookup; handed over at the next ``handOver()`` (or at once when
    /// ``handOverBytes`` gathered). A slot unregistered since is dropped by the thread.
    ///
    /// A lock per record (and the condition's reference counted on both threads) was about 1.5 %
    /// of a journaled worker's live loop at 150,000 poses/s.
    public func append(slot: Int, sequence: UInt64, frames: [[UInt8]]) {
        gathered.append(slot: slot, sequence: sequence, frames: frames)
        handedOverBySlot[slot] = sequence
        if gathered.bytes.count >= Self.handOverBytes { handOver() }
    }

    /// Hands what was gathered over to the thread, in one lock (call it once a turn of the
    /// publisher's loop); waits only while ``limitBytes`` of frames are queued.
    public func handOver() {
        guard !gathered.isEmpty else { return }
        condition.lock()
        while queuedBytes > limitBytes, !ended {
            waitCount += 1
            condition.wait()
        }
        var chunk = spare.popLast() ?? Chunk()
        swap(&chunk, &gathered)
        queuedBytes += chunk.bytes.count
        queued += chunk.records.count + chunk.runs.count
        chunks.append(chunk)
        condition.unlock()
    }

    /// Runs `body` on the thread (gathered and handed over with the records, in order), in the
    /// batch that takes it, after the records handed over before it are written: every
    /// writer's, or only those of the writers in `slots` when given (a checkpoint counts on its
    /// own camera's streams); before any record handed over after it.
    ///
    /// A job that names its writers leaves the others' records gathered, to be written once at
    /// the end of the batch: a worker of 64 cameras queues 32 checkpoints a second, and writing
    /// every writer's records ahead of each one split a batch of 256 streams into as many writes
    /// per stream as it had checkpoints (twice the writes, of half the size).
    /// An error it throws is a ``Failure/job(label:description:)``.
    public func run(label: String, after slots: [Int]? = nil, _ body: @escaping () throws -> Void) {
        gathered.runs.append(
            QueuedRun(afterRecords: gathered.records.count, slots: slots, label: label, body: body))
    }

    /// Waits until everything handed over so far is written (before the files are read).
    public func drain() {
        handOver()
        condition.lock()
        let target = queued
        wanted = max(wanted, target)
        condition.broadcast()
        while done < target, !ended { condition.wait() }
        condition.unlock()
    }

    /// Runs `body` while the thread is not using the writers.
    @discardableResult
    public func withWriters<Result, Thrown: Error>(_ body: () throws(Thrown) -> Result) throws(Thrown)
        -> Result
    {
        writersLock.lock()
        defer { writersLock.unlock() }
        return try body()
    }

    /// The failures since the last call (the publishing thread reports them).
    public func takeFailures() -> [Failure] {
        condition.lock()
        defer { condition.unlock() }
        guard !failures.isEmpty else { return [] }
        defer { failures = [] }
        return failures
    }

    /// Drops everything queued (records and jobs), ends the thread; then waits for it. For a
    /// holder that lost its streams to another (a pool worker fenced past its lease): nothing
    /// more it gathered may be written (a batch already under way finishes).
    public func abandon() {
        gathered.removeAll()
        condition.lock()
        chunks.removeAll()
        queuedBytes = 0
        condition.unlock()
        stop()
    }

    /// Writes everything queued, runs the jobs, ends the thread; then waits for it.
    public func stop() {
        handOver()
        condition.lock()
        stopping = true
        condition.broadcast()
        while !ended { condition.wait() }
        condition.unlock()
        // The thread's closure holds the queue: without this the two would keep each other,
        // and the writers with them, for the life of the process.
        thread = nil
        writersLock.withLock {
            writers = [:]
            slotWriters = []
        }
    }

    /// The thread's batches, the first due at the end of `first`.
    private func loop(first: TimedWait) {
        var batch: [Chunk] = []
        var reports: [ObjectIdentifier: WriterReport] = [:]
        var wait = first
        while true {
            condition.lock()
            while !stopping, wanted <= done {
                guard let remaining = wait.remaining(at: elapsed.now) else { break }
                // The condition's own timer is the real clock's: at most the time left on it (an
                // interval), then the clock is read again (a manual clock moves with no wake-up).
                _ = condition.wait(until: Date(timeIntervalSinceNow: remaining.seconds))
            }
            swap(&batch, &chunks)
            queuedBytes = 0
            let finishing = stopping
            condition.broadcast()
            condition.unlock()

            var found: [Failure] = []
            var completed: [String: Int] = [:]
            var wrote: [ObjectIdentifier: UInt64] = [:]
            writersLock.lock()
            perform(batch, failures: &found, completed: &completed, wrote: &wrote)
            reports.removeAll(keepingCapacity: true)
            for (id, writer) in writers { reports[id] = WriterReport(writer) }
            writersLock.unlock()

            condition.lock()
            for chunk in batch { done += chunk.records.count + chunk.runs.count }
            failures += found
            completedJobs.merge(completed, uniquingKeysWith: +)
            writtenThrough.merge(wrote) { _, new in new }
            // A writer unregistered since the batch keeps no report.
            for (id, report) in reports where writerReports[id] != nil { writerReports[id] = report }
            if finishing, chunks.isEmpty { ended = true }
            // The next batch is due an interval from here (fixed before anyone sees this one).
            wait = TimedWait(limit: interval, startedAt: elapsed.now)
            // The chunks written go back to the publisher, their buffers' capacity kept.
            while spare.count < Self.spareChunks, var chunk = batch.popLast() {
                chunk.removeAll()
                spare.append(chunk)
            }
            condition.broadcast()
            condition.unlock()
            batch.removeAll(keepingCapacity: true)
            if finishing, ended { return }
            afterEachBatch()
        }
    }

    /// One batch (the chunks handed over since the last, in order): records gathered into their
    /// writers' batches, each written before a job that counts on it and at the end, then the
    /// syncs that are due.
    private func perform(
        _ batch: [Chunk], failures: inout [Failure], completed: inout [String: Int],
        wrote: inout [ObjectIdentifier: UInt64]
    ) {
        var touched: [Int] = []
        var isTouched = [Bool](repeating: false, count: slotWriters.count)
        func write(_ slot: Int) {
            guard let writer = slotWriters[slot] else { return }
            do {
                if writer.hasPending { try writer.writePending() }
                if let last = writer.lastSequence { wrote[ObjectIdentifier(writer)] = last }
            } catch {
                fail(slot, writer, error, into: &failures)
            }
        }
        func writeTouched() {
            for slot in touched {
                isTouched[slot] = false
                write(slot)
            }
            touched.removeAll(keepingCapacity: true)
        }
        func run(_ job: QueuedRun) {
            if let slots = job.slots {
                // Still touched: written again (if more came) at the end of the batch.
                for slot in slots where slot < isTouched.count && isTouched[slot] { write(slot) }
            } else {
                writeTouched()
            }
            do {
                try job.body()
                completed[job.label, default: 0] += 1
            } catch {
                failures.append(.job(label: job.label, description: String(describing: error)))
            }
        }
        for chunk in batch {
            var nextRun = 0
            chunk.bytes.withUnsafeBytes { all in
                for (index, record) in chunk.records.enumerated() {
                    while nextRun < chunk.runs.count, chunk.runs[nextRun].afterRecords <= index {
                        run(chunk.runs[nextRun])
                        nextRun += 1
                    }
                    let slot = record.slot
                    guard slot < slotWriters.count, !failedSlots[slot], let writer = slotWriters[slot] else {
                        continue
                    }
                    do throws(JournalError) {
                        try writer.append(
                            sequence: record.sequence,
                            encodedFrames: UnsafeRawBufferPointer(rebasing: all[record.start..<record.end]))
                        if !isTouched[slot] {
                            isTouched[slot] = true
                            touched.append(slot)
                        }
                    } catch {
                        fail(slot, writer, error, into: &failures)
                    }
                }
            }
            while nextRun < chunk.runs.count {
                run(chunk.runs[nextRun])
                nextRun += 1
            }
        }
        writeTouched()
        for writer in writers.values where writer.stopReason == nil {
            do {
                try writer.syncIfDue()
            } catch {
                fail(slotOfWriterUnderWritersLock(writer), writer, error, into: &failures)
            }
        }
    }

    /// The slot of a registered `writer` (the thread, under the writers' lock).
    private func slotOfWriterUnderWritersLock(_ writer: JournalWriter) -> Int? {
        slotWriters.firstIndex { $0 === writer }
    }

    private func fail(
        _ slot: Int?, _ writer: JournalWriter, _ error: JournalError, into failures: inout [Failure]
    ) {
        if let slot {
            guard !failedSlots[slot] else { return }
            failedSlots[slot] = true
        }
        failures.append(.writer(writer, error))
    }
}
