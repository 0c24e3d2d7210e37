import KinesiaJSON
import KinesiaMotion

/// What a process publishes on `health/<process>/`: who it is and its counters.
///
/// The JSON (keys sorted, so the bytes are stable):
///
/// ```json
/// {"counters":{"poses":1200,"rejected.nonFinite":0},"pid":4242,"process":"worker-cam0-left",
///  "role":"worker","uptime":12.5}
/// ```
///
/// It is read with the project's one strict JSON reader: a duplicate key, a number that is not
/// a whole number where a count is expected, or a missing field is an error.
public struct HealthReport: Hashable, Sendable {
    /// The process's name, as in its `health/<process>/` topic.
    public var process: String
    /// What the process does: `"broker"`, `"ingest"`, `"worker"`, `"listen"`...
    public var role: String
    /// The operating system's process id.
    public var pid: Int
    /// Seconds since the process started.
    public var uptime: Double
    /// Named counters: messages sent, received, dropped per reason, gaps...
    public var counters: [String: Int]
    /// Where the process answers replay requests, and the last sequence number of each stream
    /// it holds (the heartbeat that lets a receiver see a loss at the end of a quiet stream);
    /// `nil` for a process that serves no replay (`"replay"` is then absent from the JSON).
    public var replay: ReplayAnnouncement?
    /// Streams the process published and no longer serves because they go on in another
    /// process (a pool session moved, or fenced at a lease's lapse): at most
    /// ``MovingStream/maximumPerReport`` (`"moving"`, absent when empty).
    public var moving: [MovingStream]

    /// Creates a report.
    public init(
        process: String, role: String, pid: Int, uptime: Double, counters: [String: Int],
        replay: ReplayAnnouncement? = nil, moving: [MovingStream] = []
    ) {
        self.process = process
        self.role = role
        self.pid = pid
        self.uptime = uptime
        self.counters = counters
        self.replay = replay
        self.moving = moving
    }

    /// The largest counter a report carries exactly: 2^53 - 1, the largest whole number every
    /// JSON reader (JavaScript's and Python's `float` too) reads exactly. Larger counters are
    /// written, and read, as this value: "at least".
    public static let largestCounter: Double = 9_007_199_254_740_991

    static func clampedCounter(_ value: Int) -> Int {
        Swift.max(-Int(largestCounter), Swift.min(Int(largestCounter), value))
    }

    /// The report as JSON, keys sorted (each counter within ±``largestCounter``).
    /// - Throws: ``WireError/nonFinite(_:)`` when `uptime` is NaN or infinite (JSON has no
    ///   such numbers).
    public func json() throws(WireError) -> [UInt8] {
        guard uptime.isFinite else { throw .nonFinite(.uptime) }
        var out = "{\"counters\":{"
        for (position, name) in counters.keys.sorted().enumerated() {
            if position > 0 { out += "," }
            JSONWriter.appendString(name, to: &out)
            out += ":" + String(Self.clampedCounter(counters[name]!))
        }
        out += "}"
        if !moving.isEmpty {
            out += ",\"moving\":["
            for (index, stream) in moving.prefix(MovingStream.maximumPerReport).enumerated() {
                if index > 0 { out += "," }
                stream.appendJSON(to: &out)
            }
            out += "]"
        }
        out += ",\"pid\":" + String(pid) + ",\"process\":"
        JSONWriter.appendString(process, to: &out)
        if let replay {
            out += ",\"replay\":"
            replay.appendJSON(to: &out)
        }
        out += ",\"role\":"
        JSONWriter.appendString(role, to: &out)
        out += ",\"uptime\":" + JSONWriter.compactNumber(uptime) + "}"
        return Array(out.utf8)
    }

    /// Decodes a report from its JSON; unknown keys are ignored.
    /// - Throws: ``WireError/invalidJSON(_:)`` when the JSON is malformed (duplicate keys
    ///   included) or a field is missing or of the wrong type.
    public init(json: some StringProtocol) throws(WireError) {
        do {
            let fields = try JSONFields(JSONParser.parse(json), what: "a health report")
            var counters: [String: Int] = [:]
            let counterFields = try fields.object("counters")
            for name in counterFields.members.keys {
                let value = try counterFields.number(name)
                guard value == value.rounded() else {
                    throw counterFields.error(name, "a counter must be a whole number, found \(value)")
                }
                // Beyond JSON's exact integers (a peer's counter driven up by a forged sequence
                // number): read as the largest exact value rather than refusing the report.
                counters[name] = Int(Swift.max(-Self.largestCounter, Swift.min(Self.largestCounter, value)))
            }
            let replay = try fields.optionalObject("replay").map { (object) throws(JSONShapeError) in
                try ReplayAnnouncement(fields: object)
            }
            self.init(
                process: try fields.string("process"), role: try fields.string("role"),
                pid: try fields.integer("pid"), uptime: try fields.number("uptime"), counters: counters,
                replay: replay, moving: try MovingStream.list(in: fields))
        } catch let error as JSONSyntaxError {
            throw .invalidJSON(error.description)
        } catch let error as JSONShapeError {
            let field = JSONPathComponent.describe(error.path)
            throw .invalidJSON(field.isEmpty ? error.message : "\(field): \(error.message)")
        } catch {
            throw .invalidJSON(String(describing: error))
        }
    }
}
