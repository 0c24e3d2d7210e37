public import KinesiaBus

/// The receiving side of a bus sequence's iteration, on a thread of its own: what it failed
/// with, and (for a sequence with bounded room) that the application took a value.
protocol MessageReceiving: Sendable {
    /// The thread's failure, once.
    func takeFailure() -> ZMQError?
    /// The application took a value: room for one more.
    func tookOne()
}

extension MessageReceiving {
    func tookOne() {}
}

/// The iterator of ``BusMessages`` and ``ExactlyOnceMessages``: reads the values that the
/// receiving thread yields, then its failure, once.
///
/// Releasing the iterator (leaving the `for` loop) or cancelling its task stops the thread
/// and closes the socket.
public struct ReceivingIterator: AsyncIteratorProtocol {
    private var messages: AsyncStream<BusMessage>.Iterator
    private let receiver: (any MessageReceiving)?
    private var failure: ZMQError?

    init(messages: AsyncStream<BusMessage>.Iterator, receiver: (any MessageReceiving)?, failure: ZMQError?) {
        self.messages = messages
        self.receiver = receiver
        self.failure = failure
    }

    /// The next value; `nil` once the consumer's task is cancelled.
    /// - Throws: ``ZMQError`` when the socket could not be made or failed (once, after the
    ///   values received before).
    public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(ZMQError)
        -> BusMessage?
    {
        if let message = await messages.next(isolation: actor) {
            receiver?.tookOne()
            return message
        }
        if let error = failure ?? receiver?.takeFailure() {
            failure = nil
            throw error
        }
        return nil
    }

    /// The next value; `nil` once the consumer's task is cancelled.
    /// - Throws: ``ZMQError``, as ``next(isolation:)``.
    public mutating func next() async throws(ZMQError) -> BusMessage? {
        try await next(isolation: nil)
    }
}
