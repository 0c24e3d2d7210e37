import Foundation
public import KinesiaBus
import KinesiaSystem
public import KinesiaWire
import Synchronization

/// The messages of the bus as an `AsyncSequence` of typed values: events, snapshots, health
/// reports and poses, with the gaps and the malformed messages between them.
///
/// ```swift
/// let bus = try BusAddress(parsing: "/run/kinesia")
/// for try await message in BusMessages(bus: bus, topics: [try .events(camera: "cam0")]) {
///     if case .event(let e) = message { print(e.session, e.sequence, e.event.name) }
/// }
/// ```
///
/// Each iteration (each ``makeAsyncIterator()``) connects its own subscriber to the broker's
/// backend, subscribes `topics`, and judges every message's sequence number per topic (see
/// ``BusMessage/messages(from:)``). A broker that is not there yet, or restarts, is waited
/// for: the subscriber reconnects on its own.
///
/// ## A dedicated receiving thread
///
/// A libzmq socket is not thread-safe, and a blocking receive must not hold a thread of the
/// Swift concurrency pool (a handful, shared by every task of the process). So each iteration
/// starts one thread that owns its own ``ZMQContext`` and its socket: it makes the socket,
/// waits in `zmq_poll` without a timeout (no wake-up while the bus is quiet, no latency from a
/// polling interval), and yields each value into an `AsyncStream` that the iterator reads. The
/// socket never leaves that thread. The alternative, an iterator that polls the socket with a
/// short timeout between `Task.sleep`s, would add that interval to every message's latency and
/// wake up for nothing while the bus is idle; and the iterator can resume on a different
/// thread at every `await`.
///
/// ## Stopping
///
/// Cancelling the consuming task, or leaving the `for` loop (the iterator is then released),
/// ends the stream; its termination handler calls ``ZMQContext/shutdown()``, which makes the
/// thread's blocked `zmq_poll` return at once. The thread then closes the socket (linger zero:
/// nothing is waiting to be sent on a subscriber), terminates its context and exits. No
/// unstructured task is involved, and nothing is left behind.
///
/// ## Buffering
///
/// Values wait in a buffer of at most `bufferLimit` values (`.bufferingOldest`). When the
/// consumer falls that far behind, the newest values are dropped, counted, and reported as one
/// ``BusGap/overflow(dropped:)`` value as soon as there is room again, at the place of the
/// hole. Before that buffer, the socket's own receive high-water mark (10,000 messages) may
/// drop too; those losses show as ``BusGap/missed(topic:count:before:)``. Either way a consumer
/// never blocks the bus, and never loses a message without being told.
///
/// ## Errors
///
/// Lost, duplicated and malformed messages are values, never errors. The iterator throws a
/// ``ZMQError`` only when the socket cannot be made or fails (the process is out of file
/// descriptors...), after the values received before.
public struct BusMessages: AsyncSequence, Sendable {
    /// The values.
    public typealias Element = BusMessage
    /// What the iterator throws: the socket's failure.
    public typealias Failure = ZMQError

    /// The default size of the buffer between the receiving thread and the consumer.
    public static let defaultBufferLimit = 4096

    /// Where the broker is.
    public let bus: BusAddress
    /// The prefixes subscribed (none: nothing is received).
    public let topics: [TopicPrefix]
    /// The most values that wait for the consumer; more are dropped and reported (see the type).
    public let bufferLimit: Int

    /// Called by the receiving thread after it closed its socket and terminated its context
    /// (tests observe the end of the thread).
    let receiverFinished: (@Sendable () -> Void)?

    /// The messages of `topics` on `bus`.
    /// - Parameters:
    ///   - bus: The bus (``BusAddress/resolve(_:environment:)`` finds the one `kinesia` uses).
    ///   - topics: The prefixes to receive: ``TopicPrefix/events(camera:)``,
    ///     ``TopicPrefix/kind(_:)`` (`.kind(.health)`), ``TopicPrefix/topic(_:)``...
    ///   - bufferLimit: The most values that wait for the consumer (at least 1).
    public init(bus: BusAddress, topics: [TopicPrefix], bufferLimit: Int = defaultBufferLimit) {
        self.init(bus: bus, topics: topics, bufferLimit: bufferLimit, receiverFinished: nil)
    }

    init(
        bus: BusAddress, topics: [TopicPrefix], bufferLimit: Int,
        receiverFinished: (@Sendable () -> Void)?
    ) {
        self.bus = bus
        self.topics = topics
        self.bufferLimit = Swift.max(1, bufferLimit)
        self.receiverFinished = receiverFinished
    }

    /// Starts receiving: connects a subscriber on a thread of its own (see the type).
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(
            of: BusMessage.self, bufferingPolicy: .bufferingOldest(bufferLimit))
        let context: ZMQContext
        do {
            context = try ZMQContext()
        } catch {
            continuation.finish()
            receiverFinished?()
            return Iterator(messages: stream.makeAsyncIterator(), receiver: nil, failure: error)
        }
        let receiver = BusReceiver(context: context)
        continuation.onTermination = { _ in receiver.stop() }
        let bus = bus
        let topics = topics
        let finished = receiverFinished
        Thread.named("kinesia-bus-messages") {
            receiver.run(bus: bus, topics: topics, continuation: continuation)
            finished?()
        }.start()
        return Iterator(messages: stream.makeAsyncIterator(), receiver: receiver, failure: nil)
    }

    /// The iterator: the values the receiving thread yields, then its failure, once.
    public typealias Iterator = ReceivingIterator
}

/// The receiving side of one iteration: the context that its thread's socket is made from,
/// and how the thread ended. The context is `Sendable` (libzmq contexts are thread-safe); the
/// socket is made, used and closed on the thread only.
final class BusReceiver: MessageReceiving {
    private let context: ZMQContext
    private let failure = Mutex<ZMQError?>(nil)

    init(context: ZMQContext) {
        self.context = context
    }

    /// Makes the thread's blocking wait fail at once (from any thread, any number of times).
    func stop() { context.shutdown() }

    /// The error the thread ended with, once (`nil` after a stop, or when already taken).
    func takeFailure() -> ZMQError? {
        failure.withLock { error in
            defer { error = nil }
            return error
        }
    }

    /// The thread's body: receives until ``stop()`` or until nobody listens, then closes the
    /// socket, terminates the context and finishes the stream (in that order, so that the
    /// iterator sees the failure when the stream ends).
    func run(bus: BusAddress, topics: [TopicPrefix], continuation: AsyncStream<BusMessage>.Continuation) {
        do throws(ZMQError) {
            let subscriber = try BusSubscriber(context: context, bus: bus, prefixes: topics)
            defer { subscriber.close() }
            // The connection is not waited for (the broker may come later): drop the monitor.
            _ = try subscriber.waitForConnection(timeout: .zero)
            var relay = OverflowRelay()
            receiving: while true {
                guard let delivery = try subscriber.receive(timeout: nil) else { continue }
                for message in BusMessage.messages(from: delivery) {
                    guard relay.send(message, to: continuation) else { break receiving }
                }
            }
        } catch {
            if error != .terminated { failure.withLock { $0 = error } }
        }
        context.terminate()
        continuation.finish()
    }
}
