public import KinesiaControl
import KinesiaJSON
import KinesiaWire

/// A therapist's command on a session over HTTP: `POST /api/v1/sessions/CAMERA/NAME/ACTION`
/// with a JSON body, ACTION one of
///
/// | action | body | the control plane's command |
/// | --- | --- | --- |
/// | `start` | `{"exercise":ID,"side":"left"\|"right"\|"analytics","patient":REF,"pool":NAME}` (`patient`, `pool` optional) | `session start` |
/// | `stop` | `{}` | `session stop` |
/// | `reset` | `{}` | `session reset` |
/// | `baseline` | `{"reps":N}` (`reps` optional) | `session baseline` |
///
/// sent to the coordinator as `kinesia session` sends it (``ControlClient``); `Idempotency-Key`
/// (8 to 64 letters, digits, `-` or `_`) is its request id, so that a retry is done once.
public struct ControlCall: Sendable, Hashable {
    /// The command.
    public var command: ControlRequest.Command
    /// The request id, when the client gave one.
    public var requestID: String?

    /// The actions.
    public static let actions = ["start", "stop", "reset", "baseline"]

    /// The call `request` makes, when its path is a session's action (`nil` otherwise); what is
    /// wrong with its body otherwise.
    public static func parse(_ request: HTTPRequest) -> Result<ControlCall, ControlError>? {
        let prefix = "/api/v1/sessions/"
        guard request.path.hasPrefix(prefix) else { return nil }
        let parts = request.path.dropFirst(prefix.count).split(
            separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, actions.contains(String(parts[2])) else { return nil }
        do throws(ControlError) {
            let key = try SessionKey(parsing: "\(parts[0])/\(parts[1])")
            let fields: JSONFields
            do {
                let text = request.body.isEmpty ? Array("{}".utf8) : request.body
                fields = try JSONFields(JSONParser.parse(bytes: text), what: "the body")
            } catch {
                throw ControlError.invalid("the body must be a JSON object: \(error)")
            }
            let command: ControlRequest.Command
            switch parts[2] {
            case "start":
                try Self.allow(["exercise", "side", "patient", "pool"], in: fields)
                let exercise = try Self.string("exercise", in: fields)
                command = .start(
                    try SessionPlan(
                        key: key, exerciseFile: try SessionPlan.catalogExercise(exercise),
                        analysis: SessionPlan.Analysis(parsing: try Self.string("side", in: fields)),
                        patient: try Self.optionalString("patient", in: fields),
                        pool: try Self.optionalString("pool", in: fields) ?? SessionPlan.defaultPool))
            case "stop":
                try Self.allow([], in: fields)
                command = .stop(key)
            case "reset":
                try Self.allow([], in: fields)
                command = .reset(key)
            default:
                try Self.allow(["reps"], in: fields)
                var reps: Int?
                if fields.has("reps") {
                    do { reps = try fields.integer("reps") } catch { throw ControlError.invalid("\(error)") }
                    guard let count = reps, (1...50).contains(count) else {
                        throw ControlError.invalid("reps must be 1 to 50")
                    }
                }
                command = .baseline(key, reps: reps)
            }
            var requestID: String?
            if let key = request.headers["idempotency-key"] {
                guard (8...64).contains(key.utf8.count),
                    key.utf8.allSatisfy({
                        $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0)
                            || (0x61...0x7A).contains($0)
                    })
                else { throw ControlError.invalid("Idempotency-Key must be 8 to 64 letters, digits, - or _") }
                requestID = key
            }
            return .success(ControlCall(command: command, requestID: requestID))
        } catch {
            return .failure(error)
        }
    }

    /// The HTTP answer of the coordinator's `answer`: 200 when done, 409 when the session is
    /// not in a state for it, 503 when no worker could do it, 400 for an invalid command, 403
    /// when refused; the body `{"outcome":O,"message":M,"worker":W,"run":R}`.
    public static func response(to answer: ControlAnswer) -> HTTPResponse {
        let status =
            switch answer.outcome {
            case .started, .stopped, .reset, .baselineStarted, .listed: 200
            case .alreadyRunning, .notRunning: 409
            case .noLiveWorker, .notConfirmed: 503
            case .invalid: 400
            case .notAllowed: 403
            }
        var text = "{\"outcome\":"
        JSONWriter.appendString(answer.outcome.rawValue, to: &text)
        text += ",\"message\":"
        JSONWriter.appendString(answer.message, to: &text)
        text += ",\"worker\":"
        if let worker = answer.worker { JSONWriter.appendString(worker, to: &text) } else { text += "null" }
        text += ",\"run\":" + (answer.run.map { "\"\($0)\"" } ?? "null") + "}"
        return .json(text, status: status)
    }

    private static func allow(_ keys: Set<String>, in fields: JSONFields) throws(ControlError) {
        do { try fields.rejectUnknownKeys(allowed: keys) } catch { throw .invalid("\(error)") }
    }

    private static func string(_ key: String, in fields: JSONFields) throws(ControlError) -> String {
        do { return try fields.string(key) } catch { throw .invalid("\(error)") }
    }

    private static func optionalString(_ key: String, in fields: JSONFields) throws(ControlError) -> String? {
        fields.has(key) ? try string(key, in: fields) : nil
    }
}
