import KinesiaJSON
import KinesiaMotion

/// Reads the members of one JSON object of a topology file, with errors that name the field
/// (`processes[2].restart`) in the words `kinesia up` prints.
private struct TopologyObject {
    let fields: JSONFields

    /// Reads `value` at `path` as an object whose keys are all in `known`.
    init(_ value: JSONValue, path: [JSONPathComponent], known: [String]) throws(JSONShapeError) {
        guard case .object = value else {
            throw JSONShapeError("expected an object, got \(Self.describe(value))", path: path)
        }
        fields = try JSONFields(value, path: path)
        for key in fields.members.keys.sorted() where !known.contains(key) {
            throw fields.error(key, "unknown key (expected one of \(known.joined(separator: ", ")))")
        }
    }

    /// The value of a required key.
    func required(_ key: String) throws(JSONShapeError) -> JSONValue {
        guard let value = fields.members[key] else { throw fields.error(key, "missing (required)") }
        return value
    }

    /// The value of an optional key (`nil` when absent; `null` is a wrong type).
    func optional(_ key: String) -> JSONValue? { fields.members[key] }

    func string(_ value: JSONValue, _ key: String) throws(JSONShapeError) -> String {
        guard case .string(let string) = value else { throw mismatch(value, key, "a string") }
        return string
    }

    func strings(_ value: JSONValue, _ key: String) throws(JSONShapeError) -> [String] {
        guard case .array(let elements) = value else { throw mismatch(value, key, "an array") }
        var result: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let string) = element else {
                throw JSONShapeError(
                    "expected a string, got \(Self.describe(element))",
                    path: fields.path(key) + [.index(index)])
            }
            result.append(string)
        }
        return result
    }

    func number(_ value: JSONValue, _ key: String) throws(JSONShapeError) -> Double {
        guard case .number(let number) = value else { throw mismatch(value, key, "a number") }
        return number
    }

    /// A string that must be one of a string enum's raw values.
    func choice<T: RawRepresentable & CaseIterable>(_ value: JSONValue, _ key: String) throws(JSONShapeError)
        -> T
    where T.RawValue == String {
        let raw = try string(value, key)
        guard let choice = T(rawValue: raw) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw fields.error(key, "expected one of \(allowed), got \"\(raw)\"")
        }
        return choice
    }

    /// A number of seconds in `range`, as a `Duration`; `nil` when the key is absent.
    func seconds(_ key: String, in range: ClosedRange<Double>, excludingZero: Bool = false)
        throws(JSONShapeError) -> Duration?
    {
        guard let value = optional(key) else { return nil }
        let seconds = try number(value, key)
        guard range.contains(seconds), !(excludingZero && seconds == 0) else {
            let lower =
                excludingZero ? "more than \(Int(range.lowerBound))" : "\(Int(range.lowerBound)) or more"
            throw fields.error(
                key,
                "expected a number of seconds, \(lower) and at most \(Int(range.upperBound)), got \(seconds)")
        }
        return .milliseconds((seconds * 1000).rounded())
    }

    func mismatch(_ value: JSONValue, _ key: String, _ expected: String) -> JSONShapeError {
        fields.error(key, "expected \(expected), got \(Self.describe(value))")
    }

    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "true or false"
        case .number(let number): JSONWriter.compactNumber(number)
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// The longest duration a topology may give (one week): keeps every sum of durations finite.
private let longestSeconds: Double = 7 * 24 * 3600

extension Topology {
    /// Decodes the JSON format described on ``Topology`` from a parsed document; ``validate()``
    /// is separate.
    /// - Throws: `JSONShapeError` whose path is the bad field.
    init(json value: JSONValue) throws(JSONShapeError) {
        let object = try TopologyObject(
            value, path: [], known: ["bus", "processes", "shutdown", "restart", "startup"])
        let processesValue = try object.required("processes")
        guard case .array(let entries) = processesValue else {
            throw object.mismatch(processesValue, "processes", "an array")
        }
        var processes: [ProcessSpec] = []
        for (index, entry) in entries.enumerated() {
            processes.append(try ProcessSpec(json: entry, path: [.key("processes"), .index(index)]))
        }
        self.init(
            bus: try object.optional("bus").map { (value) throws(JSONShapeError) in
                try object.string(value, "bus")
            },
            processes: processes,
            shutdown: try object.optional("shutdown").map { (value) throws(JSONShapeError) in
                try ShutdownPolicy(json: value, path: [.key("shutdown")])
            } ?? .init(),
            restart: try object.optional("restart").map { (value) throws(JSONShapeError) in
                try RestartLimits(json: value, path: [.key("restart")])
            } ?? .init(),
            startup: try object.optional("startup").map { (value) throws(JSONShapeError) in
                try StartupPolicy(json: value, path: [.key("startup")])
            } ?? .init())
    }
}

extension ProcessSpec {
    /// Decodes one entry of `processes`.
    fileprivate init(json value: JSONValue, path: [JSONPathComponent]) throws(JSONShapeError) {
        let object = try TopologyObject(
            value, path: path,
            known: ["name", "command", "executable", "restart", "role", "after", "environment"])
        self.init(
            name: try object.string(object.required("name"), "name"),
            command: try object.strings(object.required("command"), "command"),
            executable: try object.optional("executable").map { (value) throws(JSONShapeError) in
                try object.string(value, "executable")
            },
            restart: try object.optional("restart").map { (value) throws(JSONShapeError) -> RestartPolicy in
                try object.choice(value, "restart")
            } ?? .onFailure,
            role: try object.optional("role").map { (value) throws(JSONShapeError) -> ProcessRole in
                try object.choice(value, "role")
            },
            after: try object.optional("after").map { (value) throws(JSONShapeError) in
                try object.strings(value, "after")
            } ?? [],
            environment: try object.optional("environment").map { (value) throws(JSONShapeError) in
                try Self.environment(value, object: object)
            } ?? [:])
    }

    /// The `environment` object: variable names to string values.
    private static func environment(_ value: JSONValue, object: TopologyObject) throws(JSONShapeError)
        -> [String: String]
    {
        guard case .object(let members) = value else {
            throw object.mismatch(value, "environment", "an object")
        }
        var result: [String: String] = [:]
        for (name, element) in members {
            guard case .string(let string) = element else {
                throw JSONShapeError(
                    "expected a string, got \(TopologyObject.describe(element))",
                    path: object.fields.path("environment") + [.key(name)])
            }
            result[name] = string
        }
        return result
    }
}

extension ShutdownPolicy {
    /// Decodes `{"deadlineSeconds": 5}`.
    fileprivate init(json value: JSONValue, path: [JSONPathComponent]) throws(JSONShapeError) {
        let object = try TopologyObject(value, path: path, known: ["deadlineSeconds"])
        self.init(
            deadline: try object.seconds("deadlineSeconds", in: 0...longestSeconds, excludingZero: true)
                ?? ShutdownPolicy().deadline)
    }
}

extension RestartLimits {
    /// Decodes `{"initialDelaySeconds": 0.2, "maxDelaySeconds": 5, "maxRestarts": 5,
    /// "windowSeconds": 60}`.
    fileprivate init(json value: JSONValue, path: [JSONPathComponent]) throws(JSONShapeError) {
        let object = try TopologyObject(
            value, path: path,
            known: ["initialDelaySeconds", "maxDelaySeconds", "maxRestarts", "windowSeconds"])
        let defaults = RestartLimits()
        var maxRestarts = defaults.maxRestarts
        if let value = object.optional("maxRestarts") {
            let count = try object.number(value, "maxRestarts")
            guard count == count.rounded(), (0...10_000).contains(count) else {
                throw object.fields.error(
                    "maxRestarts", "expected a count from 0 to 10000, got \(JSONWriter.compactNumber(count))")
            }
            maxRestarts = Int(count)
        }
        self.init(
            initialDelay: try object.seconds("initialDelaySeconds", in: 0...longestSeconds)
                ?? defaults.initialDelay,
            maxDelay: try object.seconds("maxDelaySeconds", in: 0...longestSeconds) ?? defaults.maxDelay,
            maxRestarts: maxRestarts,
            window: try object.seconds("windowSeconds", in: 0...longestSeconds, excludingZero: true)
                ?? defaults.window)
    }
}

extension StartupPolicy {
    /// Decodes `{"settleSeconds": 0.2}`.
    fileprivate init(json value: JSONValue, path: [JSONPathComponent]) throws(JSONShapeError) {
        let object = try TopologyObject(value, path: path, known: ["settleSeconds"])
        self.init(
            settle: try object.seconds("settleSeconds", in: 0...longestSeconds) ?? StartupPolicy().settle)
    }
}
