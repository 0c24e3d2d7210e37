import Synchronization

/// Delivers events to any number of `AsyncStream` listeners.
///
/// The listener table lives in a `Mutex`: `onTermination` handlers run on arbitrary threads and
/// remove their listener under the lock. The lock only decides whom to deliver to;
/// continuations are resumed outside it.
final class EventFanOut<Element: Sendable>: Sendable {
    private struct Listeners: ~Copyable {
        var nextID = 0
        var continuations: [Int: AsyncStream<Element>.Continuation] = [:]
    }

    private let listeners = Mutex(Listeners())

    init() {}

    /// A new stream that receives every element sent after this call.
    func stream(bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Element.self, bufferingPolicy: bufferingPolicy)
        let id = listeners.withLock { state in
            let id = state.nextID
            state.nextID &+= 1
            state.continuations[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.listeners.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// The number of listeners currently attached.
    var listenerCount: Int { listeners.withLock { $0.continuations.count } }

    /// Sends `elements`, in order, to every listener.
    func send(_ elements: [Element]) {
        guard !elements.isEmpty else { return }
        let targets = listeners.withLock { state -> [AsyncStream<Element>.Continuation] in
            state.continuations.isEmpty ? [] : state.continuations.sorted { $0.key < $1.key }.map(\.value)
        }
        for continuation in targets {
            for element in elements { continuation.yield(element) }
        }
    }

    /// Ends every listener's stream.
    func finishAll() {
        let targets = listeners.withLock { state -> [AsyncStream<Element>.Continuation] in
            let all = Array(state.continuations.values)
            state.continuations.removeAll()
            return all
        }
        for continuation in targets { continuation.finish() }
    }
}
