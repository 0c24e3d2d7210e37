import Dispatch
import Glibc
import Synchronization

/// POSIX signals as an `AsyncSequence`, for a command's graceful shutdown.
///
/// Creating the stream sets each signal's disposition to ignore (so the default action, which
/// for SIGINT and SIGTERM ends the process, does not run) and watches it with a
/// `DispatchSource` signal source; every delivery is then an element of the stream. When the
/// last stream watching a signal ends (its iterating task is cancelled or it is dropped after
/// iteration), the signal's previous disposition is restored.
///
/// ```swift
/// let signals = SignalStream([.interrupt, .terminate])
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await broker.run() }
///     for await signal in signals {
///         log("\(signal): stopping")
///         broker.requestStop()
///         break
///     }
///     try await group.waitForAll()
/// }
/// ```
///
/// Create it before the work starts: the signal source is registered asynchronously, so a
/// signal in the first instants after creation can be missed (it is ignored, not fatal).
///
/// Buffering: the stream keeps the newest 8 signals that nobody has read yet and drops older
/// ones (a shutdown needs to know that a signal came, not how many).
///
/// Children started with ``Supervisor`` get default dispositions back; a process started
/// otherwise inherits ignored signals across `exec`, as POSIX says.
public struct SignalStream: AsyncSequence, Sendable {
    /// Each delivery of a watched signal.
    public typealias Element = ProcessSignal

    private let stream: AsyncStream<ProcessSignal>

    /// Starts watching `signals`.
    ///
    /// - Parameter signals: The signals to receive, e.g. `[.interrupt, .terminate]`.
    ///   `SIGKILL` and `SIGSTOP` cannot be caught and are not allowed.
    public init(_ signals: [ProcessSignal]) {
        precondition(
            !signals.contains(.kill) && !signals.contains(ProcessSignal(rawValue: SIGSTOP)),
            "SIGKILL and SIGSTOP cannot be caught")
        let (stream, continuation) = AsyncStream<ProcessSignal>.makeStream(
            bufferingPolicy: .bufferingNewest(8))
        let queue = DispatchQueue(label: "kinesia.signals")
        var sources: [any DispatchSourceSignal] = []
        for signal in Set(signals) {
            SignalDispositions.ignore(signal)
            let source = DispatchSource.makeSignalSource(signal: signal.rawValue, queue: queue)
            source.setEventHandler { [source] in
                for _ in 0..<Swift.min(source.data, 8) {
                    continuation.yield(signal)
                }
            }
            source.resume()
            sources.append(source)
        }
        let watched = SourceList(sources: sources, signals: Array(Set(signals)))
        continuation.onTermination = { _ in
            watched.cancel()
        }
        self.stream = stream
    }

    /// The stream's iterator.
    public func makeAsyncIterator() -> AsyncStream<ProcessSignal>.Iterator {
        stream.makeAsyncIterator()
    }
}

/// The sources of one stream, cancelled once when the stream ends.
private final class SourceList: Sendable {
    private let sources: Mutex<[any DispatchSourceSignal]>
    private let signals: [ProcessSignal]

    init(sources: sending [any DispatchSourceSignal], signals: [ProcessSignal]) {
        self.sources = Mutex(sources)
        self.signals = signals
    }

    func cancel() {
        let cancelled = sources.withLock { sources in
            defer { sources = [] }
            return sources
        }
        guard !cancelled.isEmpty else { return }
        for source in cancelled {
            source.cancel()
        }
        for signal in signals {
            SignalDispositions.release(signal)
        }
    }
}

/// Counts the streams watching each signal, ignores the signal while any does and restores the
/// previous disposition after the last one.
private enum SignalDispositions {
    private struct Entry {
        var count: Int
        var previous: sighandler_t?
    }

    private static let entries = Mutex<[Int32: Entry]>([:])

    static func ignore(_ signal: ProcessSignal) {
        entries.withLock { entries in
            if var entry = entries[signal.rawValue] {
                entry.count += 1
                entries[signal.rawValue] = entry
            } else {
                let previous = Glibc.signal(signal.rawValue, SIG_IGN)
                entries[signal.rawValue] = Entry(count: 1, previous: previous)
            }
        }
    }

    static func release(_ signal: ProcessSignal) {
        entries.withLock { entries in
            guard var entry = entries[signal.rawValue] else { return }
            entry.count -= 1
            if entry.count == 0 {
                entries[signal.rawValue] = nil
                _ = Glibc.signal(signal.rawValue, entry.previous ?? SIG_DFL)
            } else {
                entries[signal.rawValue] = entry
            }
        }
    }
}
