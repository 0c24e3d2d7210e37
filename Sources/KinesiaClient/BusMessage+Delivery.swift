import KinesiaAnalytics
import KinesiaControl
import KinesiaMotion
import KinesiaWire

extension BusMessage {
    /// The values that one ``BusSubscriber/Delivery`` becomes, in order: a ``BusGap`` first when
    /// the message's sequence number says that messages were lost or that its sender restarted,
    /// then the message itself.
    ///
    /// Events and snapshots are read with ``MotionJSON/decodeEvent(_:)`` and
    /// ``MotionJSON/decodeSnapshot(_:)``, and an event payload whose `"type"` is an analytics
    /// record's with ``AnalyticsJSON/decode(_:)`` (``BusMessage/analytics(_:)``); JSON they refuse becomes a ``MalformedMessage`` with
    /// the message's header (the message did arrive, so a gap before it is still reported). A
    /// late message (``SequenceResult/outOfOrder``) is handed on in place, with no value of its
    /// own. Pure: no I/O, for a receiver that runs its own ``BusSubscriber`` loop.
    ///
    /// ```swift
    /// while let delivery = try subscriber.receive(timeout: .milliseconds(100)) {
    ///     for message in BusMessage.messages(from: delivery) { handle(message) }
    /// }
    /// ```
    public static func messages(from delivery: BusSubscriber.Delivery) -> [BusMessage] {
        switch delivery {
        case .malformed(let topic, let reason):
            return [.malformed(MalformedMessage(topic: topic, reason: .wire(reason)))]
        case .flatPose(let topic, let header, let flat, let result):
            return gap(result, topic: topic, header: header)
                + [.pose(BusPose(pose: flat.pose, topic: topic, header: header))]
        case .message(let message, let result):
            return gap(result, topic: message.topic, header: message.header) + [typed(message)]
        }
    }

    /// The gap a sequence result announces, if any.
    static func gap(_ result: SequenceResult, topic: Topic, header: WireHeader) -> [BusMessage] {
        switch result {
        case .gap(let missed):
            return [.gap(.missed(topic: topic, count: missed, before: header.sequence))]
        case .newStream(let restart, let missed):
            var gaps: [BusMessage] = []
            if restart { gaps.append(.gap(.senderRestarted(topic: topic, stream: header.streamID))) }
            if missed > 0 { gaps.append(.gap(.missed(topic: topic, count: missed, before: header.sequence))) }
            return gaps
        case .inOrder, .outOfOrder, .duplicate, .stale:
            return []
        }
    }

    /// A decoded wire message as a typed value.
    static func typed(_ message: WireMessage) -> BusMessage {
        let topic = message.topic
        let header = message.header
        switch message.body {
        case .pose(let pose):
            return .pose(BusPose(pose: pose, topic: topic, header: header))
        case .health(let report):
            return .health(BusHealth(report: report, topic: topic, header: header))
        case .event(let json):
            do {
                let (t, event) = try MotionJSON.decodeEvent(json)
                return .event(BusEvent(event: event, t: t, topic: topic, header: header))
            } catch  where error.kind == .unknownType && AnalyticsJSON.isAnalytics(json) {
                do {
                    let (t, record) = try AnalyticsJSON.decode(json)
                    return .analytics(BusAnalytics(record: record, t: t, topic: topic, header: header))
                } catch {
                    return .malformed(
                        MalformedMessage(topic: topic.string, reason: .json(error), header: header))
                }
            } catch {
                return .malformed(MalformedMessage(topic: topic.string, reason: .json(error), header: header))
            }
        case .session(let json):
            do {
                return .run(BusRun(record: try RunRecord(json: json), topic: topic, header: header))
            } catch {
                return .malformed(
                    MalformedMessage(topic: topic.string, reason: .run("\(error)"), header: header))
            }
        case .snapshot(let json):
            do {
                let (t, snapshot) = try MotionJSON.decodeSnapshot(json)
                return .snapshot(BusSnapshot(snapshot: snapshot, t: t, topic: topic, header: header))
            } catch {
                return .malformed(MalformedMessage(topic: topic.string, reason: .json(error), header: header))
            }
        }
    }
}
