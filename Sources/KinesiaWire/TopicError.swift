import KinesiaJSON
import KinesiaMotion

/// Why a topic or a topic name was refused.
public enum TopicError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The topic is empty.
    case empty
    /// The topic is longer than ``Topic/maximumLength`` bytes.
    case tooLong(length: Int)
    /// The topic does not end with `/` (without it, `pose/cam1` would match `pose/cam10/`).
    case missingTrailingSlash
    /// The first component is not `pose`, `event`, `snapshot` or `health`.
    case unknownKind(String)
    /// The topic has the wrong number of names for its kind.
    case wrongComponentCount(kind: Topic.Kind, expected: Int, found: Int)
    /// A name is empty.
    case emptyName(Topic.Field)
    /// A name is longer than ``Topic/maximumNameLength`` bytes.
    case nameTooLong(Topic.Field, length: Int)
    /// A name contains a byte outside `A-Z a-z 0-9 . _ -` (a slash, a space, non-ASCII...).
    case invalidCharacter(Topic.Field, byte: UInt8)
    /// A name is made only of dots (`.`, `..`), which could walk a file system path.
    case reservedName(Topic.Field, name: String)

    /// A sentence that says what is wrong.
    public var description: String {
        switch self {
        case .empty: "the topic is empty"
        case .tooLong(let length): "the topic is \(length) bytes long (at most \(Topic.maximumLength))"
        case .missingTrailingSlash: "the topic does not end with \"/\""
        case .unknownKind(let kind):
            "unknown topic kind \(kind.quotedExcerpt()) (expected pose, event, snapshot or health)"
        case .wrongComponentCount(let kind, let expected, let found):
            "\(kind.rawValue) topics take \(expected) name(s) after the kind, found \(found)"
        case .emptyName(let field): "the \(field.rawValue) name is empty"
        case .nameTooLong(let field, let length):
            "the \(field.rawValue) name is \(length) bytes long (at most \(Topic.maximumNameLength))"
        case .invalidCharacter(let field, let byte):
            "the \(field.rawValue) name contains byte 0x\(String(byte, radix: 16)) "
                + "(allowed: A-Z a-z 0-9 . _ -)"
        case .reservedName(let field, let name):
            "the \(field.rawValue) name \(name.quotedExcerpt()) is reserved"
        }
    }
}
