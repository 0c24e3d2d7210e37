import Foundation
import KinesiaBus
import Synchronization

/// `kinesia-bench bus`: 256-byte messages PUB to SUB, directly and through an XSUB/XPUB proxy:
/// throughput and round-trip latency, measured exactly as `scripts/bench_zmq_floor.c` (bare
/// libzmq, the floor) and `scripts/bench_zmq_pyzmq.py` (pyzmq) measure them.
///
/// Method: single-frame 256-byte messages; high-water marks of 0 (no limit) everywhere so that
/// nothing is dropped; the publisher sends probes until the subscriber has seen one (slow
/// joiner), then the data; throughput is timed at the subscriber from the first data message to
/// the last. Latency is a ping-pong through two PUB/SUB pairs (through the proxy both ways): the
/// median and 99th percentile of the round trip. Publisher and subscriber run on two threads of
/// this process, each socket confined to its thread.
enum BusBench {
    static let size = 256

    struct Options {
        var messages = 200_000
        var roundTrips = 20_000
        var transport = "tcp"
    }

    static func main(_ arguments: [String]) -> Int32 {
        var options = Options()
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--messages", let value?) where Int(value).map({ $0 >= 2 }) == true:
                options.messages = Int(value)!
            case ("--round-trips", let value?) where Int(value).map({ $0 >= 1 }) == true:
                options.roundTrips = Int(value)!
            case ("--transport", let value?) where ["tcp", "ipc", "inproc"].contains(value):
                options.transport = value
            default:
                FileHandle.standardError.write(
                    Data(
                        "usage: kinesia-bench bus [--messages N>=2] [--round-trips N>=1] [--transport tcp|ipc|inproc]\n"
                            .utf8))
                return 64
            }
        }
        do {
            try run(options)
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench bus: \(error)\n".utf8))
            return 1
        }
    }

    static func run(_ options: Options) throws {
        let context = try ZMQContext()
        let directory = options.transport == "ipc" ? try IPCDirectory.makeTemporary(in: "/tmp") : nil
        defer { directory?.remove() }
        let endpoints = Endpoints(directory: directory, inproc: options.transport == "inproc")
        for path in ["direct", "proxy"] {
            try throughput(path: path, options: options, context: context, endpoints: endpoints)
        }
        for path in ["direct", "proxy"] {
            try latency(path: path, options: options, context: context, endpoints: endpoints)
        }
        context.terminate()
    }

    /// Fresh endpoints of the chosen transport.
    struct Endpoints {
        let directory: IPCDirectory?
        let inproc: Bool

        func fresh(_ name: String) throws -> String {
            if let directory { return try directory.endpoint(name) }
            if inproc { return "inproc://bench-\(name)" }
            return "tcp://127.0.0.1:*"
        }
    }

    static func makeSocket(_ type: SocketType, context: ZMQContext) throws -> ZMQSocket {
        let socket = try ZMQSocket(type, context: context)
        try socket.set(.sendHighWaterMark, 0)
        try socket.set(.receiveHighWaterMark, 0)
        return socket
    }

    static func makeProxy(_ tag: String, context: ZMQContext, endpoints: Endpoints) throws -> ZMQProxy {
        try ZMQProxy(
            context: context, frontend: endpoints.fresh("\(tag)-front"),
            backend: endpoints.fresh("\(tag)-back"),
            highWaterMark: 0)
    }

    /// Flags shared between the two threads of a measurement.
    final class Flags: Sendable {
        let ready = Atomic<Bool>(false)
        let probed = Atomic<Bool>(false)
        let result = Mutex<(received: Int, seconds: Double, error: String?)>((0, 0, nil))
        let boundEndpoint = Mutex<String>("")
    }

    static func throughput(path: String, options: Options, context: ZMQContext, endpoints: Endpoints) throws {
        let proxy = path == "proxy" ? try makeProxy("thr", context: context, endpoints: endpoints) : nil
        let publisher = try makeSocket(.pub, context: context)
        let subscriberEndpoint: String
        if let proxy {
            try publisher.connect(proxy.frontendEndpoint)
            subscriberEndpoint = proxy.backendEndpoint
        } else {
            subscriberEndpoint = try publisher.bind(endpoints.fresh("thr"))
        }
        let flags = Flags()
        let messages = options.messages
        let done = DispatchSemaphore(value: 0)
        Thread {
            defer { done.signal() }
            do {
                let subscriber = try makeSocket(.sub, context: context)
                defer { subscriber.close() }
                try subscriber.subscribe("")
                try subscriber.connect(subscriberEndpoint)
                var frames: [[UInt8]] = []
                let clock = ContinuousClock()
                var start = clock.now
                var count = 0
                while count < messages {
                    try subscriber.receive(into: &frames)
                    if frames[0].first == UInt8(ascii: "p") {
                        flags.probed.store(true, ordering: .releasing)
                        continue
                    }
                    if count == 0 { start = clock.now }
                    count += 1
                }
                let seconds = seconds(start.duration(to: clock.now))
                flags.result.withLock { $0 = (count, seconds, nil) }
            } catch {
                flags.probed.store(true, ordering: .releasing)
                flags.result.withLock { $0.error = "\(error)" }
            }
        }.start()

        var probe = [UInt8](repeating: UInt8(ascii: "x"), count: size)
        probe[0] = UInt8(ascii: "p")
        let probeMessage = [probe]
        while !flags.probed.load(ordering: .acquiring) {
            try publisher.send(probeMessage)
            Thread.sleep(forTimeInterval: 0.001)
        }
        var data = probe
        data[0] = UInt8(ascii: "d")
        let message = [data]
        if flags.result.withLock({ $0.error }) == nil {
            for _ in 0..<messages { try publisher.send(message) }
        }
        done.wait()
        publisher.close()
        proxy?.stop()
        let result = flags.result.withLock { $0 }
        if let error = result.error { throw BenchError(message: error) }
        emit(
            #"{"impl":"swift","bench":"throughput","path":"\#(path)","transport":"\#(options.transport)","size":\#(size),"#
                + #""messages":\#(messages),"received":\#(result.received),"seconds":\#(fixed(result.seconds, 6)),"#
                + #""msgs_per_sec":\#(fixed(Double(result.received - 1) / result.seconds, 0))}"#)
    }

    static func latency(path: String, options: Options, context: ZMQContext, endpoints: Endpoints) throws {
        let proxy = path == "proxy" ? try makeProxy("lat", context: context, endpoints: endpoints) : nil
        let publisher = try makeSocket(.pub, context: context)
        defer { publisher.close() }
        let subscriber = try makeSocket(.sub, context: context)
        defer { subscriber.close() }
        try subscriber.subscribe("b")
        let pingEndpoint: String
        let pongEndpoint: String?
        if let proxy {
            try publisher.connect(proxy.frontendEndpoint)
            try subscriber.connect(proxy.backendEndpoint)
            pingEndpoint = proxy.backendEndpoint
            pongEndpoint = proxy.frontendEndpoint
        } else {
            pingEndpoint = try publisher.bind(endpoints.fresh("ping"))
            pongEndpoint = nil
        }
        let flags = Flags()
        let pongBind = try endpoints.fresh("pong")
        let done = DispatchSemaphore(value: 0)
        Thread {
            defer { done.signal() }
            do {
                let echoSubscriber = try makeSocket(.sub, context: context)
                defer { echoSubscriber.close() }
                let echoPublisher = try makeSocket(.pub, context: context)
                defer { echoPublisher.close() }
                try echoSubscriber.subscribe("a")
                try echoSubscriber.connect(pingEndpoint)
                if let pongEndpoint {
                    try echoPublisher.connect(pongEndpoint)
                } else {
                    let bound = try echoPublisher.bind(pongBind)
                    flags.boundEndpoint.withLock { $0 = bound }
                }
                flags.ready.store(true, ordering: .releasing)
                var frames: [[UInt8]] = []
                while true {
                    try echoSubscriber.receive(into: &frames)
                    if frames[0][1] == UInt8(ascii: "q") { break }
                    frames[0][0] = UInt8(ascii: "b")
                    try echoPublisher.send(frames)
                }
            } catch {
                flags.result.withLock { $0.error = "\(error)" }
                flags.ready.store(true, ordering: .releasing)
            }
        }.start()
        while !flags.ready.load(ordering: .acquiring) { Thread.sleep(forTimeInterval: 0.0001) }
        if let error = flags.result.withLock({ $0.error }) { throw BenchError(message: error) }
        if pongEndpoint == nil { try subscriber.connect(flags.boundEndpoint.withLock { $0 }) }

        var ping = [UInt8](repeating: UInt8(ascii: "x"), count: size)
        ping[0] = UInt8(ascii: "a")
        ping[1] = UInt8(ascii: "w")
        var message = [ping]
        var reply: [[UInt8]] = []
        // Warm up until both subscriptions are live, then drop the stray pongs.
        while try subscriber.receive(timeout: .milliseconds(1)) == nil { try publisher.send(message) }
        while try subscriber.tryReceive(into: &reply) {}

        message[0][1] = UInt8(ascii: "d")
        var samples: [Double] = []
        samples.reserveCapacity(options.roundTrips)
        let clock = ContinuousClock()
        for sequence in 0..<options.roundTrips {
            message[0].withUnsafeMutableBytes { $0.storeBytes(of: sequence, toByteOffset: 2, as: Int.self) }
            let start = clock.now
            try publisher.send(message)
            while true {
                try subscriber.receive(into: &reply)
                let echoed = reply[0].withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 2, as: Int.self) }
                if reply[0][1] == UInt8(ascii: "d") && echoed == sequence { break }
            }
            samples.append(seconds(start.duration(to: clock.now)) * 1e6)
        }
        message[0][1] = UInt8(ascii: "q")
        try publisher.send(message)
        done.wait()
        proxy?.stop()
        samples.sort()
        let median = samples[samples.count / 2]
        let p99 = samples[Int(Double(samples.count) * 0.99)]
        emit(
            #"{"impl":"swift","bench":"latency","path":"\#(path)","transport":"\#(options.transport)","size":\#(size),"#
                + #""round_trips":\#(options.roundTrips),"median_us":\#(fixed(median, 1)),"p99_us":\#(fixed(p99, 1))}"#
        )
    }

    struct BenchError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Writes one line to standard output at once (no buffering: a pipe sees each result).
    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    static func fixed(_ value: Double, _ digits: Int) -> String {
        String(format: "%.\(digits)f", value)
    }
}
