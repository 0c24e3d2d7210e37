import Foundation
import KinesiaBroker
import KinesiaBus
import KinesiaClient
import Synchronization

/// `kinesia-bench broker`: the broker's forwarding, `[topic, 256-byte payload]` messages from a
/// PUB through the broker's XSUB/XPUB to a SUB, over TCP on 127.0.0.1, four ways in one run:
///
/// - `zmq_proxy`: libzmq's proxy (``ZMQProxy``), no security: what the broker did before;
/// - `forwarder`: the broker's own loop (``ZMQForwarder`` with the rights filter of
///   `kinesia broker`, reading epoch frames as it does) and its ZAP handler (NULL mechanism with a ZAP domain, as over IPC);
/// - `zmq_proxy_curve`: libzmq's proxy with CURVE on both sides (no ZAP handler);
/// - `forwarder_curve`: the broker as it runs on a TCP bus with keys: CURVE, ZAP, rights.
///
/// Method as `kinesia-bench bus`: high-water marks of 0, probes until the subscriber sees one,
/// throughput timed at the subscriber from the first data message to the last.
enum BrokerBench {
    static let size = 256

    static func main(_ arguments: [String]) -> Int32 {
        var messages = 200_000
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--messages", let value?) where Int(value).map({ $0 >= 2 }) == true: messages = Int(value)!
            default:
                FileHandle.standardError.write(Data("usage: kinesia-bench broker [--messages N>=2]\n".utf8))
                return 64
            }
        }
        do {
            for path in ["zmq_proxy", "forwarder", "zmq_proxy_curve", "forwarder_curve"] {
                try run(path: path, messages: messages)
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench broker: \(error)\n".utf8))
            return 1
        }
    }

    static func run(path: String, messages: Int) throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let curve = path.hasSuffix("_curve")
        let own = path.hasPrefix("forwarder")
        let server = try CurveKeyPair.generate()
        let client = try CurveKeyPair.generate()
        // The ZAP handler of the broker: every key admitted with a role that may publish poses.
        let zap =
            own
            ? try ZAPHandler(context: context) { _ in .admit(userID: "ingest/bench") } : nil
        defer { zap?.stop() }
        let frontend = try BusBench.makeSocket(.xsub, context: context)
        let backend = try BusBench.makeSocket(.xpub, context: context)
        if own {
            try frontend.set(.zapDomain, BrokerAdmission.zapDomain)
            try backend.set(.zapDomain, BrokerAdmission.zapDomain)
        }
        if curve {
            try frontend.makeCurveServer(secretKey: server.secretKey)
            try backend.makeCurveServer(secretKey: server.secretKey)
        }
        let frontEndpoint = try frontend.bind("tcp://127.0.0.1:*")
        let backEndpoint = try backend.bind("tcp://127.0.0.1:*")
        let proxy: ZMQProxy?
        let forwarder: ZMQForwarder?
        if own {
            // As `kinesia broker` runs it: the rights filter, and epoch frames read and judged.
            forwarder = try ZMQForwarder(
                frontend: frontend, backend: backend,
                filter: { topic, userID in BrokerAdmission.verdict(topic: topic, userID: userID) },
                fencesEpochs: true)
            proxy = nil
        } else {
            proxy = try ZMQProxy(frontend: frontend, backend: backend)
            forwarder = nil
        }
        defer {
            proxy?.stop()
            forwarder?.stop()
        }

        let publisher = try BusBench.makeSocket(.pub, context: context)
        if curve { try publisher.makeCurveClient(serverKey: server.publicKey, keyPair: client) }
        try publisher.connect(frontEndpoint)
        let probed = Atomic<Bool>(false)
        let result = Mutex<(Int, Double, String?)>((0, 0, nil))
        let done = DispatchSemaphore(value: 0)
        let transfer = Thread {
            defer { done.signal() }
            do {
                let subscriber = try BusBench.makeSocket(.sub, context: context)
                defer { subscriber.close() }
                if curve { try subscriber.makeCurveClient(serverKey: server.publicKey, keyPair: client) }
                try subscriber.subscribe("pose/")
                try subscriber.connect(backEndpoint)
                var frames: [[UInt8]] = []
                let clock = ContinuousClock()
                var start = clock.now
                var count = 0
                while count < messages {
                    try subscriber.receive(into: &frames)
                    if frames.count == 2, frames[1].first == UInt8(ascii: "p") {
                        probed.store(true, ordering: .releasing)
                        continue
                    }
                    if count == 0 { start = clock.now }
                    count += 1
                }
                result.withLock { $0 = (count, BusBench.seconds(start.duration(to: clock.now)), nil) }
            } catch {
                probed.store(true, ordering: .releasing)
                result.withLock { $0.2 = "\(error)" }
            }
        }
        transfer.start()
        let topic = Array("pose/cam0/".utf8)
        var payload = [UInt8](repeating: UInt8(ascii: "x"), count: size)
        payload[0] = UInt8(ascii: "p")
        while !probed.load(ordering: .acquiring) {
            try publisher.send([topic, payload])
            Thread.sleep(forTimeInterval: 0.001)
        }
        payload[0] = UInt8(ascii: "d")
        let message = [topic, payload]
        if result.withLock({ $0.2 }) == nil {
            for _ in 0..<messages { try publisher.send(message) }
        }
        done.wait()
        publisher.close()
        let (received, seconds, error) = result.withLock { $0 }
        if let error { throw BusBench.BenchError(message: error) }
        BusBench.emit(
            #"{"impl":"swift","bench":"broker","path":"\#(path)","transport":"tcp","curve":\#(curve),"#
                + #""size":\#(size),"messages":\#(messages),"received":\#(received),"#
                + #""seconds":\#(BusBench.fixed(seconds, 6)),"msgs_per_sec":\#(BusBench.fixed(Double(received) / seconds, 1))}"#
        )
    }
}
