public import KinesiaBus
import KinesiaWire

/// The DEALER a replay client asks a replay server with (``ReplayServer``), opened one way by
/// every client: the worker's pose replay and ``ExactlyOnceSubscriber``.
///
/// It takes frames up to ``WireFormat/maximumFrameSize``, queues at most the server's
/// ``ReplayServer/highWaterMark`` replies, reconnects within a second of a server that
/// restarts, and drops what it has not sent when closed (a request is asked again anyway).
///
/// ```swift
/// guard ReplayDealer.isReplayEndpoint(endpoint), let dealer = try? ReplayDealer.open(endpoint, context: zmq)
/// else { return }
/// ```
public enum ReplayDealer {
    /// Whether `endpoint`, as a heartbeat announced it, is one a replay client connects to:
    /// `ipc://` or `tcp://` (never another transport a forged heartbeat names).
    public static func isReplayEndpoint(_ endpoint: String) -> Bool {
        endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("tcp://")
    }

    /// A DEALER connected to the replay server at `endpoint`.
    /// - Throws: The socket's errors (the connection itself is made in the background).
    public static func open(_ endpoint: String, context: ZMQContext) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(.dealer, context: context, linger: .zero)
        do {
            try socket.set(.maximumMessageSize, Int64(WireFormat.maximumFrameSize))
            try socket.set(.receiveHighWaterMark, ReplayServer.highWaterMark)
            try socket.set(.reconnectIntervalMax, .seconds(1))
            try socket.connect(endpoint)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }
}
