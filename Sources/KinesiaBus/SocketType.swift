import CZeroMQ

/// The kinds of ZeroMQ socket the deployment uses.
///
/// See the ZeroMQ guide for each pattern: publish-subscribe (``pub``, ``sub``, ``xpub``,
/// ``xsub``), request-reply (``req``, ``rep``, ``dealer``, ``router``), pipeline (``push``,
/// ``pull``) and exclusive pair (``pair``).
public enum SocketType: String, CaseIterable, Hashable, Sendable {
    /// Publisher: sends to every matching subscriber, drops at the high-water mark.
    case pub
    /// Subscriber: receives the messages whose first frame starts with a subscribed prefix.
    case sub
    /// Extended publisher: also receives subscription messages (`0x01` + prefix to subscribe,
    /// `0x00` + prefix to unsubscribe) from its subscribers.
    case xpub
    /// Extended subscriber: subscribes by sending subscription messages.
    case xsub
    /// Router: prefixes each received message with the sender's routing id and routes replies by
    /// it.
    case router
    /// Dealer: round-robins outgoing messages and fair-queues incoming ones, no envelope rules.
    case dealer
    /// Push: pipeline sender, round-robins to pullers, blocks at the high-water mark.
    case push
    /// Pull: pipeline receiver.
    case pull
    /// Exclusive pair: one peer, both directions.
    case pair
    /// Request: strict send, receive, send... with one peer at a time.
    case req
    /// Reply: strict receive, send, receive...
    case rep

    /// libzmq's constant (`ZMQ_PUB`...).
    var zmqValue: Int32 {
        switch self {
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .xpub: ZMQ_XPUB
        case .xsub: ZMQ_XSUB
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .pair: ZMQ_PAIR
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        }
    }
}
