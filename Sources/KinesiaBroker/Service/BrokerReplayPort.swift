import KinesiaBus
import KinesiaClient
import KinesiaService
import KinesiaSystem
import KinesiaWire

/// The broker's replay port on a TCP bus with keys (``BusAddress/replayEndpoint``, TCP
/// `port + 3`): a ROUTER behind the broker's CURVE key and ZAP handler (the same allowed keys,
/// the same roles as its other ports), through which replay servers and their clients talk.
/// ``BrokerReplayRouting`` decides; this owns the socket and does what it says.
///
/// The ROUTER is `ZMQ_ROUTER_MANDATORY`: a reply for a client whose queue is full (or that has
/// gone) is dropped and counted (`replay.dropped`), never waited for: the client asks again
/// after its timeout, as with a server of its own.
///
/// Not `Sendable`: used on the broker's loop.
final class BrokerReplayPort {
    /// The endpoint bound.
    let endpoint: String
    private let socket: ZMQSocket
    private var routing = BrokerReplayRouting()
    private let clock: ElapsedClock
    private let log: Logger
    private var frames: [[UInt8]] = []
    private var dropped = 0
    private var lastTick: Duration?

    /// Binds the ROUTER at `endpoint`, a CURVE server with `key`, in the broker's ZAP domain.
    /// - Throws: ``ZMQError`` (``ZMQError/addressInUse`` when the port is taken).
    init(endpoint: String, key: BusKey, context: ZMQContext, log: Logger, clock: ElapsedClock)
        throws(ZMQError)
    {
        self.log = log
        self.clock = clock
        let socket = try ZMQSocket(.router, context: context, linger: .zero)
        do {
            try socket.set(.maximumMessageSize, Int64(WireFormat.maximumFrameSize))
            try socket.set(.sendHighWaterMark, ReplayServer.highWaterMark)
            try socket.set(.receiveHighWaterMark, ReplayServer.highWaterMark)
            try socket.set(.handshakeInterval, .seconds(5))
            try socket.set(.routerMandatory, true)
            try socket.set(.zapDomain, BrokerAdmission.zapDomain)
            try socket.makeCurveServer(secretKey: key.keyPair.secretKey)
            self.endpoint = try socket.bind(endpoint)
        } catch {
            socket.close()
            throw error
        }
        self.socket = socket
    }

    /// Waits at most `timeout` for a message, then routes the messages waiting (at most
    /// `budget`) and what the time makes due.
    func serve(waiting timeout: Duration, budget: Int = 4096) {
        var poller = Poller()
        poller.add(socket, for: .readable)
        _ = try? poller.poll(timeout: timeout)
        var handled = 0
        var userID: String?
        while handled < budget, (try? socket.tryReceive(into: &frames, userID: &userID)) == true {
            handled += 1
            let peer = (userID ?? "").withCString { BrokerAdmission.Sender.of(userID: $0).peer }
            perform(routing.received(frames, peer: userID == nil ? nil : peer, now: clock.now))
        }
        // The time's decisions (parked requests due, requests, servers and streams forgotten)
        // ten times a second: each goes through every request under way.
        let now = clock.now
        if lastTick.map({ now - $0 >= .milliseconds(100) }) ?? true {
            lastTick = now
            perform(routing.tick(now: now))
        }
    }

    /// The counters of `health/broker/`: the routing's and `replay.dropped`.
    var counters: [String: Int] {
        var values = routing.counters
        values["replay.dropped"] = dropped
        return values
    }

    /// Closes the socket.
    func close() { socket.close() }

    private func perform(_ outputs: [BrokerReplayRouting.Output]) {
        for output in outputs {
            switch output {
            case .send(let message):
                let sent: Bool
                do {
                    sent = try socket.trySend(message)
                } catch {
                    sent = false
                }
                if !sent { dropped += 1 }
            case .log(let line):
                log.warning(line)
            }
        }
    }
}
