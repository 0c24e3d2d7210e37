public import KinesiaClient
import KinesiaControl
import KinesiaJSON
public import KinesiaMotion
import KinesiaSystem
public import KinesiaWire

/// What `kinesia web` knows of the site, from the bus: each session's latest snapshot and run,
/// each process's latest health report. A value with no I/O, time passed in.
public struct WebModel: Sendable {
    /// One session, as its messages told it.
    public struct Session: Sendable {
        /// Its camera.
        public var camera: String
        /// Its name.
        public var name: String
        /// Its latest snapshot and the pose time it was made after.
        public var snapshot: (value: MotionSnapshot, t: Double)?
        /// Its run, from the latest `runStarted` (nil: none seen; a worker of `--session` flags
        /// announces none).
        public var run: (id: UInt64, exercise: String, side: String, patient: String?)?
        /// When its latest message came.
        public var received: Duration
    }

    /// One process, as its latest health report told it.
    public struct Process: Sendable {
        /// The report.
        public var report: HealthReport
        /// When it came.
        public var received: Duration
    }

    /// The sessions, by `camera/name`.
    public private(set) var sessions: [String: Session] = [:]
    /// The processes, by name.
    public private(set) var processes: [String: Process] = [:]

    /// An empty model.
    public init() {}

    /// Takes in one message received at `now`.
    public mutating func apply(_ message: BusMessage, now: Duration) {
        switch message {
        case .snapshot(let snapshot):
            guard let camera = snapshot.topic.camera, let name = snapshot.topic.session else { return }
            update(camera: camera, name: name, now: now) { $0.snapshot = (snapshot.snapshot, snapshot.t) }
        case .run(let run):
            guard case .started(let plan) = run.record else { return }
            update(camera: plan.key.camera, name: plan.key.name, now: now) {
                $0.run = (plan.run, plan.exercise.id, plan.analysis.rawValue, plan.patient)
            }
        case .health(let health):
            processes[health.report.process] = Process(report: health.report, received: now)
        default:
            break
        }
    }

    private mutating func update(
        camera: String, name: String, now: Duration, _ change: (inout Session) -> Void
    ) {
        var session = sessions["\(camera)/\(name)"] ?? Session(camera: camera, name: name, received: now)
        change(&session)
        session.received = now
        sessions["\(camera)/\(name)"] = session
    }

    /// `/api/v1/sessions`: `{"sessions":[...]}`, sorted by camera and name; each with its
    /// `camera`, `name`, `exercise`, `side`, `patient` and `run` (null when no run was seen),
    /// `ageSeconds` (since its latest message) and `snapshot` (the wire format's snapshot
    /// object, `null` before the first).
    public func sessionsJSON(now: Duration) -> String {
        "{\"sessions\":["
            + sessions.keys.sorted().compactMap { sessionJSON($0, now: now) }.joined(separator: ",")
            + "]}"
    }

    /// One session of ``sessionsJSON(now:)``, by `camera/name` (`nil`: not known).
    public func sessionJSON(_ key: String, now: Duration) -> String? {
        guard let session = sessions[key] else { return nil }
        var text = "{\"camera\":"
        JSONWriter.appendString(session.camera, to: &text)
        text += ",\"name\":"
        JSONWriter.appendString(session.name, to: &text)
        text += ",\"exercise\":" + JSONWriter.optionalString(session.run?.exercise)
        text += ",\"side\":" + JSONWriter.optionalString(session.run?.side)
        text += ",\"patient\":" + JSONWriter.optionalString(session.run?.patient)
        text += ",\"run\":" + (session.run.map { "\"\($0.id)\"" } ?? "null")
        text += ",\"ageSeconds\":" + JSONWriter.number(Self.seconds(now - session.received))
        text += ",\"snapshot\":"
        text += session.snapshot.map { MotionJSON.encode($0.value, at: $0.t) } ?? "null"
        return text + "}"
    }

    /// `/api/v1/cameras`: `{"cameras":[...]}`, by name; each with its `sessions` (their names)
    /// and its `publishers` (the processes whose `health/` announces its poses: its ingest).
    public func camerasJSON() -> String {
        var sessionsByCamera: [String: [String]] = [:]
        for session in sessions.values { sessionsByCamera[session.camera, default: []].append(session.name) }
        var publishers: [String: Set<String>] = [:]
        for (name, process) in processes {
            for info in process.report.replay?.streams ?? [] where info.topic.kind == .pose {
                if let camera = info.topic.camera { publishers[camera, default: []].insert(name) }
            }
        }
        let cameras = Set(sessionsByCamera.keys).union(publishers.keys).sorted()
        let entries = cameras.map { camera in
            var text = "{\"camera\":"
            JSONWriter.appendString(camera, to: &text)
            text +=
                ",\"sessions\":["
                + (sessionsByCamera[camera] ?? []).sorted().map(JSONWriter.string).joined(separator: ",")
            text +=
                "],\"publishers\":["
                + (publishers[camera] ?? []).sorted().map(JSONWriter.string).joined(separator: ",")
            return text + "]}"
        }
        return "{\"cameras\":[" + entries.joined(separator: ",") + "]}"
    }

    /// `/api/v1/processes`: `{"processes":[...]}`, sorted by name; each with its `name`,
    /// `role`, `pid`, `uptime`, `ageSeconds` and `counters`.
    public func processesJSON(now: Duration) -> String {
        var text = "{\"processes\":["
        for (index, name) in processes.keys.sorted().enumerated() {
            let process = processes[name]!
            if index > 0 { text += "," }
            text += "{\"name\":"
            JSONWriter.appendString(name, to: &text)
            text += ",\"role\":"
            JSONWriter.appendString(process.report.role, to: &text)
            text += ",\"pid\":\(process.report.pid),\"uptime\":" + JSONWriter.number(process.report.uptime)
            text += ",\"ageSeconds\":" + JSONWriter.number(Self.seconds(now - process.received))
            text += ",\"counters\":{"
            for (counter, key) in process.report.counters.keys.sorted().enumerated() {
                if counter > 0 { text += "," }
                JSONWriter.appendString(key, to: &text)
                text += ":\(process.report.counters[key]!)"
            }
            text += "}}"
        }
        return text + "]}"
    }

    /// `duration` in seconds, to the millisecond (an age, for people and dashboards).
    static func seconds(_ duration: Duration) -> Double {
        (duration.seconds * 1000).rounded() / 1000
    }
}
