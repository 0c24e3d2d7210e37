import Synchronization

/// An unbounded queue with one reader that ignores task cancellation.
///
/// `AsyncStream` ends its iteration when the reading task is cancelled; a supervisor must keep
/// reading child exits until every child has stopped, cancelled or not. Posting never blocks
/// and never drops; the reader waits without polling.
final class Mailbox<Message: Sendable>: Sendable {
    private struct State {
        var buffer: [Message] = []
        var waiter: CheckedContinuation<Message, Never>?
    }

    private let state = Mutex(State())

    init() {}

    /// Adds a message, waking the reader if it waits.
    func post(_ message: Message) {
        let waiter: CheckedContinuation<Message, Never>? = state.withLock { state in
            guard let waiter = state.waiter else {
                state.buffer.append(message)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: message)
    }

    /// The oldest message, waiting for one if needed (even when the task is cancelled).
    /// Only one task may read.
    func next() async -> Message {
        await withCheckedContinuation { (continuation: CheckedContinuation<Message, Never>) in
            let ready: Message? = state.withLock { state in
                guard state.buffer.isEmpty else { return state.buffer.removeFirst() }
                precondition(state.waiter == nil, "Mailbox has one reader")
                state.waiter = continuation
                return nil
            }
            if let ready {
                continuation.resume(returning: ready)
            }
        }
    }
}
