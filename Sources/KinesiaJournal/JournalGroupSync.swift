import Foundation
import KinesiaSystem
import Synchronization

/// Makes journal records durable off the thread that writes them: writers hand the files they
/// wrote to (``JournalWriter/syncsInGroup``) to a thread of its own that `fdatasync`s each about
/// every `interval`, instead of syncing on the publishing thread (a worker of 64 cameras
/// journals 256 streams: 1,280 `fdatasync` a second at 200 ms on its live loop, which is what
/// made a journaled worker fall behind). Only the journal's own files are synced (no `syncfs`
/// of the whole file system, which would flush every other program's writes too).
///
/// A writer hands over a duplicate of its descriptor (`dup`), so a segment it closes or rotates
/// meanwhile stays valid until it is synced; the same file handed twice in one interval is
/// synced once. Records are written at once, so a kill never loses them (the page cache has
/// them); a power cut loses at most about the last `interval` and the time the syncs take.
///
/// A round is due `interval` after the end of the previous one (the first, after ``start()``),
/// timed on the clock given (the system's by default, a ``ManualClock`` in tests).
///
/// ```swift
/// let group = JournalGroupSync(interval: .milliseconds(200))
/// group.start()
/// writer.syncsInGroup = true
/// writer.groupSync = group
/// ```
public final class JournalGroupSync: Sendable {
    /// The time between two rounds of syncs.
    public let interval: Duration
    private let pending = Mutex<[Int32: Int32]>([:])  // original descriptor -> its duplicate
    private let stopped = Atomic<Bool>(false)
    private let count = Atomic<Int>(0)
    private let failures = Atomic<Int>(0)
    /// The rounds' time, counted from ``start()``.
    private let startClock: @Sendable () -> ElapsedClock
    /// What the thread does after each round (the store's retention when it is due).
    private let afterEachRound: @Sendable () -> Void

    /// A group sync every `interval` on `clock`.
    /// - Parameters:
    ///   - interval: The time between the end of a round and the next.
    ///   - clock: What the rounds are timed on (read at least every `interval` of real time).
    ///   - afterEachRound: Work of the journal's that must not hold up the publishing thread,
    ///     done on the syncing thread after each round (``JournalStore/enforceRetentionIfDue(closedBytes:)``).
    public init(
        interval: Duration, clock: some Clock<Duration> = ContinuousClock(),
        afterEachRound: @escaping @Sendable () -> Void = {}
    ) {
        self.interval = interval
        startClock = { ElapsedClock(clock) }
        self.afterEachRound = afterEachRound
    }

    deinit {
        stop()
        for duplicate in pending.withLock({ Array($0.values) }) { DescriptorSync.close(duplicate) }
    }

    /// The files synced so far.
    public var syncs: Int { count.load(ordering: .relaxed) }

    /// The syncs that failed (the file system's error).
    public var syncFailures: Int { failures.load(ordering: .relaxed) }

    /// Hands `descriptor`'s file over to be synced at the next round (a duplicate is kept; the
    /// caller's descriptor stays its own).
    public func schedule(_ descriptor: Int32) {
        let already = pending.withLock { $0[descriptor] != nil }
        guard !already else { return }
        guard let duplicate = DescriptorSync.duplicate(descriptor) else {
            failures.add(1, ordering: .relaxed)
            return
        }
        let replaced = pending.withLock { table -> Int32? in
            defer { table[descriptor] = duplicate }
            return table[descriptor]
        }
        if let replaced { DescriptorSync.close(replaced) }
    }

    /// Starts the syncing thread.
    public func start() {
        let elapsed = startClock()
        let first = TimedWait(limit: interval, startedAt: elapsed.now)
        let thread = Thread.named("kinesia.journal-sync") { [self] in
            var wait = first
            while !stopped.load(ordering: .acquiring) {
                // The real clock's sleep, an interval at most, then the clock is read again (a
                // manual clock moves with no wake-up).
                while let remaining = wait.remaining(at: elapsed.now), !stopped.load(ordering: .acquiring) {
                    ThreadSleep.sleep(min(remaining, interval))
                }
                syncNow()
                afterEachRound()
                wait = TimedWait(limit: interval, startedAt: elapsed.now)
            }
        }
        thread.start()
    }

    /// Syncs every file handed over so far, on the caller's thread.
    public func syncNow() {
        let due = pending.withLock { table -> [Int32] in
            defer { table = [:] }
            return Array(table.values)
        }
        for duplicate in due {
            if DescriptorSync.syncAndClose(duplicate) {
                count.add(1, ordering: .relaxed)
            } else {
                failures.add(1, ordering: .relaxed)
            }
        }
    }

    /// Stops the thread after its current sleep and a last round.
    public func stop() {
        stopped.store(true, ordering: .releasing)
    }
}
