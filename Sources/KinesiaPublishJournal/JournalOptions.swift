public import KinesiaJournal
import KinesiaMotion

/// The journal options of a journaling process (`kinesia ingest` and `kinesia worker`): `--state DIR`, `--no-journal`,
/// `--fsync always|never|MS`, `--journal-max-bytes`, `--journal-max-age`, `--new-session`.
///
/// ```swift
/// var options = JournalOptions()
/// options.state = "/var/lib/kinesia"
/// let directory = try options.stateDirectory(environment: env)
/// ```
public struct JournalOptions: Hashable, Sendable {
    /// `--state`: the state directory (`nil`: ``defaultStateDirectory(environment:)``).
    public var state: String?
    /// `--no-journal`: journal nothing (and keep no stream identity).
    public var disabled = false
    /// `--fsync`.
    public var fsync = JournalPolicy.defaultSync
    /// `--journal-max-bytes`.
    public var maximumBytes = ByteCount(JournalPolicy.defaultMaximumBytes)
    /// `--journal-max-age`.
    public var maximumAge = AgeLimit(JournalPolicy.defaultMaximumAge)
    /// `--new-session`: start new streams even when the state directory holds streams to resume.
    public var newSession = false

    /// The size of a journal segment (`nil`: ``JournalPolicy``'s default, 16 MiB).
    public var segmentBytes: Int?

    /// Every default; `fsync` and `segmentBytes` are the command's own (``workerSync`` and
    /// ``workerSegmentBytes`` for a worker).
    public init(fsync: JournalPolicy.Sync = JournalPolicy.defaultSync, segmentBytes: Int? = nil) {
        self.fsync = fsync
        self.segmentBytes = segmentBytes
    }

    /// A worker's segment size: 1 MiB. A restarted worker reads and checks the last segment of
    /// each of its streams before it publishes again (two per session: 256 for 64 cameras), so
    /// its restart takes as long as those segments are large: 16 MiB segments, full after
    /// about 40 minutes of snapshots, made an hour-long session's restart seconds long.
    public static let workerSegmentBytes = 1 << 20

    /// A worker's `--fsync` default: 5000 ms. What a worker journals is derived from the poses
    /// (a rebuild regenerates the same events from the ingest's journal, synced every 200 ms,
    /// and passes over a checkpoint ahead of what its journal kept), so a power cut that takes
    /// its last seconds costs a rebuild, not data. Syncing its hundreds of streams (256 for 64
    /// cameras) every second took about 5 % of a journaled worker's processor at 80,000 poses/s,
    /// and the device's completions interrupt the live analysis; every 5 s, a fifth of that.
    public static let workerSync = JournalPolicy.Sync.interval(.seconds(5))

    /// The policy the options give.
    public var policy: JournalPolicy {
        JournalPolicy(
            sync: fsync,
            // A small --journal-max-bytes still holds eight segments.
            segmentBytes: segmentBytes.map { max(64 << 10, min($0, maximumBytes.value / 8)) },
            maximumBytes: maximumBytes.value, maximumAge: maximumAge.value)
    }

    /// The state directory: `--state`, else one per bus in `$XDG_STATE_HOME/kinesia` (or
    /// `$HOME/.local/state/kinesia`): `bus-` and the bus's directory or address with every
    /// character but letters, digits, `.` and `-` as `_` (`bus-_run_user_1000_kinesia`), so
    /// that two buses never share streams.
    /// - Throws: ``PublishJournalError/noStateDirectory`` when no directory can be found,
    ///   ``PublishJournalError/relativeStateDirectory(_:)`` when the one given is relative.
    public func stateDirectory(environment: [String: String], bus: String) throws(PublishJournalError)
        -> String
    {
        guard
            let path = state
                ?? Self.defaultStateDirectory(environment: environment).map({
                    $0 + "/" + Self.busDirectoryName(bus)
                })
        else { throw .noStateDirectory }
        guard path.hasPrefix("/") else { throw .relativeStateDirectory(path) }
        return path
    }

    /// The default state directory's name for the bus `bus` (its description).
    public static func busDirectoryName(_ bus: String) -> String {
        "bus-"
            + String(
                bus.unicodeScalars.map { scalar in
                    scalar.isASCII
                        && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "."
                            || scalar == "-")
                        ? Character(scalar) : "_"
                })
    }

    /// `$XDG_STATE_HOME/kinesia` or `$HOME/.local/state/kinesia` (`nil`: neither is set).
    public static func defaultStateDirectory(environment: [String: String]) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/kinesia" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/kinesia" }
        return nil
    }
}

/// A size with an optional unit: `1048576`, `512K`, `500M`, `2G` (powers of 1024).
public struct ByteCount: Hashable, Sendable, CustomStringConvertible {
    /// Bytes.
    public var value: Int

    /// Wraps a size.
    public init(_ value: Int) { self.value = value }

    /// Parses a positive size.
    public init?(parsing argument: String) {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var text = Substring(argument)
        var unit = 1
        if let last = text.last?.uppercased().first, let scale = units[last] {
            unit = scale
            text = text.dropLast()
        }
        guard let number = Int(text), number > 0, number <= Int.max / unit else { return nil }
        value = number * unit
    }

    /// `2G`, `500M` or bytes.
    public var description: String {
        for (suffix, scale) in [("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)]
        where value % scale == 0 {
            return "\(value / scale)\(suffix)"
        }
        return String(value)
    }
}

/// An age: `90s`, `30m`, `12h`, `30d`.
public struct AgeLimit: Hashable, Sendable, CustomStringConvertible {
    /// The age.
    public var value: Duration

    /// Wraps an age.
    public init(_ value: Duration) { self.value = value }

    /// Parses a positive age with a unit (`s`, `m`, `h`, `d`).
    public init?(parsing argument: String) {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let last = argument.last, let scale = units[last], let number = Int64(argument.dropLast()),
            number > 0, number <= Int64.max / scale / 1_000_000_000
        else { return nil }
        value = .seconds(number * scale)
    }

    /// `30d`, `12h`...
    public var description: String {
        let seconds = value.components.seconds
        for (suffix, scale) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds % scale == 0 {
            return "\(seconds / scale)\(suffix)"
        }
        return "\(seconds)s"
    }
}
