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

    /// Whether a client on `bus` asks for replay: on IPC and `--insecure` TCP (at the endpoint
    /// each server announces) and on TCP with keys (through the broker's replay port).
    public static func asksForReplay(on bus: BusAddress) -> Bool {
        ReplayServer.servesReplay(on: bus) || bus.replayEndpoint != nil
    }

    /// The broker's replay port when requests on `bus` go through the broker (a TCP bus with
    /// keys), `nil` when they go to the endpoint each server announces.
    public static func brokerPort(on bus: BusAddress) -> String? {
        guard bus.credentials != nil else { return nil }
        return bus.replayEndpoint
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

    /// A DEALER for the streams announced at `endpoint` on `bus`: connected to `endpoint` on IPC
    /// and `--insecure` TCP; on TCP with keys, to the broker's replay port, as a CURVE client
    /// with the bus's key (whatever endpoint a heartbeat names: never in clear text).
    /// - Throws: The socket's errors.
    public static func open(_ endpoint: String, context: ZMQContext, bus: BusAddress) throws(ZMQError)
        -> ZMQSocket
    {
        guard let port = brokerPort(on: bus) else { return try open(endpoint, context: context) }
        let socket = try ZMQSocket(.dealer, context: context, linger: .zero)
        do {
            try socket.set(.maximumMessageSize, Int64(WireFormat.maximumFrameSize))
            try socket.set(.receiveHighWaterMark, ReplayServer.highWaterMark)
            try socket.set(.reconnectIntervalMax, .seconds(1))
            try socket.secure(for: bus)
            try socket.connect(port)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }
}
