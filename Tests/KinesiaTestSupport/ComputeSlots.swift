import Foundation
import Synchronization

/// Turns for the bodies that compute (``OffPoolWork/computing``): at most one per core runs at a
/// time, and the others wait for a turn without holding a thread.
///
/// Moved off the cooperative pool and all started at once (every case of a parameterized test
/// is a body), seventy of them would share the cores with the pool's two threads, which would
/// then have a small share of the CPU however low the bodies' priority: the pool's tasks would
/// wait behind them as before. A turn is given in the order asked.
///
/// ```swift
/// await ComputeSlots.shared.acquire()
/// defer { ComputeSlots.shared.release() }
/// ```
final class ComputeSlots: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    /// One turn per core of the machine.
    static let shared = ComputeSlots(width: max(1, ProcessInfo.processInfo.activeProcessorCount))

    private let state: Mutex<State>

    /// Slots for `width` bodies at a time.
    init(width: Int) {
        state = Mutex(State(free: width))
    }

    /// Returns once a turn is the caller's (at once when one is free).
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if now { continuation.resume() }
        }
    }

    /// Gives the caller's turn to the first waiting, or back.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
