import KinesiaAnalytics
public import KinesiaClient
import KinesiaJSON
public import KinesiaMotion
public import KinesiaWire

/// Every decision of `kinesia worker`, with no socket, no clock and no I/O.
///
/// The core hosts the worker's sessions (one ``MotionAnalyzer`` each) and is told what the
/// subscriber delivered: a pose with its topic, wire header and sequence result
/// (``receive(_:on:header:sequence:into:)``), or a message that could not be decoded
/// (``receiveMalformed(topic:reason:into:)``). It answers with ``Action``s: publish a JSON
/// line on a topic, or tell the operator something. The command performs the actions and
/// reports how each publish went (``published(_:outcome:)``), so that what reached the bus is
/// what the counters say. ``healthCounters(sequence:)`` gives the `health/` counters.
///
/// Time comes only from the poses (``FlatPose/timestamp``), so the same deliveries give the
/// same actions, byte for byte.
///
/// Decisions:
/// - **Fan-out**: a pose of `pose/<camera>/` goes to every session of that camera, in the
///   order the sessions were given; a pose of a camera the worker does not host is ignored.
/// - **Events**: each event a session finds becomes a ``Publication`` on
///   `event/<camera>/<session>/`, the JSON line of ``MotionJSON``
///   at the pose's timestamp (the line `kinesia analyze --format json` prints).
/// - **Snapshots**: after a pose the session accepted, its snapshot goes on
///   `snapshot/<camera>/<session>/` when the session's ``SnapshotThrottle`` allows it (at most
///   the snapshot rate per second of pose time, and at every change of the rep counts), with
///   ``MotionSnapshot/isRunning`` `true`: the worker is reading poses for the session. A pose
///   the analysis rejected publishes no snapshot.
/// - **Sender restarts** (a new stream id on a camera's topic) never reset a session's counts.
///   When time goes on, the sessions carry on as they are: a restarted ingest of a live camera
///   goes on with the same patient and a clock that keeps running. When the new stream's first
///   pose is not later than the last pose a session accepted, the sender's time base started
///   over (a recording replayed, a detector whose clock starts at zero), and the session would
///   drop every pose as going back in time: its time base starts over
///   (``MotionAnalyzer/restartTimeBase()``: the counts, best, last rep and baseline stay; a rep
///   under way is dropped), counted in `timeBaseRestarts` and told in a notice that names the
///   sessions. Counts are kept rather than reset because a reset could only be announced to
///   consumers by a new kind of event, and ``MotionEvent`` is the SDK's contract (a new case
///   breaks every exhaustive `switch` over it, and a new record on the event topic is malformed
///   to every consumer that reads events today); and because one pose with an old timestamp
///   from a foreign sender on the topic must not wipe a patient's session. A single pose far
///   ahead in time is held by the analyzer until the next pose confirms it
///   (``SessionRules/suspectTimeJump``), so it moves no session's time base either.
/// - **Analytics sessions** (``WorkerSession/Analysis/analytics``) run a ``MotionAnalytics`` on
///   the camera's poses and publish each of its records on `event/<camera>/<session>/` as the
///   JSON line of ``AnalyticsJSON`` at the pose's timestamp; they publish no snapshot. A sender
///   restart whose time starts over starts their time base over too, keeping their sets.
/// - **Identity and numbering**: each session publishes its events and snapshots under its own
///   stream id (``SessionIdentity/stream``, kept in the state directory across restarts), and
///   the core numbers them itself, per topic from 0, in the order the analysis finds them. So
///   the same poses give the same events with the same sequence numbers.
/// - **Restart without loss or repeat** (the worker was given its state, see
///   ``init(sessions:snapshotRate:identities:resume:beginningAtStreamStart:holeWait:newStream:)``): poses go through a ``PoseFeed`` per
///   camera, which replays each session's recorded pose segments from their start before it
///   joins the live poses, and fills every gap through replay before analysing further. The
///   regenerated events and snapshots whose sequence number is not above the last the session
///   journaled (``SessionIdentity/lastEvent``, ``SessionIdentity/lastSnapshot``) were
///   published before the restart: they are counted (`regenerated`) and not published again.
///   A new session (no segments for its camera) starts at the first pose it receives, and the
///   core asks the shell to record that start (``Action/record(camera:segments:)``) before
///   anything it causes is published.
/// - **Malformed messages** are counted by reason (``BusDecodeFailure/code``); the first ten of
///   each reason and every thousandth after are worth a warning.
///
/// In steady state (a pose that publishes nothing) ``receive(_:on:header:sequence:into:)``
/// does not allocate: actions go into a buffer the caller keeps and reuses.
///
/// ```swift
/// var core = try WorkerCore(sessions: sessions, snapshotRate: 15)
/// var actions: [WorkerCore.Action] = []
/// core.receive(pose, on: topic, header: header, sequence: result, into: &actions)
/// for case .publish(let publication) in actions {
///     core.published(publication, outcome: send(publication))
/// }
/// ```
public struct WorkerCore: Sendable {
    /// What the shell must do.
    public enum Action: Hashable, Sendable {
        /// Publish a JSON line; answer with ``WorkerCore/published(_:outcome:)``.
        case publish(Publication)
        /// Tell the operator (a log line).
        case notice(Notice)
        /// Keep the pose segments of `camera`'s sessions in the state directory now, before
        /// the actions that follow.
        case record(camera: String, segments: [PoseSegment])
        /// Keep, with `camera`'s recorded segments, that the live analysis gave up on these
        /// poses (an append, before the actions that follow).
        case recordSkip(camera: String, stream: StreamID, sequences: Range<UInt64>)
        /// Session `session` of `camera` starts a new run on a new stream: journal its event
        /// and snapshot topics under `stream`, numbered from 0, before the actions that follow.
        case newRun(camera: String, session: String, stream: StreamID)
        /// Ask the replay server that announced the stream for `camera`'s poses, as request
        /// `id`; answer with ``WorkerCore/receiveReplayed(_:camera:stream:sequence:now:into:)``,
        /// ``WorkerCore/replayEnded(camera:end:now:into:)`` or
        /// ``WorkerCore/replayFailed(camera:requestID:stream:first:now:into:)``.
        case requestPoses(camera: String, PoseReplayRequest, id: UInt32)
    }

    /// Who a session is across restarts, and what it already published: kept in the state
    /// directory.
    public struct SessionIdentity: Hashable, Sendable {
        /// The stream id of the session's events and snapshots.
        public var stream: StreamID
        /// The last event sequence number journaled (`nil`: none).
        public var lastEvent: UInt64?
        /// The last snapshot sequence number journaled (`nil`: none).
        public var lastSnapshot: UInt64?

        /// Makes an identity.
        public init(stream: StreamID, lastEvent: UInt64? = nil, lastSnapshot: UInt64? = nil) {
            self.stream = stream
            self.lastEvent = lastEvent
            self.lastSnapshot = lastSnapshot
        }
    }

    /// One JSON line to publish.
    public struct Publication: Hashable, Sendable {
        /// ``PayloadKind/event`` or ``PayloadKind/snapshot``.
        public var kind: PayloadKind
        /// `event/<camera>/<session>/` or `snapshot/<camera>/<session>/`.
        public var topic: Topic
        /// The JSON line (``MotionJSON``), without a newline, as UTF-8: what is published.
        public var bytes: [UInt8]
        /// The session's stream id (``SessionIdentity/stream``).
        public var stream: StreamID
        /// The sequence number on `topic`: per session and topic, from 0.
        public var sequence: UInt64

        /// The JSON line as text.
        public var json: String { String(decoding: bytes, as: UTF8.self) }

        /// Makes a publication of the JSON line's UTF-8 `bytes`.
        public init(kind: PayloadKind, topic: Topic, bytes: [UInt8], stream: StreamID, sequence: UInt64) {
            self.kind = kind
            self.topic = topic
            self.bytes = bytes
            self.stream = stream
            self.sequence = sequence
        }

        /// Makes a publication of a JSON line.
        public init(kind: PayloadKind, topic: Topic, json: String, stream: StreamID, sequence: UInt64) {
            self.init(kind: kind, topic: topic, bytes: Array(json.utf8), stream: stream, sequence: sequence)
        }
    }

    /// How a publish went.
    public enum PublishOutcome: Hashable, Sendable {
        /// Queued for the broker.
        case sent
        /// Not queued: the publisher's queue was full.
        case notQueued
        /// It failed; `reason` is a stable counter name (a ``WireError/code``, `socket`...).
        case failed(reason: String)

        /// The counter name of a publish that did not go out (`nil` for ``sent``).
        public var failureReason: String? {
            switch self {
            case .sent: nil
            case .notQueued: "notQueued"
            case .failed(let reason): reason
            }
        }
    }

    /// Something the operator should know.
    public enum Notice: Hashable, Sendable, CustomStringConvertible {
        /// A message on `topic` could not be decoded; `seen` so far for this reason.
        case malformed(topic: String, reason: BusDecodeFailure, seen: Int)
        /// `missed` poses of `topic` never arrived before sequence number `sequence`.
        case gap(topic: Topic, missed: UInt64, sequence: UInt64)
        /// The sender of `topic` restarted with stream `stream`; its first pose is at `time`.
        /// `timeRestarted` names the sessions whose time base starts over at `time`, keeping
        /// their counts (empty: every session carries on as it was).
        case senderRestarted(topic: Topic, stream: StreamID, time: Double, timeRestarted: [String])
        /// Poses of `topic`'s stream `stream` that no replay server holds: skipped.
        case posesLost(topic: Topic, stream: StreamID, sequences: Range<UInt64>)
        /// No server has `topic`'s stream `stream` from `from` on (its source ended, its server
        /// is gone): the rebuild stops there.
        case posesUnavailable(topic: Topic, stream: StreamID, from: UInt64)
        /// The rebuild of `topic`'s sessions lost poses the last run analysed: they cannot
        /// regenerate what they published, so `sessions` start a new run (counts from 0) on new
        /// streams at pose `sequence`.
        case runRestarted(topic: Topic, sessions: [String], sequence: UInt64)

        /// Whether it is a warning (bad input) rather than a notice.
        public var isWarning: Bool {
            switch self {
            case .malformed, .posesLost, .posesUnavailable, .runRestarted: true
            default: false
            }
        }

        /// The log line.
        public var description: String {
            switch self {
            case .malformed(let topic, let reason, let seen):
                "dropped a malformed message on \(topic.quotedExcerpt(limit: Topic.maximumLength)) (\(seen) so far): \(reason)"
            case .gap(let topic, let missed, let sequence):
                "\(topic): \(missed) poses missing before #\(sequence)"
            case .posesLost(let topic, let stream, let sequences):
                "\(topic) stream \(stream): poses #\(sequences.lowerBound)...#\(sequences.upperBound - 1) "
                    + "not received in time and not to be replayed: skipped (the analysis goes on without them)"
            case .posesUnavailable(let topic, let stream, let from):
                "\(topic) stream \(stream): no server has its poses from #\(from) on (its source ended or its "
                    + "server is gone): the rebuild goes on with the live poses"
            case .runRestarted(let topic, let sessions, let sequence):
                "\(topic): the poses the last run analysed cannot all be replayed, so what it published "
                    + "cannot be rebuilt: session(s) \(sessions.joined(separator: ", ")) start a NEW RUN "
                    + "at pose #\(sequence), on new streams, counts from 0"
            case .senderRestarted(let topic, let stream, let time, let restarted):
                "\(topic): the sender restarted (stream \(stream)); "
                    + (restarted.isEmpty
                        ? "sessions kept"
                        : "its time starts over at t=\(time): session(s) "
                            + restarted.joined(separator: ", ")
                            + " keep their counts; a rep under way is dropped")
            }
        }
    }

    /// One hosted session and its topics.
    struct Hosted: Sendable {
        let spec: WorkerSession
        /// The side's analyzer (unused for analytics).
        var analyzer: MotionAnalyzer
        /// Both sides' analytics, for an analytics session.
        var analytics: MotionAnalytics?
        var throttle: SnapshotThrottle
        let eventTopic: Topic
        let snapshotTopic: Topic
        /// ``WorkerSession/runSuffix``.
        let runSuffix: [UInt8]
        var identity: SessionIdentity
        var nextEvent: UInt64 = 0
        var nextSnapshot: UInt64 = 0
        /// Its snapshots' JSON (the text of the numbers that rarely change, remembered).
        var snapshotEncoder = SnapshotJSONEncoder()
    }

    /// One camera's poses in order, when the worker restarts without loss (see
    /// ``init(sessions:snapshotRate:identities:resume:beginningAtStreamStart:holeWait:newStream:)``).
    struct Camera {
        let topic: Topic
        /// The indices of the camera's sessions in ``hosted``.
        let sessions: [Int]
        var feed: PoseFeed<FlatPose>

        /// ``PoseFeed/takeInOrder(stream:sequence:)``, with the sessions to analyse the pose
        /// (`nil`: not the next pose in order). Called in place: reading a camera copies it.
        mutating func takeInOrder(stream: StreamID, sequence: UInt64) -> [Int]? {
            feed.takeInOrder(stream: stream, sequence: sequence) ? sessions : nil
        }
    }

    /// The sessions, in the order given.
    public let sessions: [WorkerSession]
    /// The snapshot rate: snapshots per second of pose time, at most.
    public let snapshotRate: Double
    /// The cameras of the sessions, sorted: the `pose/<camera>/` topics to subscribe.
    public let cameras: [String]
    /// Poses of hosted cameras received.
    public private(set) var poses = 0
    /// Events published.
    public private(set) var events = 0
    /// Snapshots published.
    public private(set) var snapshots = 0
    /// Sessions whose time base started over (counts kept) on a sender restart whose time
    /// starts over.
    public private(set) var timeBaseRestarts = 0
    /// Publishes that failed, by ``PublishOutcome/failureReason``.
    public private(set) var publishFailures: [String: Int] = [:]
    /// Messages that could not be decoded, by ``BusDecodeFailure/code``.
    public private(set) var decodeErrors: [String: Int] = [:]
    /// Events and snapshots found again after a restart and not published again (they were).
    public private(set) var regenerated = 0
    /// Sessions that started a new run because their rebuild lost poses (``Notice/runRestarted(topic:sessions:sequence:)``).
    public private(set) var runsRestarted = 0
    /// Lost-pose notices so far (the first ten and every thousandth are told).
    private var lostNotices = 0
    /// Cameras whose sessions start a new run at the next pose analysed.
    private var pendingNewRun: Set<String> = []
    /// Makes the stream id of a new run.
    private let newStream: @Sendable () -> StreamID

    var hosted: [Hosted]
    let byCamera: [String: [Int]]
    /// `nil`: poses are analysed as they come (``receive(_:on:header:sequence:into:)``).
    var ordered: [String: Camera]?

    /// Hosts `sessions`.
    /// - Parameters:
    ///   - sessions: The sessions (camera and name unique together, as
    ///     ``WorkerCommand/parsedSessions()`` checks).
    ///   - snapshotRate: Snapshots per second of pose time, at most (positive).
    ///   - identities: Each session's identity, in the order of `sessions` (`nil`: stream ids
    ///     1, 2, 3... and nothing published yet, for tests).
    ///   - resume: `nil`: poses are analysed as they arrive, gaps are counted
    ///     (``receive(_:on:header:sequence:into:)``). Otherwise every pose is analysed exactly
    ///     once and in order (``receiveLive(_:on:header:into:)`` and the replay calls), and
    ///     the dictionary gives each camera's recorded pose segments (a camera without any
    ///     starts new sessions at its first pose; call ``start(into:)`` once first).
    ///   - beginningAtStreamStart: The cameras without recorded segments whose new sessions
    ///     begin at the first pose of their camera's stream, replayed, instead of the first
    ///     received live (runs started before their camera published; ``PoseFeed``).
    /// - Throws: ``TopicError`` when a camera or session name cannot make a topic.
    public init(
        sessions: [WorkerSession], snapshotRate: Double, identities: [SessionIdentity]? = nil,
        resume: [String: [PoseSegment]]? = nil, beginningAtStreamStart: Set<String> = [],
        holeWait: Duration = PoseFeed<FlatPose>.defaultHoleWait,
        newStream: @escaping @Sendable () -> StreamID = { .random() }
    ) throws(TopicError) {
        self.sessions = sessions
        self.newStream = newStream
        self.snapshotRate = snapshotRate
        var hosted: [Hosted] = []
        var byCamera: [String: [Int]] = [:]
        for (index, spec) in sessions.enumerated() {
            byCamera[spec.camera, default: []].append(hosted.count)
            let identity = identities?[index] ?? SessionIdentity(stream: StreamID(UInt64(index + 1)))
            hosted.append(
                Hosted(
                    spec: spec, analyzer: spec.makeAnalyzer(),
                    analytics: spec.analysis == .analytics ? MotionAnalytics(exercise: spec.exercise) : nil,
                    throttle: SnapshotThrottle(rate: snapshotRate),
                    eventTopic: try Topic.event(camera: spec.camera, session: spec.name),
                    snapshotTopic: try Topic.snapshot(camera: spec.camera, session: spec.name),
                    runSuffix: spec.runSuffix, identity: identity))
        }
        self.hosted = hosted
        self.byCamera = byCamera
        cameras = byCamera.keys.sorted()
        if let resume {
            var ordered: [String: Camera] = [:]
            for camera in cameras {
                ordered[camera] = Camera(
                    topic: try Topic.pose(camera: camera), sessions: byCamera[camera] ?? [],
                    feed: PoseFeed(
                        segments: resume[camera] ?? [],
                        beginsAtStreamStart: beginningAtStreamStart.contains(camera), holeWait: holeWait))
            }
            self.ordered = ordered
        }
    }

    /// All decode errors.
    public var decodeErrorCount: Int { decodeErrors.values.reduce(0, +) }

    /// All failed publishes.
    public var publishFailureCount: Int { publishFailures.values.reduce(0, +) }

    /// The snapshot of the session `name` of `camera` as its analyzer has it now (`nil` for a
    /// session the worker does not host, and for an analytics session).
    public func snapshot(camera: String, session name: String) -> MotionSnapshot? {
        guard let session = hosted.first(where: { $0.spec.camera == camera && $0.spec.name == name }),
            session.analytics == nil
        else { return nil }
        return session.analyzer.snapshot
    }

    /// Where `camera`'s poses stand: the stream and the next sequence number expected (`nil`
    /// before the first pose, and when poses are analysed as they come).
    public func position(camera: String) -> (stream: StreamID, next: UInt64)? {
        ordered?[camera]?.feed.position
    }

    /// The recorded pose segments of `camera`'s sessions (empty before the first pose, or
    /// when poses are not ordered).
    public func segments(camera: String) -> [PoseSegment] {
        ordered?[camera]?.feed.segments ?? []
    }

    /// Whether some camera is still replaying its sessions' poses.
    public var isCatchingUp: Bool {
        ordered?.values.contains { $0.feed.isCatchingUp } ?? false
    }

    // MARK: Ordered deliveries (restart without loss)

    /// The first replay requests of resumed cameras. Call once, before any delivery.
    public mutating func start(now: Duration, into actions: inout [Action]) {
        actions.removeAll(keepingCapacity: true)
        for camera in cameras {
            guard let outputs = ordered?[camera]?.feed.start(now: now) else { continue }
            perform(outputs, camera: camera, into: &actions)
        }
    }

    /// A pose received live on `pose/<camera>/` at `now` (every one, gaps and duplicates
    /// included: the feed judges them by sequence number). `now` is read only for a pose that
    /// is not the next in order (nearly every pose is): reading a clock for each pose cost a
    /// worker 1 % of its CPU.
    public mutating func receiveLive(
        _ pose: FlatPose, on topic: Topic, header: WireHeader, now: @autoclosure () -> Duration,
        into actions: inout [Action]
    ) {
        actions.removeAll(keepingCapacity: true)
        guard let camera = topic.camera, let slot = ordered?.index(forKey: camera) else { return }
        // The next pose in order (nearly every one) is analysed without going through the
        // feed's outputs: a pose is 500 bytes, copied at each step. One lookup of the camera.
        if let indices = ordered!.values[slot].takeInOrder(stream: header.streamID, sequence: header.sequence)
        {
            analyseFed(
                pose, camera: camera, indices: indices, topic: topic,
                stream: header.streamID, sequence: header.sequence, opensStream: false, into: &actions)
            return
        }
        // The feed's outputs go into a buffer kept across poses (taken out while it is used).
        var outputs = liveOutputs
        liveOutputs = []
        outputs.removeAll(keepingCapacity: true)
        ordered![camera]!.feed.live(
            stream: header.streamID, sequence: header.sequence, pose: pose, now: now(), into: &outputs)
        perform(outputs, camera: camera, into: &actions)
        liveOutputs = outputs
    }

    /// The buffer of ``receiveLive(_:on:header:now:into:)``'s feed outputs.
    private var liveOutputs: [PoseFeed<FlatPose>.Output] = []

    /// When ``tick(now:into:)`` next has something to do (the end of the wait for a hole in some
    /// camera's live poses, a request's timeout), or `nil`.
    public var deadline: Duration? { feedDeadlines.values.min() }

    /// Each camera's ``PoseFeed/deadline``, kept as its feed changes (read on every turn of the
    /// worker's loop: reading it off the feeds would copy every camera's state each time). A
    /// pose analysed in order changes no deadline.
    private var feedDeadlines: [String: Duration] = [:]

    /// Notes `camera`'s feed deadline, read in place.
    private mutating func noteDeadline(of camera: String) {
        guard ordered?.index(forKey: camera) != nil else { return }
        feedDeadlines[camera] = Self.deadline(of: &ordered![camera]!)
    }

    private static func deadline(of camera: inout Camera) -> Duration? { camera.feed.deadline }

    /// The passing of time: holes in the live poses waited for long enough are given up, and
    /// the poses held behind them analysed.
    public mutating func tick(now: Duration, into actions: inout [Action]) {
        actions.removeAll(keepingCapacity: true)
        guard let deadline, now >= deadline else { return }
        for camera in cameras where feedDeadlines[camera].map({ $0 <= now }) ?? false {
            let outputs = ordered![camera]!.feed.tick(now: now)
            perform(outputs, camera: camera, into: &actions)
        }
    }

    /// A replay server's announcement (a `health/` report's page): a camera's pose stream
    /// published past what its feed received, twice in a row, is asked for
    /// (``PoseFeed/announced(stream:last:now:)``): the tail a source sent while the broker was
    /// down, with no pose after it to reveal the hole.
    public mutating func announced(
        _ announcement: ReplayAnnouncement, now: Duration, into actions: inout [Action]
    ) {
        actions.removeAll(keepingCapacity: true)
        guard ordered != nil else { return }
        for info in announcement.streams where info.topic.kind == .pose {
            guard let camera = info.topic.camera, ordered?[camera]?.topic == info.topic else { continue }
            let outputs = ordered![camera]!.feed.announced(stream: info.stream, last: info.last, now: now)
            if !outputs.isEmpty { perform(outputs, camera: camera, into: &actions) }
        }
    }

    /// A pose from a replay reply for `camera`, received at `now`.
    public mutating func receiveReplayed(
        _ pose: FlatPose, camera: String, stream: StreamID, sequence: UInt64, now: Duration,
        into actions: inout [Action]
    ) {
        actions.removeAll(keepingCapacity: true)
        guard ordered?[camera] != nil else { return }
        let outputs = ordered![camera]!.feed.replayed(
            stream: stream, sequence: sequence, pose: pose, now: now)
        perform(outputs, camera: camera, into: &actions)
    }

    /// The end of a replay reply for `camera` (its `requestID` the one of
    /// ``Action/requestPoses(camera:_:id:)``).
    public mutating func replayEnded(
        camera: String, end: ReplayBatchEnd, now: Duration, into actions: inout [Action]
    ) {
        actions.removeAll(keepingCapacity: true)
        guard ordered?[camera] != nil else { return }
        let outputs = ordered![camera]!.feed.replayEnded(end, now: now)
        perform(outputs, camera: camera, into: &actions)
    }

    /// The replay server does not hold what request `id` asked for `camera`: `first` is the
    /// first sequence number it holds, `nil` when it does not know the stream (or none answered).
    public mutating func replayFailed(
        camera: String, requestID id: UInt32, stream: StreamID, first: UInt64?, now: Duration,
        into actions: inout [Action]
    ) {
        actions.removeAll(keepingCapacity: true)
        guard ordered?[camera] != nil else { return }
        let outputs = ordered![camera]!.feed.replayFailed(
            requestID: id, stream: stream, first: first, now: now)
        perform(outputs, camera: camera, into: &actions)
    }

    /// The rebuild's replay request of `camera` got no answer in time: it is asked again.
    public mutating func replayTimedOut(camera: String, now: Duration, into actions: inout [Action]) {
        actions.removeAll(keepingCapacity: true)
        guard ordered?[camera] != nil else { return }
        let outputs = ordered![camera]!.feed.timedOut(now: now)
        perform(outputs, camera: camera, into: &actions)
    }

    /// The feed's outputs as actions, the poses analysed (called after every change of a
    /// camera's feed but an in-order pose: its deadline is noted).
    private mutating func perform(
        _ outputs: [PoseFeed<FlatPose>.Output], camera: String, into actions: inout [Action]
    ) {
        noteDeadline(of: camera)
        guard let indices = byCamera[camera], let topic = ordered?[camera]?.topic else { return }
        for output in outputs {
            switch output {
            case .record(let segments):
                actions.append(.record(camera: camera, segments: segments))
            case .skip(let stream, let sequences):
                actions.append(.recordSkip(camera: camera, stream: stream, sequences: sequences))
            case .request(let request, let id):
                actions.append(.requestPoses(camera: camera, request, id: id))
            case .lost(let stream, let sequences):
                lostNotices &+= 1
                if lostNotices <= 10 || lostNotices % 1000 == 0 {
                    actions.append(.notice(.posesLost(topic: topic, stream: stream, sequences: sequences)))
                }
                // Lost while some session still regenerates what the last run published: the
                // rebuild can no longer be trusted to give the same events with the same numbers.
                if indices.contains(where: { isRegenerating($0) }) { pendingNewRun.insert(camera) }
            case .unavailable(let stream, let from):
                actions.append(.notice(.posesUnavailable(topic: topic, stream: stream, from: from)))
                if indices.contains(where: { isRegenerating($0) }) { pendingNewRun.insert(camera) }
            case .analyse(let stream, let sequence, let pose, let opensStream):
                analyseFed(
                    pose, camera: camera, indices: indices, topic: topic, stream: stream, sequence: sequence,
                    opensStream: opensStream, into: &actions)
            }
        }
    }

    /// A pose the feed gave to analyse, through every session of its camera.
    private mutating func analyseFed(
        _ pose: borrowing FlatPose, camera: String, indices: [Int], topic: Topic, stream: StreamID,
        sequence: UInt64, opensStream: Bool, into actions: inout [Action]
    ) {
        if !pendingNewRun.isEmpty, pendingNewRun.remove(camera) != nil {
            startNewRuns(indices, camera: camera, topic: topic, at: stream, sequence, into: &actions)
        }
        if opensStream {
            senderRestarted(indices, topic: topic, stream: stream, time: pose.timestamp, into: &actions)
        }
        poses &+= 1
        for index in indices { analyze(pose, session: index, into: &actions) }
    }

    // MARK: Deliveries

    /// Runs one pose through every session of its camera.
    ///
    /// - Parameters:
    ///   - pose: The pose, decoded.
    ///   - topic: Its topic, `pose/<camera>/`.
    ///   - header: Its wire header.
    ///   - sequence: What the subscriber's sequence tracker made of it (never a duplicate or
    ///     stale: those are not delivered).
    ///   - actions: Emptied (keeping its capacity), then filled with what to do, in order.
    public mutating func receive(
        _ pose: FlatPose, on topic: Topic, header: WireHeader, sequence: SequenceResult,
        into actions: inout [Action]
    ) {
        actions.removeAll(keepingCapacity: true)
        guard let camera = topic.camera, let indices = byCamera[camera] else { return }
        switch sequence {
        case .gap(let missed):
            actions.append(.notice(.gap(topic: topic, missed: missed, sequence: header.sequence)))
        case .newStream(restart: true, _):
            senderRestarted(
                indices, topic: topic, stream: header.streamID, time: pose.timestamp, into: &actions)
        default:
            break
        }
        poses &+= 1
        for index in indices {
            analyze(pose, session: index, into: &actions)
        }
    }

    /// Ends the input (the worker stops): every analytics session ends its set under way and
    /// publishes each side's final ``SetSummary``, at its last pose's timestamp.
    /// - Parameter actions: Emptied (keeping its capacity), then filled with the publications.
    public mutating func finish(into actions: inout [Action]) {
        actions.removeAll(keepingCapacity: true)
        for index in hosted.indices {
            guard let time = hosted[index].analytics?.lastAcceptedTime,
                let records = hosted[index].analytics?.finish()
            else { continue }
            for record in records {
                if let action = analyticsPublication(AnalyticsJSON.encode(record, at: time), session: index) {
                    actions.append(action)
                }
            }
        }
    }

    /// Counts a message that could not be decoded.
    /// - Parameters:
    ///   - topic: Its first frame as text.
    ///   - reason: Why it was not decoded.
    ///   - actions: Emptied (keeping its capacity), then given a warning for the first ten
    ///     messages of each reason and every thousandth after.
    public mutating func receiveMalformed(
        topic: String, reason: BusDecodeFailure, into actions: inout [Action]
    ) {
        actions.removeAll(keepingCapacity: true)
        let seen = decodeErrors[reason.code, default: 0] &+ 1
        decodeErrors[reason.code] = seen
        if seen <= 10 || seen % 1000 == 0 {
            actions.append(.notice(.malformed(topic: topic, reason: reason, seen: seen)))
        }
    }

    /// Records how a ``Action/publish(_:)`` went: a publication sent counts as an event or a
    /// snapshot, one that was not counts in `publishFailures`.
    public mutating func published(_ publication: Publication, outcome: PublishOutcome) {
        if let reason = outcome.failureReason {
            publishFailures[reason, default: 0] &+= 1
            return
        }
        switch publication.kind {
        case .event: events &+= 1
        case .snapshot: snapshots &+= 1
        default: break
        }
    }

    // MARK: Health

    /// The counters of the worker's `health/` report.
    ///
    /// `poses`, `events`, `snapshots` (published), `sessions`, `timeBaseRestarts`;
    /// `publishFailures` and `publishFailures.<reason>`; `decodeErrors` and
    /// `decodeErrors.<reason>`; `rejected`, `rejected.<camera>.<session>` and
    /// `rejected.<reason>` (``PoseRejections/Reason``); `gaps`, `restarts` and
    /// `duplicates` from the subscriber's sequence tracker.
    /// - Parameter totals: The subscriber's ``SequenceTracker/totals`` (duplicates never reach
    ///   the core).
    public func healthCounters(sequence totals: SequenceTotals) -> [String: Int] {
        var values: [String: Int] = [
            "poses": poses, "events": events, "snapshots": snapshots, "sessions": hosted.count,
            "timeBaseRestarts": timeBaseRestarts, "regenerated": regenerated, "runsRestarted": runsRestarted,
            "gaps": Int(clamping: totals.missing), "restarts": Int(clamping: totals.restarts),
            "duplicates": Int(clamping: totals.duplicates), "decodeErrors": decodeErrorCount,
            "publishFailures": publishFailureCount,
        ]
        for (reason, count) in decodeErrors { values["decodeErrors.\(reason)"] = count }
        for (reason, count) in publishFailures { values["publishFailures.\(reason)"] = count }
        var rejected = 0
        for session in hosted {
            let counts = session.analytics?.analyzer(.left).rejectedPoses ?? session.analyzer.rejectedPoses
            rejected += counts.total
            values["rejected.\(session.spec.camera).\(session.spec.name)"] = counts.total
            for reason in PoseRejections.Reason.allCases where counts[reason] > 0 {
                values["rejected.\(reason.rawValue)", default: 0] += counts[reason]
            }
        }
        values["rejected"] = rejected
        if let ordered {
            values["posesReplayed"] = ordered.values.reduce(0) { $0 + $1.feed.replayed }
            // Each camera's losses saturate, and so does their sum: a peer's jump to 2^64-1 on two
            // cameras must not trap (issue 19, item 1).
            values["posesLost"] = Int(
                clamping: ordered.values.reduce(into: UInt64(0)) { $0.addSaturating($1.feed.lost) })
            // Gaps are filled by replay: what is missing for good is what no server had, and
            // the holes seen live are `gapsSeen` (so `poses` + `gaps` is still what was sent).
            values["gapsSeen"] = values["gaps"]
            values["gaps"] = values["posesLost"]
            values["posesDeferred"] = ordered.values.reduce(0) { $0 + $1.feed.deferred }
            values["holesSkipped"] = ordered.values.reduce(0) { $0 + $1.feed.holesSkipped }
            values["replayRequests"] = ordered.values.reduce(0) { $0 + $1.feed.requests }
            values["tailsRequested"] = ordered.values.reduce(0) { $0 + $1.feed.tailsRequested }
            values["duplicates"] =
                Int(clamping: totals.duplicates) + ordered.values.reduce(0) { $0 + $1.feed.duplicates }
        }
        return values
    }

    // MARK: Steps

    /// Whether the session is still regenerating what the last run published (its next event
    /// or snapshot number is one the last run journaled).
    private func isRegenerating(_ index: Int) -> Bool {
        let session = hosted[index]
        if let last = session.identity.lastEvent, session.nextEvent <= last { return true }
        if let last = session.identity.lastSnapshot, session.nextSnapshot <= last { return true }
        return false
    }

    /// The sessions of a camera start a new run at pose `sequence` of `stream`: fresh analysis,
    /// new streams numbered from 0, and the pose history starting there.
    private mutating func startNewRuns(
        _ indices: [Int], camera: String, topic: Topic, at stream: StreamID, _ sequence: UInt64,
        into actions: inout [Action]
    ) {
        for index in indices {
            let spec = hosted[index].spec
            hosted[index].analyzer = spec.makeAnalyzer()
            hosted[index].analytics =
                spec.analysis == .analytics ? MotionAnalytics(exercise: spec.exercise) : nil
            hosted[index].throttle = SnapshotThrottle(rate: snapshotRate)
            hosted[index].identity = SessionIdentity(stream: newStream())
            hosted[index].nextEvent = 0
            hosted[index].nextSnapshot = 0
            runsRestarted &+= 1
            actions.append(.newRun(camera: camera, session: spec.name, stream: hosted[index].identity.stream))
        }
        actions.append(
            .notice(
                .runRestarted(
                    topic: topic, sessions: indices.map { hosted[$0].spec.name }, sequence: sequence)))
        if let segments = ordered?[camera]?.feed.rebase(stream: stream, sequence: sequence), !segments.isEmpty
        {
            actions.append(.record(camera: camera, segments: segments))
        }
    }

    /// A new stream on the camera's topic: the sessions whose last accepted pose is not
    /// earlier than the new stream's first pose start their time base over, keeping their counts.
    private mutating func senderRestarted(
        _ indices: [Int], topic: Topic, stream: StreamID, time: Double, into actions: inout [Action]
    ) {
        var restarted: [String] = []
        for index in indices {
            if hosted[index].analytics != nil {
                guard let last = hosted[index].analytics?.lastAcceptedTime, !(time > last) else { continue }
                hosted[index].analytics?.restartTimeBase()
                timeBaseRestarts &+= 1
                restarted.append(hosted[index].spec.name)
                continue
            }
            guard let last = hosted[index].analyzer.lastAcceptedTime, !(time > last) else { continue }
            hosted[index].analyzer.restartTimeBase()
            hosted[index].throttle = SnapshotThrottle(rate: snapshotRate)
            timeBaseRestarts &+= 1
            restarted.append(hosted[index].spec.name)
        }
        actions.append(
            .notice(.senderRestarted(topic: topic, stream: stream, time: time, timeRestarted: restarted)))
    }

    /// An analytics record as a publication, numbered on the session's event topic like its
    /// motion events; `nil` when a restart regenerated it and it was published before.
    private mutating func analyticsPublication(_ json: String, session index: Int) -> Action? {
        let sequence = hosted[index].nextEvent
        hosted[index].nextEvent &+= 1
        if let last = hosted[index].identity.lastEvent, sequence <= last {
            regenerated &+= 1
            return nil
        }
        var bytes = Array(json.utf8)
        Self.endWithRun(&bytes, hosted[index].runSuffix)
        return .publish(
            Publication(
                kind: .event, topic: hosted[index].eventTopic, bytes: bytes,
                stream: hosted[index].identity.stream,
                sequence: sequence))
    }

    /// Puts `suffix` (`,"run":"7"}`) in place of the JSON object's closing brace.
    private static func endWithRun(_ json: inout [UInt8], _ suffix: [UInt8]) {
        guard !suffix.isEmpty, json.last == UInt8(ascii: "}") else { return }
        json.removeLast()
        json += suffix
    }

    /// One session's analysis of a pose: its events, then its snapshot when due.
    ///
    /// The events of a pose the analyzer held (a jump ahead in time) come with the pose that
    /// confirms it, at that pose's timestamp.
    private mutating func analyze(_ pose: FlatPose, session index: Int, into actions: inout [Action]) {
        if hosted[index].analytics != nil {
            guard let records = hosted[index].analytics?.process(pose) else { return }
            for record in records {
                if let action = analyticsPublication(
                    AnalyticsJSON.encode(record, at: pose.timestamp), session: index)
                {
                    actions.append(action)
                }
            }
            return
        }
        let acceptedBefore = hosted[index].analyzer.lastAcceptedTime
        let found = hosted[index].analyzer.process(pose)
        for event in found {
            let sequence = hosted[index].nextEvent
            hosted[index].nextEvent &+= 1
            if let last = hosted[index].identity.lastEvent, sequence <= last {
                regenerated &+= 1
                continue
            }
            var json: [UInt8] = []
            json.reserveCapacity(160)
            MotionJSON.encode(event, at: pose.timestamp, into: &json)
            Self.endWithRun(&json, hosted[index].runSuffix)
            actions.append(
                .publish(
                    Publication(
                        kind: .event, topic: hosted[index].eventTopic, bytes: json,
                        stream: hosted[index].identity.stream, sequence: sequence)))
        }
        // Rejected or held: no snapshot. The snapshot is the state after the last pose
        // analysed (this one, or a held one it confirmed while it is held in turn).
        guard let time = hosted[index].analyzer.lastAcceptedTime, time != acceptedBefore else { return }
        guard
            hosted[index].throttle.shouldPublish(
                repCount: hosted[index].analyzer.snapshot.repCount,
                rejectedCount: hosted[index].analyzer.snapshot.rejectedCount, at: time)
        else { return }
        let sequence = hosted[index].nextSnapshot
        hosted[index].nextSnapshot &+= 1
        if let last = hosted[index].identity.lastSnapshot, sequence <= last {
            regenerated &+= 1
            return
        }
        var snapshot = hosted[index].analyzer.snapshot
        snapshot.isRunning = true
        var json: [UInt8] = []
        json.reserveCapacity(384)
        hosted[index].snapshotEncoder.encode(snapshot, at: time, into: &json)
        Self.endWithRun(&json, hosted[index].runSuffix)
        actions.append(
            .publish(
                Publication(
                    kind: .snapshot, topic: hosted[index].snapshotTopic, bytes: json,
                    stream: hosted[index].identity.stream, sequence: sequence)))
    }
}
