import KinesiaMotion
import KinesiaWire

/// Builds bus messages as the workers and processes send them, for the watch and status tests.
struct WatchFixtures {
    var stream = StreamID(0xABCD)
    private var sequences: [String: UInt64] = [:]

    private mutating func header(_ kind: PayloadKind, topic: Topic, sequence: UInt64? = nil) -> WireHeader {
        let next = sequence ?? sequences[topic.string, default: 0]
        sequences[topic.string] = next + 1
        return WireHeader(kind: kind, streamID: stream, sequence: next, sentAt: 1_000)
    }

    mutating func event(
        _ event: MotionEvent, at t: Double, camera: String = "cam0", session: String = "left",
        sequence: UInt64? = nil
    ) -> WireMessage {
        let topic = try! Topic.event(camera: camera, session: session)
        return WireMessage(
            topic: topic, header: header(.event, topic: topic, sequence: sequence),
            body: .event(json: MotionJSON.encode(event, at: t)))
    }

    mutating func snapshot(
        _ snapshot: MotionSnapshot, at t: Double, camera: String = "cam0", session: String = "left"
    ) -> WireMessage {
        let topic = try! Topic.snapshot(camera: camera, session: session)
        return WireMessage(
            topic: topic, header: header(.snapshot, topic: topic),
            body: .snapshot(json: MotionJSON.encode(snapshot, at: t)))
    }

    mutating func health(
        _ process: String, role: String, pid: Int = 100, uptime: Double = 10, counters: [String: Int] = [:]
    ) -> WireMessage {
        let topic = try! Topic.health(process: process)
        return WireMessage(
            topic: topic, header: header(.health, topic: topic),
            body: .health(
                HealthReport(process: process, role: role, pid: pid, uptime: uptime, counters: counters)))
    }

    mutating func run(_ json: String, camera: String = "cam0", session: String = "left") -> WireMessage {
        let topic = try! Topic.session(camera: camera, session: session)
        return WireMessage(topic: topic, header: header(.session, topic: topic), body: .session(json: json))
    }

    mutating func pose(camera: String = "cam0") -> WireMessage {
        let topic = try! Topic.pose(camera: camera)
        return WireMessage(topic: topic, header: header(.pose, topic: topic), body: .pose(Pose(timestamp: 1)))
    }

    /// A snapshot in the middle of a set: 87.4°, best 142.25°, 3 clean, 1 rejected.
    static var midSet: MotionSnapshot {
        var snapshot = MotionSnapshot()
        snapshot.value = 87.4
        snapshot.best = 142.25
        snapshot.repCount = 3
        snapshot.rejectedCount = 1
        snapshot.confidence = 0.82
        snapshot.isVisible = true
        snapshot.isRunning = true
        return snapshot
    }
}
