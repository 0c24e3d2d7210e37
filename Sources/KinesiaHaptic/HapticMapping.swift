import KinesiaJSON
import KinesiaMotion

/// Which pattern each event plays: named patterns and a pattern name (or nothing) per
/// ``HapticTrigger``, read from a JSON file (`docs/haptic-mapping.md`; the built-in one is
/// `Sources/KinesiaHaptic/Mapping/default.json`).
///
/// ```swift
/// let mapping = try HapticMapping.builtIn()
/// mapping.pattern(for: .repCompleted)  // the "short" pulse
/// ```
public struct HapticMapping: Sendable, Hashable {
    /// The named patterns.
    public var patterns: [String: HapticPattern]
    /// The pattern name of each trigger (`nil`: nothing is played).
    public var events: [HapticTrigger: String?]

    /// The mapping compiled into the binary.
    /// - Throws: ``HapticMappingError`` (only if the built-in file is broken; a test reads it).
    public static func builtIn() throws(HapticMappingError) -> HapticMapping {
        try HapticMapping(json: PackageResources.default_json, source: "Mapping/default.json")
    }

    /// The pattern a trigger plays, if any.
    public func pattern(for trigger: HapticTrigger) -> HapticPattern? {
        guard let name = events[trigger] ?? nil else { return nil }
        return patterns[name]
    }

    /// Reads a mapping file.
    /// - Parameters:
    ///   - json: The file's bytes.
    ///   - source: Its name, for errors.
    /// - Throws: ``HapticMappingError`` naming the file, the key and its line.
    public init(json: [UInt8], source: String) throws(HapticMappingError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes: json)
        } catch {
            throw HapticMappingError(source: source, message: error.description)
        }
        do {
            try self.init(value: value)
        } catch {
            let location = JSONParser.location(of: error.path, in: json).map {
                " (line \($0.line), column \($0.column))"
            }
            throw HapticMappingError(source: source, message: error.message + (location ?? ""))
        }
    }

    private init(value: JSONValue) throws(JSONShapeError) {
        let root = try JSONFields(value, what: "the mapping file")
        try root.rejectUnknownKeys(allowed: ["patterns", "events"])
        let patternFields = try root.object("patterns")
        var patterns: [String: HapticPattern] = [:]
        for name in patternFields.members.keys.sorted() {
            var steps: [HapticPattern.Step] = []
            let list = try patternFields.array(name)
            guard !list.isEmpty else {
                throw patternFields.error(name, "the pattern \(name.quotedExcerpt()) is empty")
            }
            for (index, element) in list.enumerated() {
                let step = try JSONFields(
                    element, what: "a step", path: patternFields.path(name) + [.index(index)])
                steps.append(try Self.step(step))
            }
            patterns[name] = HapticPattern(steps: steps)
        }
        let eventFields = try root.object("events")
        try eventFields.rejectUnknownKeys(allowed: Set(HapticTrigger.allCases.map(\.rawValue)))
        var events: [HapticTrigger: String?] = [:]
        for trigger in HapticTrigger.allCases {
            let key = trigger.rawValue
            switch try eventFields.value(key) {
            case .null: events[trigger] = .some(nil)
            case .string(let name):
                guard patterns[name] != nil else {
                    let known = patterns.keys.sorted().joined(separator: ", ")
                    throw eventFields.error(
                        key,
                        "\(key.quotedExcerpt()) names no pattern \(name.quotedExcerpt()) (patterns: \(known))"
                    )
                }
                events[trigger] = .some(name)
            case let other:
                throw eventFields.error(
                    key,
                    "\(key.quotedExcerpt()) must be a pattern name or null, found \(other.typeDescription)")
            }
        }
        self.patterns = patterns
        self.events = events
    }

    private static func step(_ fields: JSONFields) throws(JSONShapeError) -> HapticPattern.Step {
        func milliseconds(_ key: String) throws(JSONShapeError) -> Int {
            let value = try fields.integer(key)
            guard (1...HapticPattern.maximumStepMilliseconds).contains(value) else {
                throw fields.error(
                    key,
                    "\(key.quotedExcerpt()) must be 1 to \(HapticPattern.maximumStepMilliseconds) ms, found \(value)"
                )
            }
            return value
        }
        if fields.has("pulse") {
            try fields.rejectUnknownKeys(allowed: ["pulse", "intensity"])
            let intensity = try fields.integer("intensity")
            guard (1...100).contains(intensity) else {
                throw fields.error(
                    "intensity", "\"intensity\" must be 1 to 100 (percent), found \(intensity)")
            }
            return .pulse(milliseconds: try milliseconds("pulse"), intensity: intensity)
        }
        try fields.rejectUnknownKeys(allowed: ["pause"])
        return .pause(milliseconds: try milliseconds("pause"))
    }
}

/// A mapping file that cannot be used: which file, and what is wrong where.
public struct HapticMappingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file.
    public var source: String
    /// What is wrong, with the line and column when known.
    public var message: String

    /// `FILE: MESSAGE`.
    public var description: String { "\(source): \(message)" }
}
