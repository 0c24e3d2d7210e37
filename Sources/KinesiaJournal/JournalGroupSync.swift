import CKinesiaFileSystem
import Foundation
import Glibc
import Synchronization

/// Makes a whole store durable every interval, off the caller's thread: one `syncfs` of the
/// store's file system every `interval`, instead of an `fdatasync` per stream on the thread that
/// writes (a worker of 64 cameras journals 256 streams: 1,280 `fdatasync` a second at 200 ms on
/// its live loop, which is what made a journaled worker fall behind).
///
/// Writers of a store synced this way have ``JournalWriter/syncsInGroup`` set: their records are
/// written at once (a kill never loses them: they are in the page cache) and made durable by the
/// next group sync (a power cut loses at most the last `interval`, as the interval policy says).
///
/// ```swift
/// let group = try JournalGroupSync(directory: store.directory, interval: .milliseconds(200))
/// group.start()
/// defer { group.stop() }
/// ```
public final class JournalGroupSync: Sendable {
    /// The time between two syncs.
    public let interval: Duration
    private let descriptor: Int32
    private let stopped = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    private let count = Atomic<Int>(0)
    private let failures = Atomic<Int>(0)

    /// A group sync of the file system that holds `directory`.
    /// - Throws: ``JournalError/system(path:call:message:)`` when it cannot be opened.
    public init(directory: String, interval: Duration) throws(JournalError) {
        self.interval = interval
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .system(path: directory, call: "open", message: String(cString: strerror(errno)))
        }
        self.descriptor = descriptor
    }

    deinit {
        stop()
        close(descriptor)
    }

    /// The syncs done so far.
    public var syncs: Int { count.load(ordering: .relaxed) }

    /// The syncs that failed (the file system's error; the next one tries again).
    public var syncFailures: Int { failures.load(ordering: .relaxed) }

    /// Starts the syncing thread.
    public func start() {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                Thread.sleep(
                    forTimeInterval: Double(interval.components.seconds)
                        + Double(interval.components.attoseconds) * 1e-18)
                syncNow()
            }
            finished.store(true, ordering: .releasing)
        }
        thread.name = "kinesia.journal-sync"
        thread.start()
    }

    /// One sync now, on the caller's thread.
    public func syncNow() {
        if kinesia_syncfs(descriptor) == 0 {
            count.add(1, ordering: .relaxed)
        } else {
            failures.add(1, ordering: .relaxed)
        }
    }

    /// Stops the thread after its current sleep and sync (it never holds anything else).
    public func stop() {
        stopped.store(true, ordering: .releasing)
    }
}
