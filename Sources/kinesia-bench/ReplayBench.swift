import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaWire

/// `kinesia-bench replay`: how fast a consumer catches up by replay, in events per second.
///
/// Method: a ``ReplayServer`` on its own thread serves `--events` real event messages (the JSON
/// of `kinesia analyze`, about 100 bytes, as a worker publishes them) from an
/// ``InMemoryReplaySource`` over IPC; the client, on this thread, does what
/// ``ExactlyOnceSubscriber`` does: requests of 256, each entry checked as a wire message and
/// handed to an ``ExactlyOnceStateMachine``, the next request sent at each batch end, until the
/// stream's end. Timed from the first request to the last delivery; the median and range of
/// `--rounds` rounds, with the machine's default credit (three batches in flight) and, in the
/// same run, with one batch in flight (a request per round trip, as before the credit): their
/// ratio is what the credit buys. And, alternated with them, the same catch-up through the
/// broker on a TCP bus with CURVE keys (``brokerRound(events:inFlight:)``): `direct_ratio` is
/// its rate over the direct one's (IPC, no CURVE), what the hop through the broker costs.
enum ReplayBench {
    static func main(_ arguments: [String]) -> Int32 {
        var events = 200_000
        var rounds = 3
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--events", let value?) where Int(value).map({ $0 >= 1 }) == true: events = Int(value)!
            case ("--rounds", let value?) where Int(value).map({ $0 >= 1 }) == true: rounds = Int(value)!
            default:
                FileHandle.standardError.write(
                    Data("usage: kinesia-bench replay [--events N] [--rounds R]\n".utf8))
                return 64
            }
        }
        do {
            var rates: [Double] = []
            var single: [Double] = []
            var broker: [Double] = []
            for _ in 0..<rounds {
                rates.append(try round(events: events, inFlight: 3))
                single.append(try round(events: events, inFlight: 1))
                broker.append(try brokerRound(events: events, inFlight: 3))
            }
            rates.sort()
            single.sort()
            broker.sort()
            emit(
                ["bench": "replay", "transport": "ipc"],
                [
                    "events": .int(events), "rounds": .int(rounds),
                    "batch": .int(Int(ReplayFormat.maximumBatch)),
                    "events_per_s": .double(rates[rates.count / 2], 0),
                    "events_per_s_min": .double(rates.first!, 0),
                    "events_per_s_max": .double(rates.last!, 0),
                    "in_flight": .int(3),
                    "one_in_flight_events_per_s": .double(single[single.count / 2], 0),
                    "credit_ratio": .double(rates[rates.count / 2] / single[single.count / 2], 2),
                ])
            emit(
                ["bench": "replay", "transport": "tcp-curve-broker"],
                [
                    "events": .int(events), "rounds": .int(rounds),
                    "batch": .int(Int(ReplayFormat.maximumBatch)),
                    "events_per_s": .double(broker[broker.count / 2], 0),
                    "events_per_s_min": .double(broker.first!, 0),
                    "events_per_s_max": .double(broker.last!, 0),
                    "in_flight": .int(3),
                    "direct_ratio": .double(broker[broker.count / 2] / rates[rates.count / 2], 2),
                ])
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench replay: \(error)\n".utf8))
            return 1
        }
    }

    /// `events` event messages of `topic` on `stream`, as a worker journals them.
    static func source(events: Int, topic: Topic, stream: StreamID) throws -> InMemoryReplaySource {
        let source = InMemoryReplaySource(capacityPerStream: events)
        var encoder = WireEncoder(streamID: stream)
        var payload: [UInt8] = []
        for index in 0..<events {
            let json = MotionJSON.encode(
                .repCompleted(
                    Rep(
                        peak: 90 + Double(index % 40), faults: [], start: Double(index),
                        end: Double(index) + 1.5)),
                at: Double(index) + 1.5)
            try encoder.encode(json: Array(json.utf8), on: topic, into: &payload)
            source.append(
                topic: topic, stream: stream, sequence: UInt64(index), frames: [topic.bytes, payload])
        }
        return source
    }

    /// One catch-up of `events` events; returns events per second.
    static func round(events: Int, inFlight: Int) throws -> Double {
        let topic = try Topic.event(camera: "cam0", session: "left")
        let stream = StreamID.random()
        let directory = try IPCDirectory.makeTemporary(in: "/tmp")
        defer { directory.remove() }
        let context = try ZMQContext()
        defer { context.terminate() }
        let endpoint = "ipc://\(directory.path)/replay.sock"
        let ready = DispatchSemaphore(value: 0)
        let serving = ServingFlag()
        let server = Thread {
            do {
                let source = try source(events: events, topic: topic, stream: stream)
                let server = try ReplayServer(endpoint: endpoint)
                defer { server.close() }
                ready.signal()
                while serving.isOn {
                    var poller = Poller()
                    poller.add(server.socket, for: .readable)
                    _ = try poller.poll(timeout: .milliseconds(20))
                    try server.serve(from: source)
                }
            } catch {
                ready.signal()
            }
        }
        server.start()
        ready.wait()
        defer { serving.turnOff() }

        let client = try ZMQSocket(.dealer, context: context)
        defer { client.close() }
        try client.set(.maximumMessageSize, Int64(WireFormat.maximumFrameSize))
        try client.connect(endpoint)
        return try catchUp(client: client, events: events, topic: topic, stream: stream, inFlight: inFlight)
    }

    /// What ``ExactlyOnceSubscriber`` does to catch up on `client`, timed from the first
    /// request to the last delivery; returns events per second.
    static func catchUp(client: ZMQSocket, events: Int, topic: Topic, stream: StreamID, inFlight: Int) throws
        -> Double
    {
        var machine = ExactlyOnceStateMachine<WireMessage>(start: .beginning, maximumInFlight: inFlight)
        let key = ReplayStreamKey(topic: topic, stream: stream)
        var delivered = 0
        var frames: [[UInt8]] = []
        let clock = ContinuousClock()
        let started = clock.now

        func perform(_ actions: [ExactlyOnceStateMachine<WireMessage>.Action]) throws {
            for action in actions {
                switch action {
                case .deliver: delivered += 1
                case .request(_, let request): try client.send([request.encoded()])
                case .lost(_, let sequences): throw BenchError.lost("lost \(sequences) of \(events)")
                }
            }
        }

        try perform(
            machine.announced(
                ReplayAnnouncement(
                    endpoint: "bench",
                    streams: [
                        ReplayStreamInfo(topic: topic, stream: stream, first: 0, last: UInt64(events - 1))
                    ]),
                now: .zero))
        while delivered < events {
            try client.receive(into: &frames)
            switch try ReplayReply.decode(frames) {
            case .entry(let entry):
                let message = try WireMessage.decode(topic: entry.frames[0], payload: entry.frames[1])
                try perform(
                    machine.received(key, sequence: entry.sequence, message: message, live: false, now: .zero)
                )
            case .end(let end):
                try perform(machine.replayEnded(end, now: .zero))
            case .error(let failure):
                throw BenchError.lost("the server refused a request: \(failure)")
            }
        }
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return Double(events) / seconds
    }

    enum BenchError: Error, CustomStringConvertible {
        case lost(String)

        var description: String {
            switch self {
            case .lost(let what): what
            }
        }
    }

    final class ServingFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var on = true
        var isOn: Bool { lock.withLock { on } }
        func turnOff() { lock.withLock { on = false } }
    }
}
