/// How a journal syncs to the device, when it starts a new segment and what it keeps.
///
/// ```swift
/// let policy = JournalPolicy(sync: .interval(.milliseconds(200)), maximumBytes: 2 << 30,
///                            maximumAge: .seconds(30 * 86_400))
/// ```
public struct JournalPolicy: Hashable, Sendable {
    /// When appended records are forced to the device (`fdatasync`).
    public enum Sync: Hashable, Sendable, CustomStringConvertible {
        /// After every record: a power cut loses nothing appended, at the cost of a device
        /// flush per record.
        case always
        /// Never: the kernel writes back when it likes (about 30 s on Linux); a process crash
        /// loses nothing, a power cut may lose that much.
        case never
        /// At most this long after a record is appended (checked on each append and by
        /// ``JournalWriter/syncIfDue()``, which the process calls when idle).
        case interval(Duration)

        /// `always`, `never` or the interval in milliseconds (`200`), as `--fsync` takes it.
        public var description: String {
            switch self {
            case .always: "always"
            case .never: "never"
            case .interval(let interval):
                "\(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)"
            }
        }

        /// Parses `always`, `never` or a positive number of milliseconds.
        public init?(parsing text: String) {
            switch text {
            case "always": self = .always
            case "never": self = .never
            default:
                guard let milliseconds = Int(text), milliseconds > 0, milliseconds <= 3_600_000 else {
                    return nil
                }
                self = .interval(.milliseconds(milliseconds))
            }
        }
    }

    /// The default sync: every 200 ms at most.
    public static let defaultSync = Sync.interval(.milliseconds(200))
    /// The default total size kept per store: 2 GiB.
    public static let defaultMaximumBytes = 2 << 30
    /// The default age kept: 30 days.
    public static let defaultMaximumAge = Duration.seconds(30 * 86_400)

    /// When records are forced to the device.
    public var sync: Sync
    /// The size a segment reaches before the next record starts a new one.
    public var segmentBytes: Int
    /// The most bytes all the store's segments may take: the oldest closed segments are
    /// deleted beyond it.
    public var maximumBytes: Int
    /// The oldest a closed segment may be (by its last change) before it is deleted.
    public var maximumAge: Duration
    /// How often, at most, a writer starting a segment has the store's retention enforced: the
    /// scan reads every segment of every stream, so a process that starts hundreds of streams at
    /// once (a worker of 64 cameras has 256) must not scan at each one (that stalled its
    /// analysis for seconds). Between scans the store may exceed its limits by what is written.
    public var retentionInterval: Duration

    /// A policy.
    /// - Parameters:
    ///   - sync: When to `fdatasync`.
    ///   - segmentBytes: The segment size (by default 16 MiB, or an eighth of `maximumBytes`
    ///     when that is smaller, at least 64 KiB).
    ///   - maximumBytes: The store's size limit.
    ///   - maximumAge: The store's age limit.
    ///   - retentionInterval: The shortest time between two retention scans writers start.
    public init(
        sync: Sync = defaultSync, segmentBytes: Int? = nil, maximumBytes: Int = defaultMaximumBytes,
        maximumAge: Duration = defaultMaximumAge, retentionInterval: Duration = .seconds(10)
    ) {
        self.retentionInterval = retentionInterval
        self.sync = sync
        self.segmentBytes = segmentBytes ?? max(64 << 10, min(16 << 20, maximumBytes / 8))
        self.maximumBytes = maximumBytes
        self.maximumAge = maximumAge
    }
}

/// When a writer with a ``JournalPolicy/Sync`` policy syncs: a state machine with time passed
/// in (no clock, no I/O).
///
/// ```swift
/// var schedule = SyncSchedule(.interval(.milliseconds(200)))
/// schedule.appended(at: .milliseconds(0))     // true: the first record syncs at once
/// schedule.appended(at: .milliseconds(50))    // false: not yet
/// schedule.isDue(at: .milliseconds(250))      // true
/// ```
public struct SyncSchedule: Hashable, Sendable {
    /// The policy.
    public let policy: JournalPolicy.Sync
    private var lastSync: Duration?
    /// Whether records were appended since the last sync.
    public private(set) var hasUnsyncedRecords = false

    /// A schedule with nothing unsynced.
    public init(_ policy: JournalPolicy.Sync) {
        self.policy = policy
    }

    /// Records an append at `now`.
    /// - Returns: Whether to sync now.
    public mutating func appended(at now: Duration) -> Bool {
        hasUnsyncedRecords = true
        return isDue(at: now)
    }

    /// Whether unsynced records are due for a sync at `now`.
    public func isDue(at now: Duration) -> Bool {
        guard hasUnsyncedRecords else { return false }
        switch policy {
        case .always: return true
        case .never: return false
        case .interval(let interval):
            guard let lastSync else { return true }
            return now - lastSync >= interval
        }
    }

    /// Records a sync at `now`.
    public mutating func synced(at now: Duration) {
        lastSync = now
        hasUnsyncedRecords = false
    }
}
