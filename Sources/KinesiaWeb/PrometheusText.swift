import KinesiaJSON
import KinesiaMotion
import KinesiaWire

/// `/metrics`: the model in the Prometheus text exposition format (version 0.0.4).
///
/// Every counter of every process's `health/` report becomes `kinesia_<counter>` (letters,
/// digits and `_`; `replay.requests` is `kinesia_replay_requests`), labelled `process` and
/// `role`: a counter (`_total`, `# TYPE ... counter`) unless it is one of ``gauges`` (values that
/// go down: connections now, sessions hosted). Beside them, per process
/// `kinesia_process_uptime_seconds` and `kinesia_process_report_age_seconds`, and per session
/// (labels `camera`, `session`) `kinesia_session_reps`, `kinesia_session_rejected_reps` and
/// `kinesia_session_value_degrees` (absent while the value cannot be measured).
public enum PrometheusText {
    /// The health counters that are gauges.
    public static let gauges: Set<String> = [
        "capacity", "capacityCeiling", "catchingUp", "epoch", "replayConnections", "sessions", "workers",
        "connections", "subscribers", "held", "queued", "cameras", "eventStreams",
    ]

    /// The content type of the exposition format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The text of `model` at `now`.
    public static func render(_ model: WebModel, now: Duration) -> String {
        var families: [String: (type: String, help: String, samples: [String])] = [:]
        func add(
            _ name: String, _ type: String, _ help: String, _ labels: [(String, String)], _ value: String
        ) {
            let text = labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",")
            families[name, default: (type, help, [])].samples.append("\(name){\(text)} \(value)")
        }
        for name in model.processes.keys.sorted() {
            let process = model.processes[name]!
            let labels = [("process", name), ("role", process.report.role)]
            add(
                "kinesia_process_uptime_seconds", "gauge", "Seconds since the process started.", labels,
                JSONWriter.number(process.report.uptime))
            add(
                "kinesia_process_report_age_seconds", "gauge",
                "Seconds since the process's latest health report.",
                labels, JSONWriter.number(WebModel.seconds(now - process.received)))
            for counter in process.report.counters.keys.sorted() {
                let isGauge = gauges.contains(counter)
                let metric = "kinesia_" + sanitize(counter) + (isGauge ? "" : "_total")
                add(
                    metric, isGauge ? "gauge" : "counter", "The health counter \(counter).", labels,
                    "\(process.report.counters[counter]!)")
            }
        }
        for key in model.sessions.keys.sorted() {
            let session = model.sessions[key]!
            guard let snapshot = session.snapshot?.value else { continue }
            let labels = [("camera", session.camera), ("session", session.name)]
            add("kinesia_session_reps", "gauge", "Clean reps of the session.", labels, "\(snapshot.repCount)")
            add(
                "kinesia_session_rejected_reps", "gauge", "Rejected reps of the session.", labels,
                "\(snapshot.rejectedCount)")
            if let value = snapshot.value, value.isFinite {
                add(
                    "kinesia_session_value_degrees", "gauge", "The session's smoothed measure now, degrees.",
                    labels,
                    JSONWriter.number(value))
            }
        }
        var text = ""
        for name in families.keys.sorted() {
            let family = families[name]!
            text += "# HELP \(name) \(family.help)\n# TYPE \(name) \(family.type)\n"
            for sample in family.samples { text += sample + "\n" }
        }
        return text
    }

    /// `name` with every character that a metric name may not hold replaced by `_`.
    static func sanitize(_ name: String) -> String {
        var result = ""
        for scalar in name.unicodeScalars {
            let allowed =
                ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            result.unicodeScalars.append(allowed ? scalar : "_")
        }
        return result
    }

    /// A label value as the format writes it: `\`, `"` and line feeds escaped.
    static func escape(_ value: String) -> String {
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }
}
