import KinesiaJSON
public import KinesiaMotion

/// The texts of one language: one entry per cue, per ``FormFeedback``, per ``SetupIssue`` and
/// per ``Joint``, the name of each side and the cues that name it, read from a JSON file a
/// therapist can edit (`docs/voice-texts.md`).
///
/// ```swift
/// let texts = try VoiceTexts.builtIn(.spanish)
/// texts.formFeedback[.keepTrunkUpright]  // "Mantén el tronco recto"
/// texts.sidedCues[.repCounted]           // "{side}, {count}"
/// ```
///
/// Reading is strict: a missing entry, an unknown key (a typo) or a placeholder the entry
/// cannot fill (`{cuont}`) is an error that names the file, the key and its line, so an edited
/// file never speaks a wrong or empty cue.
public struct VoiceTexts: Sendable, Hashable {
    /// The entries of `"cues"`, each with the placeholders it may use.
    public enum Entry: String, CaseIterable, Sendable, Hashable {
        /// A clean rep: `{count}` (clean reps of the session so far), `{peak}` (degrees).
        case repCounted
        /// A rejected rep: `{fault}` (the text of its first fault), `{peak}`.
        case repRejected
        /// A hold started.
        case holdStarted
        /// A clean hold: `{seconds}` (its length), `{count}`, `{peak}`.
        case holdCompleted
        /// A hold with poor form: `{fault}`, `{seconds}`.
        case holdRejected
        /// Joints out of view: `{joints}` (their names, joined as a list).
        case visibilityLost
        /// The required joints in view for the first time: the greeting.
        case visibilityGained
        /// Back in view after they left it.
        case visibilityRegained
        /// No placement problem any more.
        case setupFixed
        /// The baseline: `{degrees}`.
        case baselineCompleted
        /// `{fault}` of a rejected rep that names no fault.
        case unknownFault

        /// The placeholders the entry may use.
        public var placeholders: Set<String> {
            switch self {
            case .repCounted: ["count", "peak"]
            case .repRejected: ["fault", "peak"]
            case .holdStarted, .visibilityGained, .visibilityRegained, .setupFixed, .unknownFault: []
            case .holdCompleted: ["seconds", "count", "peak"]
            case .holdRejected: ["fault", "seconds"]
            case .visibilityLost: ["joints"]
            case .baselineCompleted: ["degrees"]
            }
        }
    }

    /// The entries of `"sidedCues"`: the cues of one side, said instead of their ``Entry`` when a
    /// voice follows more than one session (``VoiceCuePlanner/namesSides``). Each may use the
    /// placeholders of its cue and `{side}` (the session's side, from ``VoiceTexts/sides``).
    public enum SidedEntry: String, CaseIterable, Sendable, Hashable {
        /// A clean rep of one side: `"{side}, {count}"`.
        case repCounted
        /// A rejected rep of one side: `{fault}`, `{peak}`, `{side}`.
        case repRejected
        /// A hold of one side started.
        case holdStarted
        /// A clean hold of one side: `{seconds}`, `{count}`, `{peak}`, `{side}`.
        case holdCompleted
        /// A hold of one side with poor form: `{fault}`, `{seconds}`, `{side}`.
        case holdRejected
        /// A live correction of one limb (``FormFeedback/concernsOneSide``): `{fault}` (its
        /// text in `"formFeedback"`), `{side}`.
        case formFault
        /// The baseline of one side: `{degrees}`, `{side}`.
        case baselineCompleted

        /// The placeholders the entry may use.
        public var placeholders: Set<String> {
            let own: Set<String> =
                switch self {
                case .repCounted: Entry.repCounted.placeholders
                case .repRejected: Entry.repRejected.placeholders
                case .holdStarted: Entry.holdStarted.placeholders
                case .holdCompleted: Entry.holdCompleted.placeholders
                case .holdRejected: Entry.holdRejected.placeholders
                case .formFault: ["fault"]
                case .baselineCompleted: Entry.baselineCompleted.placeholders
                }
            return own.union(["side"])
        }
    }

    /// The language code of the file (`"en"`, `"pt-BR"`, `"es"`).
    public var language: String
    /// The espeak-ng voice that speaks it (`"en-us"`, `"pt-br"`, `"es"`).
    public var espeakVoice: String
    /// Between the names of a list but the last two (`", "`).
    public var listSeparator: String
    /// Between the last two names of a list (`" and "`).
    public var listLastSeparator: String
    /// The cue texts, with their placeholders.
    public var cues: [Entry: String]
    /// The text of each form fault.
    public var formFeedback: [FormFeedback: String]
    /// The text of each placement problem.
    public var setupIssues: [SetupIssue: String]
    /// The spoken name of each joint.
    public var joints: [Joint: String]
    /// The spoken name of each side, for `{side}`: the side of a session named `left` or
    /// `right` (a session of another name is said by its name).
    public var sides: [BodySide: String]
    /// The cues of one side, with `{side}`.
    public var sidedCues: [SidedEntry: String]

    /// The texts compiled into the binary for `language`.
    /// - Throws: ``VoiceTextsError`` (only if the built-in file is broken; a test reads them all).
    public static func builtIn(_ language: VoiceLanguage) throws(VoiceTextsError) -> VoiceTexts {
        try VoiceTexts(json: language.builtInTextsFile, source: language.builtInTextsName)
    }

    /// Reads a texts file.
    /// - Parameters:
    ///   - json: The file's bytes (UTF-8 JSON).
    ///   - source: The file's name, for errors.
    /// - Throws: ``VoiceTextsError`` naming the file, the entry and where it is.
    public init(json: [UInt8], source: String) throws(VoiceTextsError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes: json)
        } catch {
            throw VoiceTextsError(source: source, message: error.description)
        }
        do {
            try self.init(value: value)
        } catch {
            let location = JSONParser.location(of: error.path, in: json).map {
                " (line \($0.line), column \($0.column))"
            }
            throw VoiceTextsError(source: source, message: error.message + (location ?? ""))
        }
    }

    private init(value: JSONValue) throws(JSONShapeError) {
        let root = try JSONFields(value, what: "the texts file")
        try root.rejectUnknownKeys(allowed: [
            "language", "espeakVoice", "listSeparator", "listLastSeparator", "cues", "formFeedback",
            "setupIssues", "joints", "sides", "sidedCues",
        ])
        language = try root.string("language")
        espeakVoice = try root.string("espeakVoice")
        listSeparator = try root.string("listSeparator")
        listLastSeparator = try root.string("listLastSeparator")
        cues = try Self.table(root.object("cues"), Entry.allCases, key: \.rawValue) { $0.placeholders }
        formFeedback = try Self.table(root.object("formFeedback"), FormFeedback.allCases, key: \.rawValue) {
            _ in []
        }
        setupIssues = try Self.table(root.object("setupIssues"), SetupIssue.allCases, key: \.rawValue) { _ in
            []
        }
        joints = try Self.table(root.object("joints"), Joint.allCases, key: \.rawValue) { _ in [] }
        sides = try Self.table(root.object("sides"), BodySide.allCases, key: \.rawValue) { _ in [] }
        sidedCues = try Self.table(root.object("sidedCues"), SidedEntry.allCases, key: \.rawValue) {
            $0.placeholders
        }
    }

    /// One object of texts: exactly one non-empty string per case, with known placeholders.
    private static func table<Case: Hashable>(
        _ fields: JSONFields, _ cases: [Case], key: (Case) -> String, placeholders: (Case) -> Set<String>
    ) throws(JSONShapeError) -> [Case: String] {
        try fields.rejectUnknownKeys(allowed: Set(cases.map(key)))
        var result: [Case: String] = [:]
        for item in cases {
            let name = key(item)
            let text = try fields.string(name)
            guard !text.allSatisfy(\.isWhitespace) else {
                throw fields.error(name, "the text of \(name.quotedExcerpt()) is empty")
            }
            let used: [String]
            do {
                used = try VoiceTemplate.placeholders(in: text)
            } catch {
                throw fields.error(name, "\(name.quotedExcerpt()): \(error.message)")
            }
            let allowed = placeholders(item)
            if let unknown = used.first(where: { !allowed.contains($0) }) {
                let choices =
                    allowed.isEmpty ? "none" : allowed.sorted().map { "{\($0)}" }.joined(separator: ", ")
                throw fields.error(
                    name, "\(name.quotedExcerpt()) uses the placeholder {\(unknown)}; it may use: \(choices)")
            }
            result[item] = text
        }
        return result
    }

    /// `names` joined as a spoken list: `"left hip, left knee and left ankle"`.
    public func list(_ names: [String]) -> String {
        switch names.count {
        case 0: ""
        case 1: names[0]
        default:
            names.dropLast().joined(separator: listSeparator) + listLastSeparator + names[names.count - 1]
        }
    }
}

/// A texts file that cannot be used: which file, and what is wrong where.
public struct VoiceTextsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file.
    public var source: String
    /// What is wrong, with the line and column when known.
    public var message: String

    /// `FILE: MESSAGE`.
    public var description: String { "\(source): \(message)" }
}

/// `{name}` placeholders in cue texts.
enum VoiceTemplate {
    struct SyntaxError: Error {
        var message: String
    }

    /// The placeholders of `text`, in order.
    static func placeholders(in text: String) throws(SyntaxError) -> [String] {
        var result: [String] = []
        var current: String?
        for character in text {
            switch character {
            case "{":
                guard current == nil else { throw SyntaxError(message: "'{' inside a placeholder") }
                current = ""
            case "}":
                guard let name = current else { throw SyntaxError(message: "'}' without '{'") }
                guard !name.isEmpty else { throw SyntaxError(message: "an empty placeholder {}") }
                result.append(name)
                current = nil
            default:
                current?.append(character)
            }
        }
        guard current == nil else { throw SyntaxError(message: "a '{' is not closed") }
        return result
    }

    /// `text` with each `{name}` replaced by `values[name]` (placeholders were checked when the
    /// file was read; an unknown one is left out).
    static func fill(_ text: String, _ values: [String: String]) -> String {
        var result = ""
        var current: String?
        for character in text {
            switch character {
            case "{": current = ""
            case "}":
                if let name = current { result += values[name] ?? "" }
                current = nil
            default:
                if current != nil { current?.append(character) } else { result.append(character) }
            }
        }
        return result
    }
}
