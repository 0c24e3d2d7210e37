import KinesiaAnalytics
public import KinesiaControl
public import KinesiaMotion
public import KinesiaWire

/// What `kinesia watch` knows about the bus: every session's latest snapshot and events, and
/// every process's latest health report, folded from the messages it received.
///
/// A value type with no I/O: the command feeds it each message with the time it arrived on the
/// watcher's own monotonic clock (seconds), and renders it with ``WatchRenderer``. The same
/// messages at the same times always give the same state, which is what the tests check.
///
/// ```swift
/// var state = WatchState()
/// let update = state.apply(frames: [topic, payload], at: 12.5)
/// if case .event(let session, let t, let event) = update { print(session, t, event.name) }
/// let lines = WatchRenderer.render(state, now: 13, width: 100)
/// ```
///
/// Counts shown for a session come from its latest snapshot (a watcher that joined late still
/// shows the right totals); the reps listed in a summary are those whose events it received.
public struct WatchState: Sendable {
    /// A process not heard from for this many seconds is shown stale.
    public static let staleAfter = 3.0

    /// One session on the bus: a camera and a session name (`cam0/left`).
    public struct SessionID: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// The camera, as in the topics.
        public var camera: String
        /// The session, as in the topics.
        public var session: String

        /// Creates an id.
        public init(camera: String, session: String) {
            self.camera = camera
            self.session = session
        }

        /// `camera/session`.
        public var description: String { "\(camera)/\(session)" }

        /// By camera, then by session.
        public static func < (lhs: SessionID, rhs: SessionID) -> Bool {
            (lhs.camera, lhs.session) < (rhs.camera, rhs.session)
        }
    }

    /// An event with the pose time at which it happened.
    public struct TimedEvent: Hashable, Sendable {
        /// Pose time, in seconds.
        public var t: Double
        /// The event.
        public var event: MotionEvent

        /// Creates a timed event.
        public init(t: Double, event: MotionEvent) {
            self.t = t
            self.event = event
        }
    }

    /// What the watcher knows of one session.
    public struct Session: Hashable, Sendable {
        /// Which session.
        public var id: SessionID
        /// The latest snapshot, `nil` until one arrived.
        public var snapshot: MotionSnapshot?
        /// The latest pose time seen in a snapshot or an event of this session.
        public var time: Double?
        /// The latest event.
        public var lastEvent: TimedEvent?
        /// The latest form fault (live cue), with its time.
        public var lastFault: TimedFault?
        /// Every judged rep whose event arrived, clean or not, in order.
        public var reps: [Rep] = []
        /// Events received, by ``MotionEvent/name`` (an analytics session's records are in
        /// ``analyticsRecordCounts``).
        public var eventCounts: [String: Int] = [:]
        /// Snapshots received.
        public var snapshotCount = 0
        /// Analytics records received (an analytics session's), by ``AnalyticsRecord/name``.
        public var analyticsRecordCounts: [String: Int] = [:]
        /// The baseline, once a `baselineCompleted` event arrived.
        public var baseline: Double?
        /// The session's latest run record (`session/<camera>/<session>/`): the run under way,
        /// or how the last one ended; `nil` for a session the control plane did not start.
        public var run: RunRecord?
        /// The clean reps of the baseline the run began with (`nil`: none).
        public var baselineReps: Int?
        /// When the watcher last heard from the session (watcher clock, seconds).
        public var lastHeard: Double

        /// Creates an empty session.
        public init(id: SessionID, lastHeard: Double) {
            self.id = id
            self.lastHeard = lastHeard
        }

        /// Events received, all kinds together.
        public var eventCount: Int { eventCounts.values.reduce(0, +) }

        /// Analytics records received, all kinds together.
        public var analyticsRecordCount: Int { analyticsRecordCounts.values.reduce(0, +) }

        /// Clean reps: the snapshot's count, or the clean reps received without a snapshot.
        public var cleanReps: Int { snapshot?.repCount ?? reps.filter(\.isClean).count }

        /// Rejected reps: the snapshot's count, or the rejected reps received without a snapshot.
        public var rejectedReps: Int { snapshot?.rejectedCount ?? reps.filter { !$0.isClean }.count }

        /// The best value: the snapshot's, or the highest rep peak received without a snapshot.
        public var best: Double? { snapshot?.best ?? reps.map(\.peak).max() }
    }

    /// A form fault with the pose time at which it was cued.
    public struct TimedFault: Hashable, Sendable {
        /// Pose time, in seconds.
        public var t: Double
        /// The fault.
        public var fault: FormFeedback

        /// Creates a timed fault.
        public init(t: Double, fault: FormFeedback) {
            self.t = t
            self.fault = fault
        }
    }

    /// What the watcher knows of one process.
    public struct Process: Hashable, Sendable {
        /// Its latest health report.
        public var report: HealthReport
        /// When the report arrived (watcher clock, seconds).
        public var lastHeard: Double

        /// Creates a process entry.
        public init(report: HealthReport, lastHeard: Double) {
            self.report = report
            self.lastHeard = lastHeard
        }

        /// Whether it has been silent for longer than ``WatchState/staleAfter`` at `now`.
        public func isStale(at now: Double) -> Bool { now - lastHeard > WatchState.staleAfter }

        /// The report's uptime advanced to `now` (reports come about once a second).
        public func uptime(at now: Double) -> Double { report.uptime + max(0, now - lastHeard) }
    }

    /// What one message changed, for a caller that prints lines as things happen.
    public enum Update: Hashable, Sendable {
        /// A session's event (already folded into the state).
        case event(SessionID, t: Double, MotionEvent)
        /// A session's snapshot.
        case snapshot(SessionID)
        /// A process's health report.
        case health(process: String)
        /// A session's run began or ended (already folded into the state).
        case run(SessionID, RunRecord)
        /// A message of a kind the view does not show (poses).
        case ignored
        /// A message that could not be decoded: counted in ``invalidMessages``.
        case invalid(reason: String)
    }

    /// The sessions, by id.
    public private(set) var sessions: [SessionID: Session] = [:]
    /// The processes, by name (the `<process>` of `health/<process>/`).
    public private(set) var processes: [String: Process] = [:]
    /// Messages received, valid or not.
    public private(set) var messageCount = 0
    /// Messages that could not be decoded.
    public private(set) var invalidMessages = 0
    /// The reason of the latest invalid message.
    public private(set) var lastInvalidReason: String?
    /// Messages the watcher missed, by sequence number (per topic; a sender's restart is not a gap).
    public var missedMessages: UInt64 { sequences.totals.missing }
    /// When the latest message arrived (watcher clock), `nil` before the first.
    public private(set) var lastMessageTime: Double?

    private var sequences = SequenceTracker<String>()

    /// An empty state: nothing heard yet.
    public init() {}

    /// The sessions in display order (by camera, then session).
    public var orderedSessions: [Session] { sessions.values.sorted { $0.id < $1.id } }

    /// The processes in display order: brokers, ingests, workers, then the others; by name within.
    public var orderedProcesses: [Process] {
        processes.values.sorted {
            (WatchState.roleRank($0.report.role), $0.report.process)
                < (WatchState.roleRank($1.report.role), $1.report.process)
        }
    }

    static func roleRank(_ role: String) -> Int {
        ["broker", "ingest", "worker"].firstIndex(of: role) ?? 3
    }

    /// Decodes a received message (its frames) and folds it in.
    /// - Parameters:
    ///   - frames: The message's frames: topic and payload.
    ///   - now: When it arrived, in seconds on the watcher's monotonic clock.
    /// - Returns: What changed.
    @discardableResult
    public mutating func apply(frames: [[UInt8]], at now: Double) -> Update {
        guard frames.count == 2 else {
            messageCount += 1
            lastMessageTime = now
            return invalid("\(frames.count) frames instead of 2 (topic, payload)")
        }
        let message: WireMessage
        do {
            message = try WireMessage.decode(topic: frames[0], payload: frames[1])
        } catch {
            messageCount += 1
            lastMessageTime = now
            return invalid("\(error.code): \(error)")
        }
        return apply(message, at: now)
    }

    /// Folds in a decoded message.
    /// - Parameters:
    ///   - message: The message.
    ///   - now: When it arrived, in seconds on the watcher's monotonic clock.
    /// - Returns: What changed.
    @discardableResult
    public mutating func apply(_ message: WireMessage, at now: Double) -> Update {
        messageCount += 1
        lastMessageTime = now
        let result = sequences.record(message.header, on: message.topic.string)
        guard result.isDelivered else { return .ignored }
        switch message.body {
        case .pose:
            return .ignored
        case .session(let json):
            guard let id = sessionID(of: message.topic) else {
                return invalid("a run record without a session")
            }
            let record: RunRecord
            do {
                record = try RunRecord(json: json)
            } catch {
                return invalid("\(message.topic): \(error)")
            }
            var session = sessions[id] ?? Session(id: id, lastHeard: now)
            if case .started = record, session.run?.run != record.run {
                // A new run is a new stream of events and snapshots: what is shown starts over.
                session = Session(id: id, lastHeard: now)
            }
            // A baseline is told beside the run's start (its patient stays on show).
            if case .baselineStarted(let run, _, let reps) = record, session.run?.run == run {
                session.baselineReps = reps
            } else {
                session.run = record
            }
            session.lastHeard = now
            sessions[id] = session
            return .run(id, record)
        case .health(let report):
            let name = message.topic.process ?? report.process
            processes[name] = Process(report: report, lastHeard: now)
            return .health(process: name)
        case .event(let json):
            guard let id = sessionID(of: message.topic) else { return invalid("event without a session") }
            let decoded: (t: Double, event: MotionEvent)
            do {
                decoded = try MotionJSON.decodeEvent(json)
            } catch  where error.kind == .unknownType && AnalyticsJSON.isAnalytics(json) {
                // An analytics session's record: counted by type, apart from events.
                guard let (t, record) = try? AnalyticsJSON.decode(json) else {
                    return invalid("\(message.topic): an analytics record that does not decode")
                }
                var session = sessions[id] ?? Session(id: id, lastHeard: now)
                session.analyticsRecordCounts[record.name, default: 0] += 1
                session.time = max(session.time ?? t, t)
                session.lastHeard = now
                sessions[id] = session
                return .ignored
            } catch {
                return invalid("\(message.topic): \(error)")
            }
            fold(decoded.event, at: decoded.t, into: id, now: now)
            return .event(id, t: decoded.t, decoded.event)
        case .snapshot(let json):
            guard let id = sessionID(of: message.topic) else { return invalid("snapshot without a session") }
            let decoded: (t: Double, snapshot: MotionSnapshot)
            do {
                decoded = try MotionJSON.decodeSnapshot(json)
            } catch {
                return invalid("\(message.topic): \(error)")
            }
            var session = sessions[id] ?? Session(id: id, lastHeard: now)
            session.snapshot = decoded.snapshot
            session.snapshotCount += 1
            session.time = max(session.time ?? decoded.t, decoded.t)
            session.lastHeard = now
            sessions[id] = session
            return .snapshot(id)
        }
    }

    /// Counts a message that never reached ``apply(frames:at:)`` (a receive error).
    /// - Parameters:
    ///   - reason: What was wrong.
    ///   - now: When, in seconds on the watcher's monotonic clock.
    public mutating func recordInvalid(_ reason: String, at now: Double) {
        messageCount += 1
        lastMessageTime = now
        _ = invalid(reason)
    }

    private mutating func invalid(_ reason: String) -> Update {
        invalidMessages += 1
        lastInvalidReason = reason
        return .invalid(reason: reason)
    }

    private func sessionID(of topic: Topic) -> SessionID? {
        guard let camera = topic.camera, let session = topic.session else { return nil }
        return SessionID(camera: camera, session: session)
    }

    private mutating func fold(_ event: MotionEvent, at t: Double, into id: SessionID, now: Double) {
        var session = sessions[id] ?? Session(id: id, lastHeard: now)
        session.eventCounts[event.name, default: 0] += 1
        session.lastEvent = TimedEvent(t: t, event: event)
        session.time = max(session.time ?? t, t)
        session.lastHeard = now
        switch event {
        case .repCompleted(let rep), .repRejected(let rep):
            session.reps.append(rep)
        case .formFault(let fault):
            session.lastFault = TimedFault(t: t, fault: fault)
        case .baselineCompleted(let value):
            session.baseline = value
        case .holdStarted, .visibilityChanged, .setupChanged:
            break
        }
        sessions[id] = session
    }
}
