public import KinesiaBus
public import KinesiaWire

/// Why ``BusPublisher`` could not publish a message: the message itself (it cannot be
/// encoded: no sequence number was used), or the socket.
public enum BusPublishError: Error, Hashable, CustomStringConvertible {
    /// The message cannot be encoded (a NaN in a pose, an empty or oversized JSON payload, a
    /// payload of another kind than its topic's).
    case message(WireError)
    /// The socket failed.
    case socket(ZMQError)

    /// What failed, as the error underneath says it.
    public var description: String {
        switch self {
        case .message(let error): "\(error)"
        case .socket(let error): "\(error)"
        }
    }
}
