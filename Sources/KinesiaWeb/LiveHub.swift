import Foundation
public import KinesiaSystem

/// The latest state of the site for `GET /api/v1/live`: each session's latest snapshot and the
/// processes, as server-sent events, to any number of clients, each at its own pace.
///
/// The bus loop ``publish(_:text:)``es the newest text of a key (a session, `processes`); a
/// client waits for what changed since it last read, and gets each changed key once, its newest
/// text only: a slow client skips the states it had no time for (a screen wants the newest),
/// and holds nothing, whatever its pace: memory is one text per key.
public final class LiveHub: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var latest: [String: (generation: UInt64, text: String)] = [:]
        var closed = false
    }

    // Clients wait on the condition; the bus loop wakes them. `state` is only used under its lock.
    private let condition = NSCondition()
    private nonisolated(unsafe) var state = State()

    /// An empty hub.
    public init() {}

    /// Makes `text` the newest of `key` and wakes the clients.
    public func publish(_ key: String, text: String) {
        condition.lock()
        state.generation += 1
        state.latest[key] = (state.generation, text)
        condition.broadcast()
        condition.unlock()
    }

    /// Ends every client's wait (the gateway stops).
    public func close() {
        condition.lock()
        state.closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// What changed after `seen` (every key's newest text, in key order), waiting at most
    /// `timeout` on `clock` for something to change; the new position; `nil` once the hub is
    /// closed.
    ///
    /// A ``publish(_:text:)`` or ``close()`` ends the wait at once.
    ///
    /// - Parameters:
    ///   - seen: The position of the client's last read (zero: none yet).
    ///   - timeout: The longest wait for a change.
    ///   - clock: What the timeout is timed on, from now (a ``ManualClock`` in tests): read again
    ///     at least every second of real time.
    public func changes(
        after seen: UInt64, timeout: Duration, clock elapsed: ElapsedClock = ElapsedClock(ContinuousClock())
    ) -> (texts: [String], seen: UInt64)? {
        let wait = TimedWait(limit: timeout, startedAt: elapsed.now)
        condition.lock()
        defer { condition.unlock() }
        while state.generation == seen, !state.closed {
            guard let remaining = wait.remaining(at: elapsed.now) else { break }
            // The condition's own timer is the real clock's: a step of it at most, then the clock
            // is read again (a spurious wake-up, or a timeout, is checked the same way).
            _ = condition.wait(until: Date(timeIntervalSinceNow: min(remaining, Self.clockReadStep).seconds))
        }
        if state.closed { return nil }
        let texts = state.latest.filter { $0.value.generation > seen }.sorted { $0.key < $1.key }.map(
            \.value.text)
        return (texts, state.generation)
    }

    /// The longest a wait sleeps on the condition before it reads its clock again.
    static let clockReadStep = Duration.seconds(1)
}
