/// Why a journal operation failed.
///
/// ```swift
/// do {
///     try writer.append(sequence: 7, frames: frames)
/// } catch .diskFull(let path) {
///     log.error("journal stopped: \(path) is full")
/// } catch {
///     log.error("\(error)")
/// }
/// ```
public enum JournalError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A directory or file that others may reach, a link, or another owner: the sentence says
    /// which.
    case unsafePath(String)
    /// A system call failed: the path, the call and `errno`'s words.
    case system(path: String, call: String, message: String)
    /// `ENOSPC` or `EDQUOT`: the file system (or the user's quota) is full. Journaling stops.
    case diskFull(path: String)
    /// Another writer (this process or another) holds the stream.
    case inUse(path: String)
    /// A sequence number not above the stream's last one.
    case sequenceNotIncreasing(UInt64, last: UInt64)
    /// A record whose body would be larger than ``JournalRecord/maximumBodyLength`` bytes.
    case recordTooLarge(Int)
    /// Journaling stopped after an earlier failure (given): nothing more is appended.
    case stopped(String)
    /// Not a journal stream directory (no segment, or a name that is none).
    case notAJournal(String)

    /// A sentence for the log.
    public var description: String {
        switch self {
        case .unsafePath(let message): message
        case .system(let path, let call, let message): "\(path): \(call): \(message)"
        case .diskFull(let path): "\(path): the disk is full (ENOSPC or EDQUOT): journaling stops"
        case .inUse(let path): "\(path) is journaled by another process (its lock is held)"
        case .sequenceNotIncreasing(let sequence, let last):
            "sequence number \(sequence) is not above the stream's last one, \(last)"
        case .recordTooLarge(let size): "a record of \(size) bytes is over the limit"
        case .stopped(let reason): "journaling stopped earlier: \(reason)"
        case .notAJournal(let path): "\(path) is not a journal stream directory"
        }
    }

    /// A stable counter name: `diskFull`, `system`, `unsafePath`...
    public var code: String {
        switch self {
        case .unsafePath: "unsafePath"
        case .system: "system"
        case .diskFull: "diskFull"
        case .inUse: "inUse"
        case .sequenceNotIncreasing: "sequenceNotIncreasing"
        case .recordTooLarge: "recordTooLarge"
        case .stopped: "stopped"
        case .notAJournal: "notAJournal"
        }
    }
}
