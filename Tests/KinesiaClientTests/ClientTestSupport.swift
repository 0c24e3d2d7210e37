import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaSystem
import KinesiaWire
import Synchronization
import Testing

/// Wire messages as a worker sends them, for the decoding tests.
enum Sent {
    static let stream = StreamID(0x0123_4567_89ab_cdef)

    static func header(_ kind: PayloadKind, _ sequence: UInt64, stream: StreamID = stream) -> WireHeader {
        WireHeader(kind: kind, streamID: stream, sequence: sequence, sentAt: 1_700_000_000_000_000_000)
    }

    static func event(
        _ event: MotionEvent, at t: Double, sequence: UInt64, camera: String = "cam0",
        session: String = "left",
        stream: StreamID = stream
    ) throws -> WireMessage {
        WireMessage(
            topic: try .event(camera: camera, session: session),
            header: header(.event, sequence, stream: stream),
            body: .event(json: MotionJSON.encode(event, at: t)))
    }

    static func snapshot(_ snapshot: MotionSnapshot, at t: Double, sequence: UInt64) throws -> WireMessage {
        WireMessage(
            topic: try .snapshot(camera: "cam0", session: "left"), header: header(.snapshot, sequence),
            body: .snapshot(json: MotionJSON.encode(snapshot, at: t)))
    }

    /// An event or snapshot message whose JSON is `json` as given.
    static func json(_ json: String, kind: PayloadKind, on topic: Topic, sequence: UInt64) -> WireMessage {
        let body: WireMessage.Body = kind == .event ? .event(json: json) : .snapshot(json: json)
        return WireMessage(topic: topic, header: header(kind, sequence), body: body)
    }

    static let report = HealthReport(
        process: "worker-cam0", role: "worker", pid: 4242, uptime: 12.5, counters: ["poses": 1200])

    static func health(sequence: UInt64) throws -> WireMessage {
        WireMessage(
            topic: try .health(process: "worker-cam0"), header: header(.health, sequence),
            body: .health(report))
    }

    static let pose = Pose(
        points: [.leftHip: CGPoint(x: 310, y: 420), .leftKnee: CGPoint(x: 320, y: 560)], timestamp: 3.25,
        imageSize: CGSize(width: 640, height: 480), confidence: [.leftHip: 0.9, .leftKnee: 0.75])

    static func pose(sequence: UInt64) throws -> WireMessage {
        WireMessage(topic: try .pose(camera: "cam0"), header: header(.pose, sequence), body: .pose(pose))
    }

    static let rep = Rep(peak: 95.25, faults: [.keepTrunkUpright], start: 1.5, end: 3.0)
}

/// What a subscriber does with each received message, without a socket: judges its sequence
/// number, then turns the delivery into values.
struct Receiver {
    var tracker = SequenceTracker<Topic>()

    mutating func receive(_ message: WireMessage) -> [BusMessage] {
        let result = tracker.record(message.header, on: message.topic)
        guard result.isDelivered else { return [] }
        return BusMessage.messages(from: .message(message, result))
    }
}

/// A stand-in for the broker's backend: an XPUB socket bound where ``BusAddress`` subscribers
/// connect, in a private directory. It sees their subscriptions (`0x01` + prefix) and
/// unsubscriptions (`0x00` + prefix; libzmq sends one when the last subscriber of a prefix
/// closes its socket), and sends them whatever frames a test wants.
final class FakeBroker {
    let directory: String
    let bus: BusAddress
    let socket: ZMQSocket
    private(set) var subscriptions: [String] = []
    private(set) var unsubscriptions: [String] = []

    init() throws {
        directory = NSTemporaryDirectory() + "kinesia-client-\(UUID().uuidString.prefix(8))"
        bus = try BusAddress(parsing: directory)
        try bus.prepare()
        socket = try ZMQSocket(.xpub, context: try ZMQContext())
        _ = try socket.bind(bus.subscriberEndpoint)
    }

    deinit {
        socket.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Sends frames.
    func send(_ frames: [[UInt8]]) throws { try socket.send(frames) }

    /// Sends a wire message.
    func send(_ message: WireMessage) throws {
        let (topic, payload) = try message.encode()
        try send([topic, payload])
    }

    /// Reads what the subscribers sent until `condition` holds, every 5 ms, for at most
    /// `timeout`.
    func waitUntil(timeout: Duration = .seconds(20), _ condition: (FakeBroker) -> Bool) async throws -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            while let frames = try socket.tryReceive() {
                guard let frame = frames.first, let flag = frame.first else { continue }
                let prefix = String(decoding: frame.dropFirst(), as: UTF8.self)
                if flag == 1 {
                    subscriptions.append(prefix)
                } else if flag == 0 {
                    unsubscriptions.append(prefix)
                }
            }
            if condition(self) { return true }
            if clock.now >= deadline { return false }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// A flag shared with a receiving thread or a task.
final class Flag: Sendable {
    private let raw = Atomic<Bool>(false)

    func set() { raw.store(true, ordering: .sequentiallyConsistent) }

    var isSet: Bool { raw.load(ordering: .sequentiallyConsistent) }
}

/// A count shared with a task.
final class Count: Sendable {
    private let raw = Atomic<Int>(0)

    func increment() { raw.add(1, ordering: .sequentiallyConsistent) }

    var value: Int { raw.load(ordering: .sequentiallyConsistent) }
}

/// A stand-in broker, six `holdStarted` events of one stream of `event/<camera>/left/` (their
/// frames, and a replay source holding them), and an exactly-once subscriber of `event/` from
/// the beginning whose decisions are timed on a manual clock. Close it with ``close()``.
final class ManualClockSubscriberSite {
    let broker: FakeBroker
    let topic: Topic
    let source = InMemoryReplaySource()
    private(set) var published: [[[UInt8]]] = []
    let context: ZMQContext
    let clock = ManualClock()
    let subscriber: ExactlyOnceSubscriber

    init(camera: String = "cam0") async throws {
        broker = try FakeBroker()
        topic = try Topic.event(camera: camera, session: "left")
        var encoder = WireEncoder(streamID: Sent.stream)
        var payload: [UInt8] = []
        for index in 0..<6 {
            try encoder.encode(
                json: Array("{\"type\":\"holdStarted\",\"t\":\(index)}".utf8), on: topic, into: &payload)
            published.append([topic.bytes, payload])
            source.append(
                topic: topic, stream: Sent.stream, sequence: UInt64(index), frames: published[index])
        }
        context = try ZMQContext()
        subscriber = try ExactlyOnceSubscriber(
            context: context, bus: broker.bus, topics: [.kind(.event)], from: .beginning, clock: clock)
        #expect(try await broker.waitUntil { $0.subscriptions.contains("event/") })
    }

    func close() {
        subscriber.close()
        context.terminate()
    }
}
