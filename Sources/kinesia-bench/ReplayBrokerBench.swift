import Foundation
import KinesiaBroker
import KinesiaBus
import KinesiaClient
import KinesiaService
import KinesiaWire

/// `kinesia-bench replay`'s figure through the broker: the same catch-up as
/// ``ReplayBench/round(events:inFlight:)``, on a TCP bus with CURVE keys, the requests and
/// replies through the broker's replay port (``BrokerService`` in this process, its own
/// thread; the server a ``BrokerReplayLink`` with a worker's key on another; the client a
/// consumer's key). Timed after one request of one entry has come back (the CURVE handshakes
/// and the server's first announcement are not the catch-up's).
extension ReplayBench {
    /// One catch-up of `events` events through the broker; returns events per second.
    static func brokerRound(events: Int, inFlight: Int) throws -> Double {
        let topic = try Topic.event(camera: "cam0", session: "left")
        let stream = StreamID.random()
        let directory = try IPCDirectory.makeTemporary(in: "/tmp")
        defer { directory.remove() }
        let allowed = directory.path + "/allowed"
        let brokerKey = BusKey(name: "broker", role: .broker, keyPair: try CurveKeyPair.generate())
        let workerKey = BusKey(name: "worker", role: .worker, keyPair: try CurveKeyPair.generate())
        let consumerKey = BusKey(name: "consumer", role: .consumer, keyPair: try CurveKeyPair.generate())
        try AllowedKeys.allow(workerKey.publicKey, in: allowed)
        try AllowedKeys.allow(consumerKey.publicKey, in: allowed)
        let port = Int.random(in: 20_000...60_000)
        let bus = try BusAddress(parsing: "tcp://127.0.0.1:\(port)")

        let stop = StopToken()
        let brokerDone = DispatchSemaphore(value: 0)
        let broker = Thread {
            let service = BrokerService(
                BrokerService.Configuration(
                    bus: bus, security: .curve(brokerKey, allowedDirectory: allowed), highWaterMark: 1000),
                log: Logger(label: "broker", sink: CapturedText()))
            do {
                try service.run(until: stop)
            } catch {
                FileHandle.standardError.write(Data("kinesia-bench replay: broker: \(error)\n".utf8))
            }
            brokerDone.signal()
        }
        broker.start()
        defer {
            stop.request()
            brokerDone.wait()
        }

        let ready = DispatchSemaphore(value: 0)
        let serving = ServingFlag()
        var workerBus = bus
        workerBus.credentials = BusCredentials(key: workerKey, serverKey: brokerKey.publicKey)
        let serverBus = workerBus
        let served = ReplayServeFrame.Stream(topic: topic, stream: stream)
        let server = Thread {
            do {
                let source = try source(events: events, topic: topic, stream: stream)
                let context = try ZMQContext()
                defer { context.terminate() }
                let link = try BrokerReplayLink(context: context, bus: serverBus) { [served] }
                defer { link.close() }
                ready.signal()
                while serving.isOn {
                    var poller = Poller()
                    poller.add(link.socket, for: .readable)
                    _ = try poller.poll(timeout: .milliseconds(20))
                    try link.serve(from: source)
                }
            } catch {
                ready.signal()
            }
        }
        server.start()
        ready.wait()
        defer { serving.turnOff() }

        let context = try ZMQContext()
        defer { context.terminate() }
        var clientBus = bus
        clientBus.credentials = BusCredentials(key: consumerKey, serverKey: brokerKey.publicKey)
        let client = try ReplayDealer.open("broker", context: context, bus: clientBus)
        defer { client.close() }
        // Warm: the handshakes, and the broker told of the stream.
        try client.set(.receiveTimeout, .seconds(10))
        try client.send([
            ReplayRequest(requestID: 0, topic: topic, stream: stream, from: 0, limit: 1).encoded()
        ])
        var frames: [[UInt8]] = []
        while true {
            try client.receive(into: &frames)
            if case .entry = try ReplayReply.decode(frames) { continue }
            break
        }
        return try catchUp(client: client, events: events, topic: topic, stream: stream, inFlight: inFlight)
    }
}
