/// A key read from whatever the JSON object holds, to find keys the format does not know.
private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// Throws when the current JSON object has a key outside `known`, naming it and the keys
    /// that are allowed.
    fileprivate func rejectUnknownKeys(_ known: [String]) throws {
        let container = try self.container(keyedBy: AnyKey.self)
        for key in container.allKeys where !known.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath + [key],
                    debugDescription:
                        "unknown key (expected one of \(known.joined(separator: ", ")))"))
        }
    }
}

extension KeyedDecodingContainer {
    /// A number of seconds in `range`, as a `Duration`; `nil` when the key is absent.
    fileprivate func seconds(
        _ key: Key, in range: ClosedRange<Double>, excludingZero: Bool = false
    ) throws -> Duration? {
        guard let value = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard value.isFinite, range.contains(value), !(excludingZero && value == 0) else {
            let lower =
                excludingZero ? "more than \(Int(range.lowerBound))" : "\(Int(range.lowerBound)) or more"
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath + [key],
                    debugDescription:
                        "expected a number of seconds, \(lower) and at most \(Int(range.upperBound)), got \(value)"
                ))
        }
        return .milliseconds((value * 1000).rounded())
    }
}

/// The longest duration a topology may give (one week): keeps every sum of durations finite.
private let longestSeconds: Double = 7 * 24 * 3600

extension Topology: Decodable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case bus, processes, shutdown, restart, startup
    }

    /// Decodes the JSON format described on ``Topology``; ``validate()`` is separate.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            bus: try container.decodeIfPresent(String.self, forKey: .bus),
            processes: try container.decode([ProcessSpec].self, forKey: .processes),
            shutdown: try container.decodeIfPresent(ShutdownPolicy.self, forKey: .shutdown) ?? .init(),
            restart: try container.decodeIfPresent(RestartLimits.self, forKey: .restart) ?? .init(),
            startup: try container.decodeIfPresent(StartupPolicy.self, forKey: .startup) ?? .init())
    }
}

extension ProcessSpec: Decodable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case name, command, executable, restart, role, after, environment
    }

    /// Decodes one entry of `processes`.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            command: try container.decode([String].self, forKey: .command),
            executable: try container.decodeIfPresent(String.self, forKey: .executable),
            restart: try container.decodeIfPresent(RestartPolicy.self, forKey: .restart) ?? .onFailure,
            role: try container.decodeIfPresent(ProcessRole.self, forKey: .role),
            after: try container.decodeIfPresent([String].self, forKey: .after) ?? [],
            environment: try container.decodeIfPresent([String: String].self, forKey: .environment)
                ?? [:])
    }
}

/// Decodes a string enum, naming the allowed values when the string is not one of them.
private func decodeChoice<T: RawRepresentable & CaseIterable>(
    _ type: T.Type, from decoder: any Decoder
) throws -> T where T.RawValue == String {
    let container = try decoder.singleValueContainer()
    let raw = try container.decode(String.self)
    guard let value = T(rawValue: raw) else {
        let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: decoder.codingPath,
                debugDescription: "expected one of \(allowed), got \"\(raw)\""))
    }
    return value
}

extension RestartPolicy: Decodable {
    /// Decodes `"always"`, `"on-failure"` or `"never"`.
    public init(from decoder: any Decoder) throws {
        self = try decodeChoice(RestartPolicy.self, from: decoder)
    }
}

extension ProcessRole: Decodable {
    /// Decodes `"broker"`, `"ingest"`, `"worker"` or `"consumer"`.
    public init(from decoder: any Decoder) throws {
        self = try decodeChoice(ProcessRole.self, from: decoder)
    }
}

extension ShutdownPolicy: Decodable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case deadlineSeconds
    }

    /// Decodes `{"deadlineSeconds": 5}`.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = ShutdownPolicy()
        self.init(
            deadline: try container.seconds(.deadlineSeconds, in: 0...longestSeconds, excludingZero: true)
                ?? defaults.deadline)
    }
}

extension RestartLimits: Decodable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case initialDelaySeconds, maxDelaySeconds, maxRestarts, windowSeconds
    }

    /// Decodes `{"initialDelaySeconds": 0.2, "maxDelaySeconds": 5, "maxRestarts": 5,
    /// "windowSeconds": 60}`.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = RestartLimits()
        let maxRestarts = try container.decodeIfPresent(Int.self, forKey: .maxRestarts)
        if let maxRestarts, !(0...10_000).contains(maxRestarts) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath + [CodingKeys.maxRestarts],
                    debugDescription: "expected a count from 0 to 10000, got \(maxRestarts)"))
        }
        self.init(
            initialDelay: try container.seconds(.initialDelaySeconds, in: 0...longestSeconds)
                ?? defaults.initialDelay,
            maxDelay: try container.seconds(.maxDelaySeconds, in: 0...longestSeconds)
                ?? defaults.maxDelay,
            maxRestarts: maxRestarts ?? defaults.maxRestarts,
            window: try container.seconds(.windowSeconds, in: 0...longestSeconds, excludingZero: true)
                ?? defaults.window)
    }
}

extension StartupPolicy: Decodable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case settleSeconds
    }

    /// Decodes `{"settleSeconds": 0.2}`.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            settle: try container.seconds(.settleSeconds, in: 0...longestSeconds)
                ?? StartupPolicy().settle)
    }
}
