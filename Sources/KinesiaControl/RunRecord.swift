import KinesiaJSON
public import KinesiaMotion
public import KinesiaWire

/// A session's run, as it is announced on `session/<camera>/<name>/` (docs/wire-format.md):
/// `runStarted` when a run begins (its plan: exercise with its effective thresholds, side,
/// patient), `baselineStarted` right after it when the run begins with a baseline measurement,
/// `runEnded` when it is stopped or reset (its summary: counts, reps, faults, baseline). Every
/// record carries the run's number, so that a record of the site can say which reps were whose.
///
/// ```json
/// {"type":"runStarted","run":"3","camera":"cam0","session":"left","exercise":"squat","side":"left","patient":"p-17","thresholds":{"start":40,"end":25,"minPeak":80},"exerciseFile":"{\"exercise\":\"squat\"}"}
/// {"type":"baselineStarted","run":"3","camera":"cam0","session":"left","reps":3}
/// {"type":"runEnded","run":"3","camera":"cam0","session":"left","reason":"stopped","repCount":5,"rejectedCount":1,"best":101.5,"reps":[{"peak":98.2,"faults":[],"start":1.7,"end":3.9}],"faults":{"kneesOverToes":1},"baseline":99.1}
/// ```
public enum RunRecord: Hashable, Sendable {
    /// A run began.
    case started(SessionPlan)
    /// The run begins with a baseline measurement of `reps` clean reps (or holds).
    case baselineStarted(run: UInt64, key: SessionKey, reps: Int)
    /// A run ended: why, and the session's counts at its end.
    case ended(RunEnd)

    /// A pose of a camera: its ingest's stream and its sequence number.
    public struct PosePosition: Hashable, Sendable {
        /// The ingest's stream.
        public var stream: StreamID
        /// The pose's sequence number.
        public var sequence: UInt64

        /// A position.
        public init(stream: StreamID, sequence: UInt64) {
            self.stream = stream
            self.sequence = sequence
        }
    }

    /// How a run ended.
    public struct RunEnd: Hashable, Sendable {
        /// Why: `stopped` (a stop, or a new exercise) or `reset` (a new run follows).
        public enum Reason: String, Hashable, Sendable, CaseIterable {
            /// The session was stopped.
            case stopped
            /// The session goes on at a new run.
            case reset
        }

        /// The run.
        public var run: UInt64
        /// The session.
        public var key: SessionKey
        /// Why it ended.
        public var reason: Reason
        /// Clean reps.
        public var repCount: Int
        /// Rejected reps.
        public var rejectedCount: Int
        /// The best angle reached, in degrees.
        public var best: Double
        /// Every judged rep of the run, clean and rejected, in the order they ended, as
        /// `kinesia analyze --format json` lists them (`nil`: not known, a worker without a
        /// journal restarted during the run).
        public var reps: [Rep]?
        /// The form faults told during the run (`formFault` events), by fault.
        public var faults: [FormFeedback: Int]
        /// The baseline the run measured (`nil`: none completed).
        public var baseline: Double?
        /// The first pose of its camera the run analysed (`nil`: none).
        public var firstPose: PosePosition?
        /// The last pose of its camera the run analysed (`nil`: none).
        public var lastPose: PosePosition?

        /// A run's end.
        public init(
            run: UInt64, key: SessionKey, reason: Reason, repCount: Int, rejectedCount: Int, best: Double,
            reps: [Rep]? = nil, faults: [FormFeedback: Int] = [:], baseline: Double? = nil,
            firstPose: PosePosition? = nil, lastPose: PosePosition? = nil
        ) {
            self.firstPose = firstPose
            self.lastPose = lastPose
            self.run = run
            self.key = key
            self.reason = reason
            self.repCount = repCount
            self.rejectedCount = rejectedCount
            self.best = best
            self.reps = reps
            self.faults = faults
            self.baseline = baseline
        }
    }

    /// The session.
    public var key: SessionKey {
        switch self {
        case .started(let plan): plan.key
        case .baselineStarted(_, let key, _): key
        case .ended(let end): end.key
        }
    }

    /// `run 3 started (squat left, patient p-17)`, `run 3 ended (stopped): 5 reps, 1 rejected`.
    public var description: String {
        switch self {
        case .started(let plan):
            "run \(plan.run) started (\(plan.exercise.id) \(plan.analysis.rawValue)"
                + (plan.patient.map { ", patient \($0)" } ?? "") + ")"
        case .baselineStarted(let run, _, let reps):
            "run \(run) begins with a baseline of \(reps) rep\(reps == 1 ? "" : "s")"
        case .ended(let end):
            "run \(end.run) ended (\(end.reason.rawValue)): \(end.repCount) reps, \(end.rejectedCount) rejected"
        }
    }

    /// The run's number.
    public var run: UInt64 {
        switch self {
        case .started(let plan): plan.run
        case .baselineStarted(let run, _, _): run
        case .ended(let end): end.run
        }
    }

    /// The record as one JSON line (without a newline).
    public func json() -> String {
        switch self {
        case .started(let plan):
            var out =
                "{\"type\":\"runStarted\",\"run\":\"\(plan.run)\",\"camera\":"
                + JSONWriter.string(plan.key.camera)
            out += ",\"session\":" + JSONWriter.string(plan.key.name)
            out += ",\"exercise\":" + JSONWriter.string(plan.exercise.id)
            out += ",\"side\":\"\(plan.analysis.rawValue)\""
            if let patient = plan.patient { out += ",\"patient\":" + JSONWriter.string(patient) }
            switch plan.exercise.kind {
            case .reps(let start, let end, let minPeak):
                out +=
                    ",\"thresholds\":{\"start\":\(JSONWriter.compactNumber(start)),\"end\":"
                    + "\(JSONWriter.compactNumber(end)),\"minPeak\":\(JSONWriter.compactNumber(minPeak))}"
            case .hold(let threshold, let seconds):
                out +=
                    ",\"thresholds\":{\"threshold\":\(JSONWriter.compactNumber(threshold)),\"seconds\":"
                    + "\(JSONWriter.compactNumber(seconds))}"
            }
            out += ",\"exerciseFile\":" + JSONWriter.string(plan.exerciseFile) + "}"
            return out
        case .baselineStarted(let run, let key, let reps):
            return "{\"type\":\"baselineStarted\",\"run\":\"\(run)\",\"camera\":"
                + JSONWriter.string(key.camera)
                + ",\"session\":" + JSONWriter.string(key.name) + ",\"reps\":\(reps)}"
        case .ended(let end):
            var out =
                "{\"type\":\"runEnded\",\"run\":\"\(end.run)\",\"camera\":"
                + JSONWriter.string(end.key.camera)
                + ",\"session\":" + JSONWriter.string(end.key.name) + ",\"reason\":\"\(end.reason.rawValue)\""
                + ",\"repCount\":\(end.repCount),\"rejectedCount\":\(end.rejectedCount),\"best\":"
                + JSONWriter.compactNumber(end.best)
            if let reps = end.reps {
                out += ",\"reps\":[" + reps.map(MotionJSON.encode).joined(separator: ",") + "]"
            }
            out += ",\"faults\":{"
            out += end.faults.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { JSONWriter.string($0.key.rawValue) + ":\($0.value)" }.joined(separator: ",")
            out += "}"
            if let baseline = end.baseline { out += ",\"baseline\":" + JSONWriter.compactNumber(baseline) }
            for (name, position) in [("firstPose", end.firstPose), ("lastPose", end.lastPose)] {
                guard let position else { continue }
                out +=
                    ",\"\(name)\":{\"stream\":\"\(position.stream)\",\"sequence\":\"\(position.sequence)\"}"
            }
            return out + "}"
        }
    }

    /// Reads a record that ``json()`` wrote.
    ///
    /// - Throws: ``ControlError/malformed(_:)`` for anything else, saying what is wrong.
    public init(json: String) throws(ControlError) {
        do {
            let fields = try JSONFields(try JSONParser.parse(json), what: "a run record")
            func run() throws -> UInt64 {
                guard let value = UInt64(try fields.string("run")) else {
                    throw fields.error("run", "must be a whole number as a decimal string")
                }
                return value
            }
            let key = try SessionKey(camera: fields.string("camera"), name: fields.string("session"))
            switch try fields.string("type") {
            case "runStarted":
                try fields.rejectUnknownKeys(allowed: [
                    "type", "run", "camera", "session", "exercise", "side", "patient", "thresholds",
                    "exerciseFile",
                ])
                let plan = try SessionPlan(
                    key: key, exerciseFile: fields.string("exerciseFile"),
                    analysis: SessionPlan.Analysis(parsing: fields.string("side")),
                    patient: fields.has("patient") ? try fields.string("patient") : nil, run: try run())
                guard plan.exercise.id == (try fields.string("exercise")) else {
                    throw fields.error("exercise", "differs from the exercise file's \(plan.exercise.id)")
                }
                self = .started(plan)
            case "baselineStarted":
                try fields.rejectUnknownKeys(allowed: ["type", "run", "camera", "session", "reps"])
                let reps = try fields.integer("reps")
                try SessionPlan.checkBaseline(reps: reps)
                self = .baselineStarted(run: try run(), key: key, reps: reps)
            case "runEnded":
                try fields.rejectUnknownKeys(allowed: [
                    "type", "run", "camera", "session", "reason", "repCount", "rejectedCount", "best", "reps",
                    "faults", "baseline", "firstPose", "lastPose",
                ])
                func position(_ key: String) throws -> PosePosition? {
                    guard fields.has(key) else { return nil }
                    let item = try fields.object(key)
                    try item.rejectUnknownKeys(allowed: ["stream", "sequence"])
                    let text = try item.string("stream")
                    guard text.count == 16, let stream = UInt64(text, radix: 16), stream != 0 else {
                        throw item.error("stream", "must be 16 hexadecimal digits, not 0")
                    }
                    guard let sequence = UInt64(try item.string("sequence")) else {
                        throw item.error("sequence", "must be a whole number as a decimal string")
                    }
                    return PosePosition(stream: StreamID(stream), sequence: sequence)
                }
                let word = try fields.string("reason")
                guard let reason = RunEnd.Reason(rawValue: word) else {
                    throw fields.error("reason", "unknown reason \(word.debugDescription)")
                }
                var faults: [FormFeedback: Int] = [:]
                if let counts = try fields.optionalObject("faults") {
                    for name in counts.members.keys.sorted() {
                        guard let fault = FormFeedback(rawValue: name) else {
                            throw counts.error(name, "unknown fault \(name.debugDescription)")
                        }
                        let count = try counts.integer(name)
                        guard count > 0 else { throw counts.error(name, "a fault's count is positive") }
                        faults[fault] = count
                    }
                }
                self = .ended(
                    RunEnd(
                        run: try run(), key: key, reason: reason, repCount: try fields.integer("repCount"),
                        rejectedCount: try fields.integer("rejectedCount"), best: try fields.number("best"),
                        reps: fields.has("reps") ? try MotionJSON.reps(fields.array("reps")) : nil,
                        faults: faults,
                        baseline: fields.has("baseline") ? try fields.number("baseline") : nil,
                        firstPose: try position("firstPose"), lastPose: try position("lastPose")))
            case let other:
                throw fields.error("type", "unknown run record \(other.debugDescription)")
            }
        } catch let error as ControlError {
            throw .malformed("a run record: \(error.description)")
        } catch let error as JSONShapeError {
            let field = JSONPathComponent.describe(error.path)
            throw .malformed("a run record: " + (field.isEmpty ? "" : field + ": ") + error.message)
        } catch {
            throw .malformed("a run record: \(error)")
        }
    }
}
