public import KinesiaClient
public import KinesiaJournal
public import KinesiaService
import KinesiaSystem
public import KinesiaWire

/// What a journaling process (ingest, worker) keeps in its state directory: a journal writer
/// per journaled topic, fed by ``BusPublisher/beforeSend`` (so each message is journaled
/// before it is sent, byte for byte), and the stream identities that make a restarted process
/// resume its streams.
///
/// A journal failure never stops publishing: the first error of each stream is logged as an
/// error (a full disk says so), counted on `health/` (`journalStopped`,
/// `journalErrors.<code>`), and the stream is no longer journaled until the process restarts.
/// Its identity is marked ended at once (in place, so that it works on a full disk): what is
/// published from then on is not in the journal, so the next start begins a new stream instead
/// of numbering other content with numbers already published (counted in `streamsEnded`).
/// A torn tail cut on opening is logged and counted (`journalCutBytes`, `journalRecovered`).
///
/// Damage is told apart and never passed off as a crash: opening a stream checks all its
/// segments (``JournalReader/damageFound``) and the writer's recovery; a torn tail (an
/// interrupted write) is a notice, corruption, a truncated segment, missing records and a
/// deleted segment are warnings naming what was lost. Each is counted on `health/` in
/// `journalDamage` and `journalDamage.<kind>` (``JournalDamage/Kind``), and so is a segment
/// deleted under a running writer.
///
/// ```swift
/// let journal = try PublishJournal(options: options, environment: env, log: log)
/// let stream = try journal.attach([topic], identity: "pose+cam0", session: source, to: publisher)
/// journal.install(on: publisher)
/// ```
public final class PublishJournal {
    /// The state directory.
    public let stateDirectory: String
    /// The journals.
    public let store: JournalStore
    private let identities: StreamIdentityFiles
    private let newSession: Bool
    private let log: Logger
    private var writers: [Topic: JournalWriter] = [:]
    private var keys: [String: StreamIdentity] = [:]
    /// The identity key of each attached topic.
    private var keyOfTopic: [Topic: String] = [:]
    private var streamsEnded = 0
    /// The interval policy's syncs, of the whole store at once, off the publishing thread.
    private let groupSync: JournalGroupSync?
    private var errors: [String: Int] = [:]
    private var cutBytes = 0
    private var recovered = 0
    private var damageOnOpening: [JournalDamage] = []
    private var toldWriterDamage: [Topic: Int] = [:]
    /// With ``writesBehind``: the thread that encodes, writes and syncs the records; every
    /// writer is used under its lock only.
    private var queue: JournalWriteQueue?
    /// With ``writesBehind``: the topics whose writer stopped (as the queue reported).
    private var stoppedTopics: Set<Topic> = []
    /// With ``writesBehind``: each attached topic's slot in the queue (its records are handed
    /// over by it: one lookup, no reference counted).
    private var slotOfTopic: [Topic: Int] = [:]
    /// Streams taken from the holder of an older assignment (``fencingEpoch``).
    private var streamsFenced = 0
    /// The last topic journaled, with its writer (or its slot, ``writesBehind``): a camera's
    /// ingest journals one topic, so one comparison stands for a lookup. Forgotten whenever a
    /// topic is attached again.
    private var lastRecorded: (topic: Topic, writer: JournalWriter?, slot: Int?)?

    /// The epoch of the assignment this journal's streams are written under (a pool worker's
    /// session), or `nil`. With one, a stream whose lock the holder of an older assignment
    /// still holds (a worker paused past its lease) is fenced and taken over
    /// (``JournalStore/openWriter(for:epoch:)``), counted in `streamsFenced`; without, a held
    /// lock refuses the stream.
    public var fencingEpoch: UInt64?

    /// Whether this journal's holder still has the right to its streams (a pool worker's
    /// session: its worker's lease); `nil`: always. A writer that fails once its holder has lost
    /// that right (its streams fenced away by a newer holder: a worker paused past its lease,
    /// back) ends no stream: the streams are the newer holder's, which journals them on. Marking
    /// them ended in the state directory, which the holders share, would make the newer holder's
    /// next start begin a new stream in the middle of a run (counted in `streamsLost`).
    public var holdsStreams: (@Sendable () -> Bool)?
    /// Streams whose writer failed after another holder took them (``holdsStreams``).
    private var streamsLost = 0

    /// Opens the state directory (made owner-only when missing; refused when others may write
    /// it) and its journal store.
    ///
    /// - Throws: ``PublishJournalError/unusable(_:)`` naming what is wrong with the directory.
    public init(options: JournalOptions, environment: [String: String], bus: String, log: Logger)
        throws(PublishJournalError)
    {
        let state = try options.stateDirectory(environment: environment, bus: bus)
        do {
            try PrivateDirectory.open(state, creating: true).close()
        } catch {
            throw PublishJournalError.unusable("state directory: \(error)")
        }
        stateDirectory = state
        do {
            store = try JournalStore(directory: state + "/journal", policy: options.policy)
        } catch {
            throw PublishJournalError.unusable("journal: \(error)")
        }
        identities = try StreamIdentityFiles(state: state)
        newSession = options.newSession
        self.log = log
        if case .interval(let interval) = options.policy.sync {
            // A scan of the whole store for retention (every stream's directory: tens of ms at
            // 64 cameras) is the syncing thread's, not the publishing thread's.
            groupSync = JournalGroupSync(interval: interval) { [store] in store.enforceRetentionIfDue() }
            groupSync?.start()
        } else {
            groupSync = nil
        }
    }

    deinit { groupSync?.stop() }

    /// What ``attach(_:identity:session:to:)`` resolved.
    public struct Attached: Hashable, Sendable {
        /// The stream id the topics are published on.
        public var stream: StreamID
        /// Whether it resumes the stream of an earlier run.
        public var resumed: Bool
        /// The last sequence number journaled per topic (`nil`: none).
        public var lastSequences: [Topic: UInt64]
    }

    /// Journals `topics` under the stream identity `key`: resumes the stored stream when it is
    /// the same `session` (publishing on with the next sequence numbers), or starts a new one.
    ///
    /// - Throws: ``PublishJournalError/unusable(_:)`` when a journal is held by another process or cannot
    ///   be opened.
    /// - Parameters:
    ///   - topics: The topics, published on one stream.
    ///   - key: The identity's file name (`pose+cam0`, `session+cam0+left`).
    ///   - session: What the stream is the stream of (see ``StreamIdentity``).
    ///   - resumable: `false` for a live source, whose next run is never the same stream.
    ///   - newStream: A new stream to start now (a worker that cannot rebuild what it published
    ///     starts a new run mid-way); the topics' earlier writers are flushed and replaced.
    ///   - continuing: The stream to take when the stored identity does not resume (none
    ///     stored, another session), instead of a new random one: a run another worker began,
    ///     rebuilt here from its first pose with the same numbers. Never a stream this state
    ///     directory ended.
    ///   - publisher: The publisher of the topics.
    @discardableResult
    public func attach(
        _ topics: [Topic], identity key: String, session: String, resumable: Bool = true,
        newStream: StreamID? = nil, continuing: StreamID? = nil, to publisher: BusPublisher
    ) throws(PublishJournalError) -> Attached {
        if holdsStreams?() == false {
            throw .unusable("journal of \(key): its holder's lease lapsed (its streams may be another's now)")
        }
        let stored = try identities.load(key)
        let given = continuing.flatMap { $0 == stored?.stream ? nil : $0 }
        var (identity, resumed) = StreamIdentity.resolve(
            stored: stored, session: session, newSession: newSession || !resumable,
            random: { given ?? .random() })
        if let newStream {
            (identity, resumed) = (StreamIdentity(stream: newStream, session: session), false)
        }
        if let stored, stored.ended, !resumed, newStream == nil, stored.session == session {
            log.notice("stream \(stored.stream) (\(key)) ended in an earlier run: a new stream starts")
        }
        if !resumed || stored != identity { try identities.save(identity, as: key) }
        if writesBehind, queue == nil {
            // Retention is scanned on the queue's thread (it also is when its writers close segments).
            queue = JournalWriteQueue(interval: Self.writeBehind) { [store] in store.enforceRetentionIfDue() }
        }
        queue?.drain()
        lastRecorded = nil
        for topic in topics {
            slotOfTopic[topic] = nil
            guard let old = writers.removeValue(forKey: topic) else { continue }
            if let queue {
                _ = try? queue.withWriters { () throws(JournalError) in
                    queue.unregister(old)
                    try old.flush()
                }
            } else {
                try? old.flush()
            }
            stoppedTopics.remove(topic)
        }
        keys[key] = identity
        var lastSequences: [Topic: UInt64] = [:]
        for topic in topics {
            let writer: JournalWriter
            do {
                let stream = JournalStream(topic: topic, streamID: identity.stream)
                if let fencingEpoch {
                    let opened = try store.openWriter(for: stream, epoch: fencingEpoch)
                    writer = opened.writer
                    if let held = opened.fenced {
                        streamsFenced += 1
                        log.warning(
                            "journal of \(topic) stream \(identity.stream): taken from the holder of epoch \(held) "
                                + "(its lease lapsed; epoch \(fencingEpoch) now)")
                    }
                    if let leftBehind = opened.leftBehind {
                        errors["fencedLeftBehind", default: 0] += 1
                        log.warning("\(leftBehind): the fenced holder's old directory could not be removed")
                    }
                } else {
                    writer = try store.openWriter(for: stream)
                }
            } catch {
                throw PublishJournalError.unusable("journal of \(topic): \(error)")
            }
            if writer.recovery.cutBytes > 0 || writer.recovery.damagedRanges > 0 {
                recovered += 1
                cutBytes += writer.recovery.cutBytes
                let text = "journal of \(topic) stream \(identity.stream): \(writer.recovery)"
                if writer.recovery.isOnlyATornTail {
                    log.notice(text + " (an interrupted write)")
                } else {
                    log.warning(text + " (corruption: records were lost)")
                }
            }
            writer.groupSync = groupSync
            writer.writesBehind = writesBehind
            writer.syncsInGroup = groupSync != nil
            if let queue { slotOfTopic[topic] = queue.withWriters { queue.register(writer) } }
            // The segments before the last are checked by the replay server's readers when they
            // are first read (``JournalReplaySource/damageFound``), not here: reading every
            // segment of every stream at start would make a restart as slow as the journal is
            // large, and a restarted worker must answer live within a second.
            damageOnOpening += writer.recovery.damage
            writers[topic] = writer
            keyOfTopic[topic] = key
            lastSequences[topic] = writer.lastSequence
            publisher.continueStream(identity.stream, on: topic, after: resumed ? writer.lastSequence : nil)
        }
        return Attached(stream: identity.stream, resumed: resumed, lastSequences: lastSequences)
    }

    /// Whether the records are written behind, in batches, by a thread of their own
    /// (``JournalWriteQueue``: the publishing thread only hands them over): set before
    /// attaching; then call ``writeAndSyncIfDue(now:)`` on every turn of the loop. For a
    /// publisher that publishes the same records again after a `kill -9` (a worker).
    public var writesBehind = false

    /// How long a record gathered by ``writesBehind`` waits, at most, before it is written
    /// (plus a turn of the loop): one write per stream per interval instead of one per record,
    /// and what a `kill -9` loses from the page cache, to be published again by the rebuild.
    /// 100 ms: a worker of 64 cameras journals 256 streams, and at 100,000 poses/s writing them
    /// every 20 ms cost 9 % more of its CPU (361 against 330 ticks for 500,000 poses, three
    /// runs each, alternated); a replay reader waits at most this long for records not yet
    /// written, and the batch (about 6 MiB at 175,000 poses/s) stays under the queue's limit.
    public static let writeBehind = Duration.milliseconds(100)

    private var lastWrite: Duration = .zero

    /// Every ``writeBehind`` (`now` on the caller's clock; call it on every turn of the loop):
    /// writes the gathered records of every writer, then syncs what the fsync policy says is
    /// due (``syncIfDue()``). Cheap between two.
    /// With ``writesBehind``, the queue's thread writes and syncs: this hands over what the
    /// turn gathered (on every call), reports what the thread found wrong and enforces retention.
    public func writeAndSyncIfDue(now: Duration) {
        // What the turn gathered goes to the queue's thread in one lock.
        queue?.handOver()
        guard now - lastWrite >= Self.writeBehind else { return }
        lastWrite = now
        if queue != nil {
            takeQueueFailures()
            return
        }
        writePending()
        syncIfDue()
    }

    /// Writes the gathered records of every writer (without ``writesBehind``: the queue's
    /// thread writes them otherwise).
    private func writePending() {
        for (topic, writer) in writers where writer.hasPending {
            do { try writer.writePending() } catch { failed(topic, error) }
        }
    }

    /// Writes the gathered records of `topic`'s writer before its journal is read from `from`
    /// on. With ``writesBehind``, waits for the queue's thread to write what was handed over
    /// (at most ``writeBehind`` of records and their writes), and only when the thread has not
    /// written `from` yet: a reader behind the live edge never waits.
    public func writePending(_ topic: Topic, from: UInt64 = 0) {
        if let queue {
            guard let writer = writers[topic], let handed = queue.handedOver(writer), from <= handed else {
                return
            }
            if let written = queue.written(writer), from <= written { return }
            queue.drain()
            takeQueueFailures()
            return
        }
        guard let writer = writers[topic], writer.hasPending else { return }
        do { try writer.writePending() } catch { failed(topic, error) }
    }

    /// Runs `job` once every record journaled before it is written (only those of `topics` when
    /// given: what the job counts on): on the queue's thread, in order, with ``writesBehind`` (so
    /// the publishing thread does not wait for a file), before any record journaled after it;
    /// now, after writing them, otherwise. `failure` is told what it threw, on the publishing
    /// thread.
    public func afterRecordsWritten(
        label: String, of topics: [Topic]? = nil, _ job: @escaping @Sendable () throws -> Void,
        failure: @escaping (String) -> Void
    ) {
        jobFailureHandlers[label] = failure
        if let queue {
            queue.run(label: label, after: topics.map { $0.compactMap { slotOfTopic[$0] } }, job)
            return
        }
        writePending()
        do {
            try job()
            jobsDone[label, default: 0] += 1
        } catch {
            failure(String(describing: error))
        }
    }

    /// The jobs of `label` (``afterRecordsWritten(label:_:failure:)``) that ran without an error.
    public func completedJobs(_ label: String) -> Int {
        jobsDone[label, default: 0] + (queue?.completed(label) ?? 0)
    }

    private var jobFailureHandlers: [String: (String) -> Void] = [:]
    private var jobsDone: [String: Int] = [:]

    /// What the queue's thread found wrong, reported as if it happened here.
    private func takeQueueFailures() {
        guard let queue else { return }
        for failure in queue.takeFailures() {
            switch failure {
            case .writer(let writer, let error):
                let topic = writer.stream.topic
                guard writers[topic] === writer else { continue }
                stoppedTopics.insert(topic)
                failed(topic, error)
            case .job(let label, let description):
                jobFailureHandlers[label]?(description)
            }
        }
    }

    /// The last sequence number journaled on `topic`'s stream `stream` by this process (gathered
    /// records included), `nil` when it journals no such stream or the writer stopped.
    public func lastJournaled(_ topic: Topic, stream: StreamID) -> UInt64? {
        guard let writer = writers[topic], writer.stream.streamID == stream else { return nil }
        if let queue {
            guard !stoppedTopics.contains(topic) else { return nil }
            return queue.handedOver(writer)
        }
        guard writer.stopReason == nil else { return nil }
        return writer.lastSequence
    }

    /// The journal writer of an attached topic (tests inject write failures through it).
    func writer(of topic: Topic) -> JournalWriter? { writers[topic] }

    /// Makes `publisher` journal every message of an attached topic before sending it.
    public func install(on publisher: BusPublisher) {
        publisher.beforeSend = { [unowned self] topic, header, frames in
            self.record(topic: topic, sequence: header.sequence, frames: frames)
        }
    }

    /// Journals one message (a topic that is not attached is not journaled).
    public func record(topic: Topic, sequence: UInt64, frames: [[UInt8]]) {
        if lastRecorded?.topic != topic {
            lastRecorded = queue == nil ? (topic, writers[topic], nil) : (topic, nil, slotOfTopic[topic])
        }
        if let queue {
            guard let slot = lastRecorded?.slot else { return }
            guard stoppedTopics.isEmpty || !stoppedTopics.contains(topic) else { return }
            queue.append(slot: slot, sequence: sequence, frames: frames)
            return
        }
        guard let writer = lastRecorded?.writer else { return }
        guard writer.stopReason == nil else { return }
        do {
            try writer.append(sequence: sequence, frames: frames)
        } catch {
            failed(topic, error)
        }
    }

    /// Syncs what the fsync policy says is due, and enforces the store's retention when its
    /// interval has passed (``JournalStore/enforceRetentionIfDue(closedBytes:)``: a stream that
    /// starts no segment still loses its old ones by age). Call it when idle. With a thread of
    /// the journal's (the write-behind queue's, the group sync's), that thread enforces
    /// retention instead, after each of its rounds: a scan reads every stream's directory of
    /// the store, which the publishing thread must not wait for.
    public func syncIfDue() {
        if queue != nil {
            // The queue's thread syncs and enforces retention; the damage its writers found is
            // told with the counters.
            takeQueueFailures()
            return
        }
        for (topic, writer) in writers where writer.stopReason == nil {
            do { try writer.syncIfDue() } catch { failed(topic, error) }
            tellWriterDamage(topic, writer)
        }
        // With a syncing thread, retention is its (after each round of syncs).
        if groupSync == nil { store.enforceRetentionIfDue() }
    }

    /// Lets every stream go without writing or syncing anything more and without marking any
    /// ended (locks released): for a holder whose streams another worker now writes (a pool
    /// worker's session fenced past its lease). What it gathered and had not written is dropped:
    /// the new holder regenerates it from the poses.
    public func abandon() {
        queue?.abandon()
        groupSync?.stop()
        for writer in writers.values { writer.abandon() }
    }

    /// Syncs everything and releases the streams' locks (at a graceful stop: another process,
    /// or another service of this one, may take them at once); marks the identities `ended`
    /// when the streams are over (an ingest at the end of its source), so the next start
    /// begins new ones. Nothing is journaled after it.
    public func finish(ended: Bool) {
        if let queue {
            queue.stop()
            takeQueueFailures()
        }
        groupSync?.stop()
        groupSync?.syncNow()
        for (topic, writer) in writers where writer.stopReason == nil {
            do { try writer.flush() } catch { failed(topic, error) }
            tellWriterDamage(topic, writer)
        }
        for writer in writers.values { writer.close() }
        guard ended, holdsStreams?() ?? true else { return }
        for (key, var identity) in keys {
            identity.ended = true
            do { try identities.save(identity, as: key) } catch { log.warning("\(error)") }
        }
    }

    /// The `journal*` counters of `health/`: `journalRecords`, `journalBytes`,
    /// `journalSyncs`, `journalSegments`, `journalStopped` (streams no longer journaled),
    /// `journalErrors` and `journalErrors.<code>` (`diskFull`...), `journalRecovered`
    /// (streams whose tail was cut on opening), `journalCutBytes`, and `journalDamage` with
    /// `journalDamage.<kind>` (`tornTail`, `corruption`, `truncatedSegment`, `missingRecords`,
    /// `deletedSegment`: ``JournalDamage/Kind``).
    public var healthCounters: [String: Int] {
        guard let queue else { return counters(writers.values.map(JournalWriteQueue.WriterReport.init)) }
        takeQueueFailures()
        // The thread's reports, not the writers: a batch under way (hundreds of syncs once a
        // second) would hold the live loop up for as long as it takes.
        let reports = queue.reports
        for (topic, writer) in writers {
            if let report = reports[ObjectIdentifier(writer)] { tellDamage(topic, report.damage) }
        }
        var values = counters(writers.values.compactMap { reports[ObjectIdentifier($0)] })
        values["journalQueueWaits"] = queue.waits
        return values
    }

    /// The counters of the writers as `reports` give them.
    private func counters(_ reports: [JournalWriteQueue.WriterReport]) -> [String: Int] {
        var values: [String: Int] = [
            "journalRecords": 0, "journalBytes": 0, "journalSyncs": 0, "journalSegments": 0,
            "journalStopped": 0, "journalRecovered": recovered, "journalCutBytes": cutBytes,
            "journalErrors": errors.values.reduce(0, +), "streamsEnded": streamsEnded,
        ]
        if fencingEpoch != nil {
            values["streamsFenced"] = streamsFenced
            values["streamsLost"] = streamsLost
        }
        if let groupSync {
            values["journalSyncs"] = groupSync.syncs
            values["journalSyncFailures"] = groupSync.syncFailures
        }
        for report in reports {
            values["journalRecords", default: 0] += report.counters.records
            values["journalBytes", default: 0] += report.counters.bytes
            values["journalSyncs", default: 0] += report.counters.syncs
            values["journalSegments", default: 0] += report.counters.segments
            if report.stopped { values["journalStopped", default: 0] += 1 }
        }
        for (code, count) in errors { values["journalErrors.\(code)"] = count }
        values.merge((damageOnOpening + reports.flatMap(\.damage)).counters) { _, damage in damage }
        return values
    }

    private func tellWriterDamage(_ topic: Topic, _ writer: JournalWriter) {
        tellDamage(topic, writer.damage)
    }

    /// Logs the damage of `topic`'s writer not told yet.
    private func tellDamage(_ topic: Topic, _ damage: [JournalDamage]) {
        let told = toldWriterDamage[topic, default: 0]
        guard damage.count > told else { return }
        for found in damage[told...] {
            log.warning("journal of \(topic): \(found); journaling goes on in a new segment")
        }
        toldWriterDamage[topic] = damage.count
    }

    private func failed(_ topic: Topic, _ error: JournalError) {
        if let holder = newerHolder(of: topic) {
            streamsLost += 1
            log.warning(
                "journal of \(topic) stopped: \(error); the stream is \(holder)'s now: it goes on there")
            return
        }
        errors[error.code, default: 0] += 1
        log.error(
            "journal of \(topic) stopped: \(error); publishing goes on without it (restart to journal again)")
        guard let key = keyOfTopic[topic], keys[key]?.ended == false else { return }
        keys[key]?.ended = true
        streamsEnded += 1
        do {
            try identities.markEnded(key)
            log.error(
                "stream \(keys[key]!.stream) (\(key)) will not be resumed: what follows is not journaled, "
                    + "so the next start begins a new stream")
        } catch {
            log.error("\(error): the next start may resume a stream whose last numbers were not journaled")
        }
    }

    /// The holder that took `topic`'s stream from this one, named, when one did: the stream's
    /// holder file names a newer epoch than ``fencingEpoch``, or this journal's holder no longer
    /// holds (``holdsStreams``).
    private func newerHolder(of topic: Topic) -> String? {
        guard let fencingEpoch, let key = keyOfTopic[topic], let stream = keys[key]?.stream else {
            return nil
        }
        if let holder = store.holderEpoch(of: JournalStream(topic: topic, streamID: stream)),
            holder > fencingEpoch
        {
            return "the holder of epoch \(holder)"
        }
        return holdsStreams?() == false ? "another holder (this one's lease lapsed)" : nil
    }
}
