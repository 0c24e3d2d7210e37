import KinesiaJSON
import KinesiaMotion

/// A bus topic: the first frame of every message, which ZeroMQ matches by byte prefix.
///
/// The grammar (every topic ends with `/`, so that a prefix never matches a longer name):
///
/// | Kind | Topic |
/// |------|-------|
/// | ``Kind/pose`` | `pose/<camera>/` |
/// | ``Kind/event`` | `event/<camera>/<session>/` |
/// | ``Kind/snapshot`` | `snapshot/<camera>/<session>/` |
/// | ``Kind/health`` | `health/<process>/` |
///
/// Names are 1 to ``maximumNameLength`` bytes of `A-Z a-z 0-9 . _ -`, and never only dots
/// (names may become file names, so `.` and `..` are refused). A value of this type is always
/// valid: the only ways to make one are the throwing factories and ``init(parsing:)``.
///
/// ```swift
/// let topic = try Topic.event(camera: "cam0", session: "left")
/// topic.string                       // "event/cam0/left/"
/// try Topic(parsing: "pose/cam0/")   // .pose, camera "cam0"
/// ```
public struct Topic: Hashable, Sendable, CustomStringConvertible {
    /// What a topic carries; the first component of the topic.
    public enum Kind: String, CaseIterable, Sendable, Hashable {
        /// Poses of one camera: `pose/<camera>/`.
        case pose
        /// Events of one session: `event/<camera>/<session>/`.
        case event
        /// Snapshots of one session: `snapshot/<camera>/<session>/`.
        case snapshot
        /// Health reports of one process: `health/<process>/`.
        case health
        /// The runs of one session: `session/<camera>/<session>/` (`runStarted`, `runEnded`).
        case session

        /// The names that follow the kind, in order.
        public var fields: [Field] {
            switch self {
            case .pose: [.camera]
            case .event, .snapshot, .session: [.camera, .session]
            case .health: [.process]
            }
        }

        /// The payload kind that messages on topics of this kind carry.
        public var payloadKind: PayloadKind {
            switch self {
            case .pose: .pose
            case .event: .event
            case .snapshot: .snapshot
            case .health: .health
            case .session: .session
            }
        }
    }

    /// A named component of a topic, used in ``TopicError`` to say which name is wrong.
    public enum Field: String, Sendable, Hashable, CaseIterable {
        /// The camera name of `pose/`, `event/` and `snapshot/` topics.
        case camera
        /// The session name of `event/` and `snapshot/` topics.
        case session
        /// The process name of `health/` topics.
        case process
    }

    /// The longest accepted name, in bytes.
    public static let maximumNameLength = 64
    /// The longest accepted topic, in bytes (the kind, two names and three slashes fit).
    public static let maximumLength = 9 + 2 * maximumNameLength + 2

    /// What the topic carries.
    public let kind: Kind
    /// The camera (`pose`, `event`, `snapshot`) or the process (`health`).
    private let first: String
    /// The session (`event`, `snapshot`), otherwise `nil`.
    private let second: String?

    /// A digest of the fields (FNV-1a of their bytes), computed once: a topic is a dictionary
    /// key on every message a worker sends (its sequence numbers, its journal), and hashing
    /// its strings there each time cost more than the lookup itself.
    private let digest: UInt64

    private init(kind: Kind, first: String, second: String?) {
        var text = second.map { "\(kind.rawValue)/\(first)/\($0)/" } ?? "\(kind.rawValue)/\(first)/"
        let digest = text.withUTF8 { Topic.digest(of: UnsafeRawBufferPointer($0)) }
        self.init(kind: kind, first: first, second: second, digest: digest)
    }

    private init(kind: Kind, first: String, second: String?, digest: UInt64) {
        self.kind = kind
        self.first = first
        self.second = second
        self.digest = digest
    }

    /// FNV-1a of a topic's text (`kind/first/` or `kind/first/second/`).
    private static func digest(of bytes: UnsafeRawBufferPointer) -> UInt64 {
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return digest
    }

    public static func == (a: Topic, b: Topic) -> Bool {
        a.digest == b.digest && a.kind == b.kind && a.first == b.first && a.second == b.second
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(digest)
    }

    /// The topic of a camera's poses: `pose/<camera>/`.
    /// - Throws: ``TopicError`` when the name is invalid.
    public static func pose(camera: String) throws(TopicError) -> Topic {
        try Topic.validate(camera, as: .camera)
        return Topic(kind: .pose, first: camera, second: nil)
    }

    /// The topic of a session's events: `event/<camera>/<session>/`.
    /// - Throws: ``TopicError`` when a name is invalid.
    public static func event(camera: String, session: String) throws(TopicError) -> Topic {
        try Topic.validate(camera, as: .camera)
        try Topic.validate(session, as: .session)
        return Topic(kind: .event, first: camera, second: session)
    }

    /// The topic of a session's snapshots: `snapshot/<camera>/<session>/`.
    /// - Throws: ``TopicError`` when a name is invalid.
    public static func snapshot(camera: String, session: String) throws(TopicError) -> Topic {
        try Topic.validate(camera, as: .camera)
        try Topic.validate(session, as: .session)
        return Topic(kind: .snapshot, first: camera, second: session)
    }

    /// The topic of a session's run records: `session/<camera>/<session>/`.
    /// - Throws: ``TopicError`` when a name is invalid.
    public static func session(camera: String, session: String) throws(TopicError) -> Topic {
        try Topic.validate(camera, as: .camera)
        try Topic.validate(session, as: .session)
        return Topic(kind: .session, first: camera, second: session)
    }

    /// The topic of a process's health reports: `health/<process>/`.
    /// - Throws: ``TopicError`` when the name is invalid.
    public static func health(process: String) throws(TopicError) -> Topic {
        try Topic.validate(process, as: .process)
        return Topic(kind: .health, first: process, second: nil)
    }

    /// The camera, for `pose`, `event` and `snapshot` topics.
    public var camera: String? { kind == .health ? nil : first }
    /// The session, for `event` and `snapshot` topics.
    public var session: String? { second }
    /// The process, for `health` topics.
    public var process: String? { kind == .health ? first : nil }

    /// The topic as text, ending with `/`: `"event/cam0/left/"`.
    public var string: String {
        if let second { return "\(kind.rawValue)/\(first)/\(second)/" }
        return "\(kind.rawValue)/\(first)/"
    }

    /// The topic frame's bytes (ASCII).
    public var bytes: [UInt8] { Array(string.utf8) }

    /// The topic as text.
    public var description: String { string }

    /// The subscription prefix that delivers exactly this topic.
    public var prefix: TopicPrefix { TopicPrefix(validatedBytes: bytes) }

    /// Parses a topic from its text.
    /// - Throws: ``TopicError`` when the text does not follow the grammar.
    public init(parsing text: String) throws(TopicError) {
        self = try text.withUTF8Bytes { (bytes) throws(TopicError) -> Topic in
            try Topic(parsing: bytes)
        }
    }

    /// Parses a topic from the bytes of a topic frame.
    /// - Throws: ``TopicError`` when the bytes do not follow the grammar.
    public init(parsing bytes: [UInt8]) throws(TopicError) {
        self = try bytes.withBytes { (raw) throws(TopicError) -> Topic in
            try Topic(parsing: raw)
        }
    }

    /// Parses a topic from the bytes of a topic frame, without copying them first.
    /// - Throws: ``TopicError`` when the bytes do not follow the grammar.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(TopicError) {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= Topic.maximumLength else { throw .tooLong(length: bytes.count) }
        guard bytes[bytes.count - 1] == slash else { throw .missingTrailingSlash }
        // Split on "/" (the last byte is a slash, so every component is terminated); a topic
        // has at most three components, so no more than three are kept (no array to allocate).
        var ends = (0, 0, 0)
        var count = 0
        for index in 0..<bytes.count where bytes[index] == slash {
            switch count {
            case 0: ends.0 = index
            case 1: ends.1 = index
            case 2: ends.2 = index
            default: break
            }
            count += 1
        }
        let kindBytes = UnsafeRawBufferPointer(rebasing: bytes[0..<ends.0])
        guard let kind = allKinds.first(where: { $0.rawValue.utf8.elementsEqual(kindBytes) })
        else {
            throw .unknownKind(String(decoding: kindBytes, as: UTF8.self))
        }
        let fields = kind.fields
        guard count - 1 == fields.count else {
            throw .wrongComponentCount(kind: kind, expected: fields.count, found: count - 1)
        }
        let firstBytes = UnsafeRawBufferPointer(rebasing: bytes[(ends.0 + 1)..<ends.1])
        try Topic.validate(firstBytes, as: fields[0])
        var second: String?
        if fields.count > 1 {
            let secondBytes = UnsafeRawBufferPointer(rebasing: bytes[(ends.1 + 1)..<ends.2])
            try Topic.validate(secondBytes, as: fields[1])
            second = String(decoding: secondBytes, as: UTF8.self)
        }
        self.init(
            kind: kind, first: String(decoding: firstBytes, as: UTF8.self), second: second,
            digest: Topic.digest(of: bytes))
    }

    /// Whether `name` is a valid camera, session or process name: the one rule for names,
    /// wherever they are checked (options, environment, topology files).
    public static func isValidName(_ name: String) -> Bool {
        (try? validate(name, as: .camera)) != nil
    }

    /// The one message for a name that ``isValidName(_:)`` refuses, used by every command and
    /// by the topology validation of `kinesia up`.
    ///
    /// ```swift
    /// Topic.invalidNameMessage("..", role: "process name")
    /// // invalid process name "..": use 1 to 64 letters, digits, '.', '_' or '-', not only dots
    /// ```
    /// - Parameters:
    ///   - name: The refused name.
    ///   - role: What the name names: `camera`, `session name`, `process name`.
    public static func invalidNameMessage(_ name: String, role: String) -> String {
        "invalid \(role) \(name.quotedExcerpt()): use 1 to \(maximumNameLength) letters, digits, '.', '_' or '-', "
            + "not only dots"
    }

    /// Checks a name against the charset, the length bound and the reserved names.
    static func validate(_ name: String, as field: Field) throws(TopicError) {
        try name.withUTF8Bytes { (bytes) throws(TopicError) in try validate(bytes, as: field) }
    }

    static func validate(_ name: UnsafeRawBufferPointer, as field: Field) throws(TopicError) {
        guard !name.isEmpty else { throw .emptyName(field) }
        guard name.count <= maximumNameLength else {
            throw .nameTooLong(field, length: name.count)
        }
        var onlyDots = true
        for byte in name {
            guard isNameByte(byte) else { throw .invalidCharacter(field, byte: byte) }
            if byte != dot { onlyDots = false }
        }
        if onlyDots { throw .reservedName(field, name: String(decoding: name, as: UTF8.self)) }
    }

    /// `A-Z a-z 0-9 . _ -`.
    @inline(__always)
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }
}

private let slash = UInt8(ascii: "/")
/// ``Topic/Kind/allCases``, computed once.
private let allKinds = Topic.Kind.allCases
private let dot = UInt8(ascii: ".")
