import KinesiaWire

/// A session on the bus: its camera and its name, `CAMERA/NAME` (the topics
/// `event/<camera>/<name>/` and `snapshot/<camera>/<name>/`).
///
/// ```swift
/// let key = try SessionKey(parsing: "cam0/left")
/// key.description   // "cam0/left"
/// ```
public struct SessionKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The camera whose poses the session analyses.
    public var camera: String
    /// The session's name.
    public var name: String

    /// A key of two valid names (``Topic/isValidName(_:)``).
    ///
    /// - Throws: ``ControlError/invalid(_:)`` naming the name that is not valid.
    public init(camera: String, name: String) throws(ControlError) {
        guard Topic.isValidName(camera) else {
            throw .invalid(Topic.invalidNameMessage(camera, role: "camera"))
        }
        guard Topic.isValidName(name) else {
            throw .invalid(Topic.invalidNameMessage(name, role: "session name"))
        }
        self.camera = camera
        self.name = name
    }

    /// Reads `CAMERA/NAME`.
    ///
    /// - Throws: ``ControlError/invalid(_:)``.
    public init(parsing text: String) throws(ControlError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw .invalid("invalid session \(text.debugDescription): expected CAMERA/NAME")
        }
        try self.init(camera: String(parts[0]), name: String(parts[1]))
    }

    /// `CAMERA/NAME`.
    public var description: String { "\(camera)/\(name)" }

    public static func < (lhs: SessionKey, rhs: SessionKey) -> Bool {
        (lhs.camera, lhs.name) < (rhs.camera, rhs.name)
    }
}
