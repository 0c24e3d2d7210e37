import Dispatch
import Foundation
public import KinesiaBus
import KinesiaSystem
public import KinesiaWire
import Synchronization

/// The messages of `topics`, each exactly once and in order per stream (per session), however
/// late the consumer starts and however slowly it reads: what is missed live is fetched from
/// its publisher's replay endpoint.
///
/// ```swift
/// var cursor = try ReplayCursor(parsing: saved)           // or ReplayCursor()
/// for try await message in ExactlyOnceMessages(bus: bus, topics: [.kind(.event)], from: .beginning, cursor: cursor) {
///     guard case .event(let e) = message else { continue }
///     store(e)
///     cursor.record(e)                                     // then save cursor.description
/// }
/// ```
///
/// Each iteration starts one thread (as ``BusMessages`` does) that owns a subscriber to
/// `topics` and to `health/` (the publishers' heartbeats carry their replay endpoint and the
/// last sequence number of each stream, ``ReplayAnnouncement``), one DEALER per replay endpoint,
/// and an ``ExactlyOnceStateMachine`` that decides. Events and snapshots come out as
/// ``BusMessage/event(_:)`` and ``BusMessage/snapshot(_:)``; sequence numbers that cannot be
/// had (no longer retained, a publisher that serves no replay) come out as one
/// ``BusGap/missed(topic:count:before:)`` at their place; health reports only when `topics`
/// asks for them.
///
/// ## Slow consumers
///
/// At most `bufferLimit` values wait for the consumer. When they are there, the receiving
/// thread waits for room instead of dropping: meanwhile its subscriber's queue fills and the
/// broker drops the newest live messages for this consumer only (publishers never block,
/// other consumers are not slowed). When the consumer reads again, the machine sees the holes
/// and fetches them by replay, one batch at a time: nothing is lost, nothing comes twice.
public struct ExactlyOnceMessages: AsyncSequence, Sendable {
    /// The values.
    public typealias Element = BusMessage
    /// What the iterator throws: the socket's failure.
    public typealias Failure = ZMQError

    /// Where the broker is.
    public let bus: BusAddress
    /// The prefixes followed.
    public let topics: [TopicPrefix]
    /// Where streams without a cursor position start.
    public let start: ReplayStart
    /// Positions to resume from.
    public let cursor: ReplayCursor
    /// The most values that wait for the consumer.
    public let bufferLimit: Int
    /// The most live messages held per stream while a hole is filled.
    public let maximumBuffered: Int
    /// The receive high-water mark of the subscriber.
    public let highWaterMark: Int32

    /// The messages of `topics` on `bus`, exactly once.
    /// - Parameters:
    ///   - bus: The bus.
    ///   - topics: The prefixes to follow (`.kind(.event)`, `.events(camera:)`...).
    ///   - from: Where streams without a cursor position start.
    ///   - cursor: The positions a previous run stored.
    ///   - bufferLimit: The most values that wait for the consumer (at least 1).
    ///   - maximumBuffered: The most live messages held per stream while a hole is filled.
    ///   - highWaterMark: The subscriber's receive high-water mark.
    public init(
        bus: BusAddress, topics: [TopicPrefix], from: ReplayStart = .now,
        cursor: ReplayCursor = ReplayCursor(),
        bufferLimit: Int = 1024, maximumBuffered: Int = 4096,
        highWaterMark: Int32 = BusSubscriber.defaultHighWaterMark
    ) {
        self.bus = bus
        self.topics = topics
        self.start = from
        self.cursor = cursor
        self.bufferLimit = Swift.max(1, bufferLimit)
        self.maximumBuffered = maximumBuffered
        self.highWaterMark = highWaterMark
    }

    /// Starts receiving on a thread of its own.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: BusMessage.self, bufferingPolicy: .unbounded)
        let context: ZMQContext
        do {
            context = try ZMQContext()
        } catch {
            continuation.finish()
            return Iterator(messages: stream.makeAsyncIterator(), receiver: nil, failure: error)
        }
        let receiver = ExactlyOnceReceiver(context: context, room: bufferLimit)
        continuation.onTermination = { _ in receiver.stop() }
        let settings = self
        Thread.named("kinesia-exactly-once") { receiver.run(settings, continuation: continuation) }.start()
        return Iterator(messages: stream.makeAsyncIterator(), receiver: receiver, failure: nil)
    }

    /// The iterator: the values the receiving thread yields, then its failure, once.
    public typealias Iterator = ReceivingIterator
}

extension ReplayCursor {
    /// Records that `message` was handed to the application: its stream's position moves to it.
    public mutating func record(_ message: some BusTopicMessage) {
        delivered[ReplayStreamKey(topic: message.topic, stream: message.streamID)] = message.sequence
    }
}

/// The receiving side of one ``ExactlyOnceMessages`` iteration.
final class ExactlyOnceReceiver: MessageReceiving {
    private let context: ZMQContext
    private let room: DispatchSemaphore
    private let stopped = Atomic<Bool>(false)
    private let failure = Mutex<ZMQError?>(nil)

    init(context: ZMQContext, room: Int) {
        self.context = context
        self.room = DispatchSemaphore(value: room)
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        context.shutdown()
    }

    func tookOne() { room.signal() }

    func takeFailure() -> ZMQError? {
        failure.withLock { error in
            defer { error = nil }
            return error
        }
    }

    /// Waits for room for one value (the consumer's pace); `false` once stopped.
    private func waitForRoom() -> Bool {
        while room.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            if stopped.load(ordering: .acquiring) { return false }
        }
        return !stopped.load(ordering: .acquiring)
    }

    func run(_ settings: ExactlyOnceMessages, continuation: AsyncStream<BusMessage>.Continuation) {
        do throws(ZMQError) {
            let subscriber = try ExactlyOnceSubscriber(
                context: context, bus: settings.bus, topics: settings.topics, from: settings.start,
                cursor: settings.cursor, maximumBuffered: settings.maximumBuffered,
                highWaterMark: settings.highWaterMark)
            defer { subscriber.close() }
            while !stopped.load(ordering: .acquiring) {
                guard let delivery = try subscriber.receive(timeout: .milliseconds(100)) else { continue }
                let message: BusMessage =
                    switch delivery {
                    case .message(let message), .health(let message): BusMessage.typed(message)
                    case .lost(let topic, let sequences):
                        .gap(
                            .missed(
                                topic: topic, count: sequences.width, before: sequences.upperBound))
                    case .malformed(let topic, let reason):
                        .malformed(MalformedMessage(topic: topic, reason: .wire(reason)))
                    }
                guard waitForRoom() else { break }
                if case .terminated = continuation.yield(message) { break }
            }
        } catch {
            if error != .terminated { failure.withLock { $0 = error } }
        }
        context.terminate()
        continuation.finish()
    }
}
