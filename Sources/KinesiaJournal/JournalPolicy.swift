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
    /// How often, at most, the store's retention is enforced on time alone: the scan reads every
    /// segment of every stream, so a process that starts hundreds of streams at once (a worker of
    /// 64 cameras has 256) must not scan at each one (that stalled its analysis for seconds).
    /// Writers that close segments also have it enforced once ``retentionBytes`` were closed
    /// since the last scan, whatever the time (``RetentionSchedule``).
    public var retentionInterval: Duration

    /// The bytes of closed segments after which retention is enforced before
    /// ``retentionInterval`` has passed: a segment, or a sixteenth of ``maximumBytes`` when that
    /// is larger. The store exceeds ``maximumBytes`` by less than this plus the segments being
    /// written, however fast it is written (on time alone, a 256 KiB store written at 4 MB/s
    /// reached 40 MB before its next scan).
    public var retentionBytes: Int { max(segmentBytes, maximumBytes / 16) }

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

/// When a store enforces its retention: a state machine with time passed in (no clock, no I/O).
///
/// A scan is due at the first request, then when ``JournalPolicy/retentionInterval`` has passed
/// since the last one (a quiet stream's old segments go by age), or as soon as writers closed
/// ``JournalPolicy/retentionBytes`` since it (a fast stream stays within the size limit).
///
/// ```swift
/// var schedule = RetentionSchedule(interval: .seconds(10), bytes: 65_536)
/// schedule.isDue(at: .seconds(0))                            // true: the first request scans
/// schedule.isDue(at: .seconds(1), closing: 40_000)           // false
/// schedule.isDue(at: .seconds(2), closing: 40_000)           // true: 80,000 bytes closed
/// schedule.isDue(at: .seconds(5))                            // false
/// schedule.isDue(at: .seconds(12))                           // true: 10 s since the last scan
/// ```
public struct RetentionSchedule: Hashable, Sendable {
    /// The longest time between two scans that are asked for.
    public let interval: Duration
    /// The bytes closed after which a scan is due whatever the time.
    public let bytes: Int
    private var lastScan: Duration?
    private var closedSinceScan = 0

    /// A schedule whose first request scans.
    public init(interval: Duration, bytes: Int) {
        self.interval = interval
        self.bytes = bytes
    }

    /// A schedule for `policy`.
    public init(_ policy: JournalPolicy) {
        self.init(interval: policy.retentionInterval, bytes: policy.retentionBytes)
    }

    /// Why a scan is due.
    public enum Reason: Hashable, Sendable {
        /// The first request, or ``interval`` passed since the last scan: a scan that another
        /// process sharing the store has just done stands for it (``JournalStore``).
        case interval
        /// Writers closed ``bytes`` since the last scan: the store may be over its size limit
        /// now, whoever scanned last.
        case closedBytes
    }

    /// Records a request at `now` from a writer that closed `closedBytes` (a segment it ended;
    /// 0 for none) and tells whether to scan now; a scan it says is due counts as done.
    public mutating func isDue(at now: Duration, closing closedBytes: Int = 0) -> Bool {
        due(at: now, closing: closedBytes) != nil
    }

    /// Records a request at `now` from a writer that closed `closedBytes` and tells why a scan
    /// is due now (`nil`: none is); a scan it says is due counts as done.
    public mutating func due(at now: Duration, closing closedBytes: Int = 0) -> Reason? {
        closedSinceScan += closedBytes
        let bytesDue = closedSinceScan >= bytes
        if let lastScan, now - lastScan < interval, !bytesDue { return nil }
        lastScan = now
        closedSinceScan = 0
        return bytesDue ? .closedBytes : .interval
    }
}
