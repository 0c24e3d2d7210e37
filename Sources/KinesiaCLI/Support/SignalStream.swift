import Dispatch
import Glibc
import Synchronization

/// POSIX signals as an `AsyncSequence`, for a command's graceful shutdown.
///
/// Creating the stream sets each signal's disposition to ignore (so the default action, which
/// for SIGINT and SIGTERM ends the process, does not run) and watches it with a
/// `DispatchSource` signal source; every delivery is then an element of the stream. The watch
/// ends when the iterating task is cancelled or when the stream and its iterator are gone;
/// when the last stream watching a signal ends, the signal's previous disposition is restored.
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
/// Create it before the work starts: once `init` returns, every delivery reaches the stream
/// (the first stream of a signal waits, a millisecond or so, until Dispatch catches it).
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
    private let watch: SignalWatch

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
        let unique = Array(Set(signals))
        let queue = DispatchQueue(label: "kinesia.signals")
        var sources: [any DispatchSourceSignal] = []
        var firstTime: [ProcessSignal] = []
        for signal in unique {
            if SignalDispositions.retain(signal) { firstTime.append(signal) }
            let source = DispatchSource.makeSignalSource(signal: signal.rawValue, queue: queue)
            source.setEventHandler { [source] in
                for _ in 0..<Swift.min(source.data, 8) {
                    continuation.yield(signal)
                }
            }
            source.resume()
            sources.append(source)
        }
        for signal in firstTime {
            SignalDispositions.waitForDispatch(signal)
        }
        let watch = SignalWatch(sources: sources, signals: unique)
        continuation.onTermination = { [weak watch] _ in
            watch?.cancel()
        }
        self.stream = stream
        self.watch = watch
    }

    /// Iterates the deliveries; a stream is iterated once.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<ProcessSignal>.Iterator
        /// Keeps the signals watched while the iterator lives.
        let watch: SignalWatch

        /// The next delivery, or `nil` once the iterating task is cancelled.
        public mutating func next() async -> ProcessSignal? {
            await base.next()
        }
    }

    /// The stream's iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), watch: watch)
    }
}

/// The signal sources of one stream: cancelled, and the dispositions released, when the stream
/// terminates or when the last ``SignalStream`` value and iterator holding it go away.
final class SignalWatch: Sendable {
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

    deinit {
        cancel()
    }
}

/// Counts the streams watching each signal and keeps its disposition right.
///
/// libdispatch on Linux installs its own `sigaction` handler for a signal the first time a
/// source watches it (and never again): the handler blocks the signal in the receiving thread
/// and re-raises it to Dispatch's manager thread, whose `signalfd` reads it. So:
/// - the first time, the signal is ignored until that handler is in place (a SIGTERM in that
///   instant must not end the process), and ``watch(_:)`` waits until it is, so that a signal
///   sent after `SignalStream.init` returns is always delivered;
/// - when the last stream of a signal ends, its disposition before the first stream is
///   restored (SIGTERM ends the process again), and Dispatch's handler is kept aside to be put
///   back for the next stream, since Dispatch will not install it again.
private enum SignalDispositions {
    /// A `sigaction` value (a C struct holding function pointers) moved between threads.
    private struct Action: @unchecked Sendable {
        var value: sigaction
    }

    private struct Entry {
        var count: Int
        var previous: Action
    }

    private struct State {
        var entries: [Int32: Entry] = [:]
        var dispatchHandlers: [Int32: Action] = [:]
    }

    private static let state = Mutex(State())

    private static func current(_ signal: Int32) -> Action {
        var action = sigaction()
        sigaction(signal, nil, &action)
        return Action(value: action)
    }

    private static func isIgnored(_ action: Action) -> Bool {
        unsafeBitCast(action.value.__sigaction_handler.sa_handler, to: Int.self) == 1
    }

    /// Called before the signal's source is created; returns whether ``waitForDispatch(_:)``
    /// is needed (Dispatch has not installed its handler for this signal yet).
    static func retain(_ signal: ProcessSignal) -> Bool {
        state.withLock { state in
            if var entry = state.entries[signal.rawValue] {
                entry.count += 1
                state.entries[signal.rawValue] = entry
                return false
            }
            let previous = current(signal.rawValue)
            state.entries[signal.rawValue] = Entry(count: 1, previous: previous)
            if var handler = state.dispatchHandlers[signal.rawValue] {
                sigaction(signal.rawValue, &handler.value, nil)
                return false
            }
            _ = Glibc.signal(signal.rawValue, SIG_IGN)
            return true
        }
    }

    /// Waits (at most a second) until Dispatch has replaced the ignore disposition with its
    /// handler, and remembers that handler.
    static func waitForDispatch(_ signal: ProcessSignal) {
        for _ in 0..<1000 {
            let action = current(signal.rawValue)
            if !isIgnored(action) {
                state.withLock { $0.dispatchHandlers[signal.rawValue] = action }
                return
            }
            usleep(1000)
        }
    }

    static func release(_ signal: ProcessSignal) {
        state.withLock { state in
            guard var entry = state.entries[signal.rawValue] else { return }
            entry.count -= 1
            guard entry.count == 0 else {
                state.entries[signal.rawValue] = entry
                return
            }
            state.entries[signal.rawValue] = nil
            let installed = current(signal.rawValue)
            if !isIgnored(installed), state.dispatchHandlers[signal.rawValue] == nil {
                state.dispatchHandlers[signal.rawValue] = installed
            }
            var previous = entry.previous
            sigaction(signal.rawValue, &previous.value, nil)
        }
    }
}
