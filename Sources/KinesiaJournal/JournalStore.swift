import KinesiaSystem
import KinesiaWire
import Synchronization

/// A directory of journals: one directory per topic, one per stream inside, segment files in
/// those (``JournalStream``).
///
/// Every directory is the running user's only (0700, checked as ``PrivateDirectory`` checks a
/// bus directory: an existing directory that others may reach is refused, never `chmod`ed);
/// every file is made 0600.
///
/// ```swift
/// let store = try JournalStore(directory: state + "/journal", policy: JournalPolicy())
/// let writer = try store.openWriter(for: stream)
/// try writer.append(sequence: 0, frames: [topicBytes, payload])
/// for stream in try store.streams() { print(stream) }
/// ```
public final class JournalStore: Sendable {
    /// The store's directory.
    public let directory: String
    /// The policy of every writer it opens.
    public let policy: JournalPolicy
    /// When retention is due (time on ``elapsed``).
    private let retention: Mutex<RetentionSchedule>
    /// The time of the store's schedules (retention, and its writers' syncs), since it was made.
    let elapsed: ElapsedClock
    /// The wall clock, as a duration since the epoch: the segments' ages at the scans the store
    /// starts, and the turns the processes sharing the store take at them.
    private let readWallClock: @Sendable () -> Duration

    /// Opens (making it when missing, with its parents, mode 0700) the store at `directory`.
    ///
    /// - Parameters:
    ///   - clock: What the schedules of retention and syncs are timed on (a ``ManualClock`` in
    ///     tests).
    ///   - wallClock: The time since the epoch (the system's wall clock, ``wallClock()``; a
    ///     value a test moves): the segments' ages at the scans ``enforceRetentionIfDue(closedBytes:)``
    ///     starts, and the turns the processes sharing the store take at them
    ///     (``RetentionTurn``), which every process reads on the same wall clock.
    /// - Throws: ``JournalError/unsafePath(_:)`` for a directory others may reach, a link or
    ///   another owner; ``JournalError/system(path:call:message:)``.
    public init(
        directory: String, policy: JournalPolicy = JournalPolicy(),
        clock: some Clock<Duration> = ContinuousClock(),
        wallClock: @escaping @Sendable () -> Duration = JournalStore.wallClock
    ) throws(JournalError) {
        self.directory = directory
        self.policy = policy
        elapsed = ElapsedClock(clock)
        readWallClock = wallClock
        retention = Mutex(RetentionSchedule(policy))
        let opened = try Self.openPrivate(directory, creating: true)
        opened.close()
    }

    /// The streams of the store, sorted by topic then stream id.
    ///
    /// - Throws: ``JournalError``.
    public func streams() throws(JournalError) -> [JournalStream] {
        var found: [JournalStream] = []
        for topicName in try Self.names(in: directory) {
            guard let topic = JournalStream.topic(directoryName: topicName) else { continue }
            for streamName in try Self.names(in: directory + "/" + topicName) {
                guard let id = JournalStream.streamID(directoryName: streamName) else { continue }
                found.append(JournalStream(topic: topic, streamID: id))
            }
        }
        return found.sorted()
    }

    /// The directory of `stream`'s segments.
    public func path(of stream: JournalStream) -> String {
        directory + "/" + stream.topicDirectoryName + "/" + stream.streamDirectoryName
    }

    /// Opens `stream` for appending, making its directories when missing; the torn tail of its
    /// last segment is cut (``JournalWriter/recovery``).
    ///
    /// - Throws: ``JournalError/inUse(path:)`` when another writer holds it, and the errors of
    ///   the file system.
    public func openWriter(for stream: JournalStream) throws(JournalError) -> JournalWriter {
        let topicPath = directory + "/" + stream.topicDirectoryName
        try Self.openPrivate(topicPath, creating: true).close()
        return try JournalWriter(store: self, stream: stream, path: path(of: stream))
    }

    /// Opens `stream` for reading.
    ///
    /// - Throws: ``JournalError/notAJournal(_:)`` when the store has no such stream.
    public func openReader(for stream: JournalStream) throws(JournalError) -> JournalReader {
        try JournalReader(directory: path(of: stream))
    }

    /// ``enforceRetention(now:)`` when it is due (``RetentionSchedule``): at the first call, then
    /// when the policy's ``JournalPolicy/retentionInterval`` has passed since the last scan, or
    /// as soon as ``JournalPolicy/retentionBytes`` of segments were closed since it; nothing
    /// otherwise. A writer starting a segment calls it with the bytes of the one it closed; a
    /// process calls it when idle (``closedBytes`` 0), so that a quiet stream's segments go by age.
    /// The processes that share a store (every ingest and worker of a deployment, by default)
    /// take turns at the scans that are due by time: a scan covers the whole store, so one
    /// process's scan stands for every other's until the interval has passed again
    /// (``retentionTurnName``). Without the turn, each of N processes scanned the N processes'
    /// streams every interval, all at about the same moment: at 64 cameras, a tenth of the box's
    /// CPU and bursts of hundreds of ms in every answer's latency.
    ///
    /// - Parameter closedBytes: The size of the segment the caller just closed (0: none).
    /// - Returns: Whether it ran.
    @discardableResult
    public func enforceRetentionIfDue(closedBytes: Int = 0) -> Bool {
        let now = elapsed.now
        switch retention.withLock({ $0.due(at: now, closing: closedBytes) }) {
        case nil:
            return false
        case .closedBytes:
            _ = try? enforceRetention(now: readWallClock())
            return true
        case .interval:
            return enforceRetentionInTurn()
        }
    }

    /// The file of the store's directory that holds when the store's last time-based scan ended
    /// (nanoseconds since the epoch, 8 bytes, little-endian), locked (`flock`) by the process
    /// scanning. Not a topic's directory name (``JournalStream/topic(directoryName:)``).
    public static let retentionTurnName = "retention-turn"

    /// Scans unless another process sharing the store is scanning now or scanned less than the
    /// policy's ``JournalPolicy/retentionInterval`` ago (``RetentionTurn``, on the store's wall
    /// clock, which the segments' ages are measured on too), then records the end of the scan.
    /// - Returns: Whether it scanned.
    private func enforceRetentionInTurn() -> Bool {
        guard
            let turn = try? FileDescriptor.open(
                directory + "/" + Self.retentionTurnName, .readWrite.creating.notFollowingLinks)
        else {
            // No turn to take (the directory's file cannot be had): scan, as a lone store does.
            _ = try? enforceRetention(now: readWallClock())
            return true
        }
        guard (try? turn.tryLock()) == true else { return false }
        var lastScanEnded: Duration?
        if let stored = try? turn.read(upTo: 8), stored.count == 8 {
            lastScanEnded = Duration.nanoseconds(
                stored.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) })
        }
        let rule = RetentionTurn(interval: policy.retentionInterval)
        guard rule.isTaken(lastScanEnded: lastScanEnded, now: readWallClock()) else { return false }
        _ = try? enforceRetention(now: readWallClock())
        let ended = readWallClock().components
        let nanoseconds = ended.seconds * 1_000_000_000 + ended.attoseconds / 1_000_000_000
        try? turn.write(withUnsafeBytes(of: nanoseconds.littleEndian) { Array($0) }, at: 0)
        return true
    }

    /// What ``enforceRetention(now:)`` did.
    public struct RetentionResult: Hashable, Sendable {
        /// Segments deleted.
        public var deletedSegments = 0
        /// Bytes freed.
        public var deletedBytes = 0
        /// Bytes the store keeps.
        public var keptBytes = 0
    }

    /// Deletes the segments the policy does not keep (``RetentionPlan``), and the directories
    /// of streams left without a segment. A stream that a writer holds keeps its last segment.
    ///
    /// - Parameter now: The time since the epoch (the clock's by default).
    /// - Throws: ``JournalError`` when the store cannot be listed.
    @discardableResult
    public func enforceRetention(now: Duration = JournalStore.wallClock()) throws(JournalError)
        -> RetentionResult
    {
        var segments: [RetentionPlan.Segment] = []
        for stream in try streams() {
            let path = path(of: stream)
            guard let directory = try? Self.openPrivate(path, creating: false) else { continue }
            let names = SegmentName.sorted((try? directory.descriptor.entryNames()) ?? [])
            let held = Self.isHeld(directory)
            for (index, name) in names.enumerated() {
                guard let file = try? directory.descriptor.open(entry: name, .read.nonBlocking),
                    let status = try? file.status(), let size = try? file.size()
                else { continue }
                segments.append(
                    RetentionPlan.Segment(
                        stream: stream, name: name, bytes: size, changedAt: .nanoseconds(status.changedAt),
                        isBeingWritten: held && index == names.count - 1))
            }
            directory.close()
        }
        let plan = RetentionPlan(
            segments: segments, maximumBytes: policy.maximumBytes, maximumAge: policy.maximumAge, now: now)
        var result = RetentionResult(keptBytes: plan.keptBytes)
        for segment in plan.deleted {
            let path = path(of: segment.stream)
            guard let directory = try? Self.openPrivate(path, creating: false) else { continue }
            if (try? directory.descriptor.removeEntry(segment.name)) != nil {
                result.deletedSegments += 1
                result.deletedBytes += segment.bytes
            }
            // A stream without segments (and without a writer) goes.
            let left = SegmentName.sorted((try? directory.descriptor.entryNames()) ?? [])
            if left.isEmpty, !Self.isHeld(directory) {
                try? directory.descriptor.removeEntry(JournalWriter.lockName)
                directory.close()
                _ = try? FileDescriptor.open(self.directory, .read.directory).removeDirectory(
                    entry: segment.stream.topicDirectoryName + "/" + segment.stream.streamDirectoryName)
            } else {
                directory.close()
            }
        }
        return result
    }

    /// The wall clock, as a duration since the epoch.
    public static func wallClock() -> Duration { WallClock.now }

    // MARK: Files

    /// Whether a writer holds the stream whose directory is open (its lock file is locked).
    static func isHeld(_ directory: borrowing PrivateDirectory) -> Bool {
        guard let lock = try? directory.descriptor.open(entry: JournalWriter.lockName, .readWrite) else {
            return false
        }
        guard let taken = try? lock.tryLock() else { return true }
        if taken { try? lock.unlock() }
        return !taken
    }

    static func openPrivate(_ path: String, creating: Bool) throws(JournalError) -> PrivateDirectory {
        do {
            return try PrivateDirectory.open(path, creating: creating)
        } catch {
            if case .system(_, let errno) = error.reason, errno == .noSuchFile {
                throw JournalError.notAJournal(path)
            }
            throw JournalError.unsafePath(error.description)
        }
    }

    static func names(in path: String) throws(JournalError) -> [String] {
        let directory = try openPrivate(path, creating: false)
        let names: [String]
        do {
            names = try directory.descriptor.entryNames()
        } catch {
            throw JournalError.system(path: path, call: "readdir", message: error.description)
        }
        directory.close()
        return names
    }
}

extension JournalError {
    /// The error for a failed call on `path`: ``diskFull(path:)`` for `ENOSPC` and `EDQUOT`.
    static func from(_ error: Errno, path: String, call: String) -> JournalError {
        if error == .noSpace || error == .quotaExceeded { return .diskFull(path: path) }
        return .system(path: path, call: call, message: error.description)
    }
}
