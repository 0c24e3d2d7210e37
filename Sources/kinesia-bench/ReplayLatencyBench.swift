import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaSimulation
import KinesiaWire

/// `kinesia-bench replay-latency`: how long a worker that found a hole in a camera's poses
/// waits for the ingest's answer (it holds the camera's live poses behind the hole until then).
///
/// Method: `--requests` requests of one pose each, one after the other, 3 ms apart, to the
/// replay endpoint `--endpoint` of a `kinesia ingest` (a simulation at 60 poses/s, paced and
/// journaled: the loop that paces its poses serves its replay) and, alternated request by
/// request, to a ``ReplayServer`` on a thread of this process that does nothing but wait for
/// requests (the floor: the round trip at best), holding poses of the same size. Each request
/// asks for a pose already journaled (`--topic`, the stream the ingest serves now, from
/// sequence 1 on). Prints the medians and 90th percentiles of both, in microseconds, and the
/// ratio of the medians.
enum ReplayLatencyBench {
    static func main(_ arguments: [String]) -> Int32 {
        var endpoint: String?
        var topicName = "pose/cam0/"
        var requests = 300
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--endpoint", let value?): endpoint = value
            case ("--topic", let value?): topicName = value
            case ("--requests", let value?) where Int(value).map({ $0 >= 1 }) == true: requests = Int(value)!
            default:
                return usage()
            }
        }
        guard let endpoint else { return usage() }
        do {
            let topic = try Topic(parsing: topicName)
            let floor = try FloorServer(topic: topic)
            defer { floor.stop() }
            let context = try ZMQContext()
            defer { context.terminate() }
            let ingest = try client(context: context, endpoint: endpoint)
            defer { ingest.close() }
            let local = try client(context: context, endpoint: floor.endpoint)
            defer { local.close() }
            var ingestTimes: [Double] = []
            var floorTimes: [Double] = []
            for index in 0..<requests {
                let from = UInt64(1 + index % 50)
                ingestTimes.append(
                    try roundTrip(
                        ingest,
                        ReplayRequest(
                            requestID: UInt32(index + 1), topic: topic, stream: nil, from: from, limit: 1)))
                floorTimes.append(
                    try roundTrip(
                        local,
                        ReplayRequest(
                            requestID: UInt32(index + 1), topic: topic, stream: floor.stream, from: from,
                            limit: 1)))
                usleep(3_000)
            }
            ingestTimes.sort()
            floorTimes.sort()
            let ingestMedian = ingestTimes[ingestTimes.count / 2]
            let floorMedian = floorTimes[floorTimes.count / 2]
            emit(
                ["bench": "replay_latency"],
                [
                    "requests": .int(requests),
                    "ingest_median_us": .double(ingestMedian, 0),
                    "ingest_p90_us": .double(ingestTimes[ingestTimes.count * 9 / 10], 0),
                    "ingest_max_us": .double(ingestTimes.last!, 0),
                    "floor_median_us": .double(floorMedian, 0),
                    "floor_p90_us": .double(floorTimes[floorTimes.count * 9 / 10], 0),
                    "ratio": .double(ingestMedian / floorMedian, 2),
                ])
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench replay-latency: \(error)\n".utf8))
            return 1
        }
    }

    private static func usage() -> Int32 {
        FileHandle.standardError.write(
            Data("usage: kinesia-bench replay-latency --endpoint ENDPOINT [--topic T] [--requests N]\n".utf8))
        return 64
    }

    private static func client(context: ZMQContext, endpoint: String) throws -> ZMQSocket {
        let socket = try ZMQSocket(.dealer, context: context)
        try socket.set(.maximumMessageSize, Int64(WireFormat.maximumFrameSize))
        try socket.set(.linger, .zero)
        try socket.connect(endpoint)
        return socket
    }

    /// Sends `request` and receives until its batch ends; returns the microseconds it took.
    private static func roundTrip(_ socket: ZMQSocket, _ request: ReplayRequest) throws -> Double {
        var frames: [[UInt8]] = []
        let clock = ContinuousClock()
        let started = clock.now
        try socket.send([request.encoded()])
        var entries = 0
        while true {
            try socket.receive(into: &frames)
            switch try ReplayReply.decode(frames) {
            case .entry: entries += 1
            case .end:
                guard entries == 1 else {
                    throw ReplayBench.BenchError.lost("\(entries) entries for one pose")
                }
                let elapsed = clock.now - started
                return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds)
                    * 1e-12
            case .error(let failure):
                throw ReplayBench.BenchError.lost("the server refused a request: \(failure)")
            }
        }
    }

    /// A ``ReplayServer`` on its own thread, waiting only for requests, holding 60 simulated poses.
    final class FloorServer: @unchecked Sendable {
        let endpoint: String
        let stream = StreamID.random()
        private let directory: IPCDirectory
        private let serving = ReplayBench.ServingFlag()
        private let finished = DispatchSemaphore(value: 0)

        init(topic: Topic) throws {
            directory = try IPCDirectory.makeTemporary(in: "/tmp")
            endpoint = "ipc://\(directory.path)/floor.sock"
            let ready = DispatchSemaphore(value: 0)
            let failure = Failure()
            let thread = Thread { [endpoint, stream, serving, finished] in
                defer { finished.signal() }
                let source: InMemoryReplaySource
                let server: ReplayServer
                do {
                    source = try Self.poses(topic: topic, stream: stream)
                    server = try ReplayServer(endpoint: endpoint)
                } catch {
                    failure.description = "\(error)"
                    ready.signal()
                    return
                }
                defer { server.close() }
                ready.signal()
                while serving.isOn {
                    var poller = Poller()
                    poller.add(server.socket, for: .readable)
                    guard (try? poller.poll(timeout: .milliseconds(20))) != nil,
                        (try? server.serve(from: source)) != nil
                    else { return }
                }
            }
            thread.start()
            ready.wait()
            if let description = failure.description {
                finished.wait()
                directory.remove()
                throw ReplayBench.BenchError.lost("the floor's server did not start: \(description)")
            }
        }

        /// 60 simulated poses of `topic` on `stream`, as an ingest journals them.
        private static func poses(topic: Topic, stream: StreamID) throws -> InMemoryReplaySource {
            let source = InMemoryReplaySource(capacityPerStream: 64)
            let simulator = try ExerciseSimulator(
                exercise: .shoulderAbduction, options: SimulationOptions(seed: 1, frameRate: 60))
            var poses = simulator.endless()
            var encoder = WireEncoder(streamID: stream)
            var payload: [UInt8] = []
            for sequence in 0..<60 {
                try encoder.encode(poses.next()!, on: topic, into: &payload)
                source.append(
                    topic: topic, stream: stream, sequence: UInt64(sequence), frames: [topic.bytes, payload])
            }
            return source
        }

        /// What the serving thread says went wrong as it started.
        private final class Failure: @unchecked Sendable {
            private let lock = NSLock()
            private var text: String?
            var description: String? {
                get { lock.withLock { text } }
                set { lock.withLock { text = newValue } }
            }
        }

        func stop() {
            serving.turnOff()
            finished.wait()
            directory.remove()
        }
    }
}
