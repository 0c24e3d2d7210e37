import Foundation
import Glibc
import Synchronization

/// POSIX signals as an `AsyncSequence`, for a command's graceful shutdown.
///
/// While a stream watches a signal, the signal no longer has its default action (for SIGINT
/// and SIGTERM: ending the process); every delivery becomes an element of each stream that
/// watches it. The watch ends when the iterating task is cancelled, or when the stream and its
/// iterator are gone; when the last stream of a signal ends, the signal's previous disposition
/// is restored.
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
/// Create it before the work starts: from the moment `init` returns, every delivery reaches
/// the stream.
///
/// Buffering: the stream keeps the newest 8 signals that nobody has read yet and drops older
/// ones (a shutdown needs to know that a signal came, not how many).
///
/// How: a `sigaction` handler writes the signal's number to a pipe (the self-pipe trick: a
/// `write` is all a handler may safely do), and one thread per process reads the pipe and
/// hands each signal to the streams. The handler runs on whichever thread the kernel picks,
/// and the kernel only picks a thread that does not block the signal: that reading thread
/// unblocks every watched signal for itself, so a delivery never depends on the masks of the
/// other threads. (Threads inherit their creator's mask, and libdispatch's worker threads
/// block nearly every signal: a process started from one, by `Foundation.Process` or
/// `posix_spawn` without a mask of its own, begins with SIGINT and SIGTERM blocked, and only
/// its main thread, parked by `dispatch_main` in `sigsuspend`, would otherwise take them.) `DispatchSource.makeSignalSource` is not used: on Linux,
/// libdispatch installs its own handler once per signal and forwards deliveries to the thread
/// that first registered a source, and a signal arriving while a source is being registered or
/// cancelled can be dropped (seen here with the second stream of a process). For the same
/// reason, code in this process must not watch these signals with Dispatch as well.
///
/// Children started with ``ProcessSpawn`` (by `kinesia up`, by the tests) get default
/// dispositions back.
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
        let watch = SignalWatch(signals: Set(signals), continuation: continuation)
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

/// One stream's registration: ended once, when the stream terminates or when the last
/// ``SignalStream`` value and iterator holding it go away.
final class SignalWatch: Sendable {
    private let id: Int
    private let continuation: AsyncStream<ProcessSignal>.Continuation

    init(signals: Set<ProcessSignal>, continuation: AsyncStream<ProcessSignal>.Continuation) {
        self.continuation = continuation
        self.id = SignalHub.shared.add(signals: signals, continuation: continuation)
    }

    func cancel() {
        SignalHub.shared.remove(id)
    }

    deinit {
        SignalHub.shared.remove(id)
        continuation.finish()
    }
}

/// The write end of the signal pipe, read by the signal handler (an atomic load is
/// async-signal-safe; -1 before the pipe exists).
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// The `sigaction` handler: writes the signal number to the pipe and nothing else.
private func writeSignalToPipe(_ signal: Int32) {
    let fd = signalPipeWriteEnd.load(ordering: .acquiring)
    guard fd >= 0 else { return }
    Errno.preserving {
        var byte = UInt8(truncatingIfNeeded: signal)
        _ = write(fd, &byte, 1)  // non-blocking: when the pipe is full, the signal is dropped
    }
}

/// The byte that asks the reading thread to update its signal mask (no signal is numbered 0).
private let updateMaskByte: UInt8 = 0

/// The streams of the process, the handler installations and the thread that reads the pipe.
private final class SignalHub: Sendable {
    static let shared = SignalHub()

    /// A `sigaction` value (a C struct holding function pointers) kept under the lock.
    private struct SavedAction: @unchecked Sendable {
        var value: sigaction
    }

    private struct State {
        var nextID = 0
        var streams:
            [Int: (signals: Set<ProcessSignal>, continuation: AsyncStream<ProcessSignal>.Continuation)] =
                [:]
        /// For each signal with a handler installed: how many streams watch it and the
        /// disposition to restore after the last one.
        var installed: [Int32: (count: Int, previous: SavedAction)] = [:]
    }

    /// A `sigset_t` (a C array) kept in a `let` and read by the reading thread only.
    private struct SignalSet: @unchecked Sendable {
        var value: sigset_t
    }

    private let state = Mutex(State())
    /// The write end of the pipe, open for the life of the process (its number is in
    /// `signalPipeWriteEnd`).
    private let writeEnd: FileDescriptor

    private init() {
        let pipe: FileDescriptor.Pipe
        do {
            pipe = try FileDescriptor.pipe()
            try pipe.writeEnd.setNonBlocking()
        } catch {
            fatalError("SignalStream: cannot make the signal pipe: \(error)")
        }
        let readEnd = pipe.readEnd
        writeEnd = pipe.writeEnd
        signalPipeWriteEnd.store(writeEnd.rawValue, ordering: .releasing)
        // The new thread inherits this thread's mask: the one to keep for unwatched signals.
        var inherited = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &inherited)
        let reader = PipeReader(descriptor: readEnd)
        let thread = Thread { [inherited = SignalSet(value: inherited)] in
            // Named by pthread (`Thread.name` reaches the kernel only when set on the current
            // thread after `start()` has recorded it, which races with the thread's start).
            _ = SignalHub.setThreadName?(pthread_self(), "kinesia-signals")
            SignalHub.readLoop(reader.descriptor, inheritedMask: inherited)
        }
        thread.start()
    }

    /// The read end of the pipe, handed to the reading thread (which never ends).
    private final class PipeReader: Sendable {
        let descriptor: FileDescriptor
        init(descriptor: consuming FileDescriptor) { self.descriptor = descriptor }
    }

    /// Registers a stream and installs the handler for signals nobody watched yet.
    func add(signals: Set<ProcessSignal>, continuation: AsyncStream<ProcessSignal>.Continuation) -> Int {
        var changed = false
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.streams[id] = (signals, continuation)
            for signal in signals {
                if let entry = state.installed[signal.rawValue] {
                    state.installed[signal.rawValue] = (entry.count + 1, entry.previous)
                    continue
                }
                var action = sigaction()
                action.__sigaction_handler.sa_handler = writeSignalToPipe
                action.sa_flags = SA_RESTART
                sigemptyset(&action.sa_mask)
                var previous = sigaction()
                sigaction(signal.rawValue, &action, &previous)
                state.installed[signal.rawValue] = (1, SavedAction(value: previous))
                changed = true
            }
            return id
        }
        if changed { requestMaskUpdate() }
        return id
    }

    /// Unregisters a stream (once; later calls do nothing) and restores the disposition of
    /// signals nobody watches any more.
    func remove(_ id: Int) {
        let changed = state.withLock { state in
            guard let stream = state.streams.removeValue(forKey: id) else { return false }
            var changed = false
            for signal in stream.signals {
                guard let entry = state.installed[signal.rawValue] else { continue }
                if entry.count > 1 {
                    state.installed[signal.rawValue] = (entry.count - 1, entry.previous)
                } else {
                    state.installed[signal.rawValue] = nil
                    var previous = entry.previous.value
                    sigaction(signal.rawValue, &previous, nil)
                    changed = true
                }
            }
            return changed
        }
        if changed { requestMaskUpdate() }
    }

    /// Wakes the reading thread so that it unblocks exactly the signals watched now.
    private func requestMaskUpdate() {
        let fd = signalPipeWriteEnd.load(ordering: .acquiring)
        var byte = updateMaskByte
        _ = write(fd, &byte, 1)
    }

    /// The reading thread's mask: the inherited one, with every watched signal unblocked.
    private func updateMask(inherited: SignalSet) {
        var mask = inherited.value
        state.withLock { state in
            for signal in state.installed.keys {
                sigdelset(&mask, signal)
            }
        }
        pthread_sigmask(SIG_SETMASK, &mask, nil)
    }

    /// Hands each signal read from the pipe to the streams that watch it.
    private func deliver(_ signal: ProcessSignal) {
        let continuations = state.withLock { state in
            state.streams.values.filter { $0.signals.contains(signal) }.map(\.continuation)
        }
        for continuation in continuations {
            continuation.yield(signal)
        }
    }

    private typealias SetNameFunction = @convention(c) (pthread_t, UnsafePointer<CChar>?) -> Int32

    /// `pthread_setname_np` (a GNU declaration that Swift does not see), or `nil`.
    private static let setThreadName: SetNameFunction? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else {
            return nil
        }
        return unsafeBitCast(symbol, to: SetNameFunction.self)
    }()

    private static func readLoop(_ descriptor: borrowing FileDescriptor, inheritedMask: SignalSet) {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count: Int
            do {
                guard case .bytes(let read) = try descriptor.read(into: &buffer) else { continue }
                count = read
            } catch {
                // Only a descriptor closed by someone else gets here: without this thread no
                // signal would ever reach a stream, so say so instead of hanging.
                fatalError("SignalStream: reading the signal pipe failed: \(error)")
            }
            // After every read, not only on an update byte: one dropped from a full pipe
            // would otherwise leave a watched signal blocked here.
            SignalHub.shared.updateMask(inherited: inheritedMask)
            for byte in buffer[..<count] where byte != updateMaskByte {
                SignalHub.shared.deliver(ProcessSignal(rawValue: Int32(byte)))
            }
        }
    }
}
