import KinesiaWire

/// What a cue consumer (`kinesia voice`, `kinesia haptic`) follows: every session of one
/// camera, or one session of it.
struct CueTarget {
    /// `--camera`.
    var camera: String
    /// `--session`, or `nil` for every session of the camera.
    var session: String?

    /// Checks both names with the bus's name rule.
    /// - Throws: ``CLIError/usage(_:)`` naming the bad value.
    func validate() throws(CLIError) {
        guard !camera.isEmpty else { throw CLIError.usage("--camera is required") }
        guard Topic.isValidName(camera) else {
            throw CLIError.usage(Topic.invalidNameMessage(camera, role: "camera"))
        }
        if let session, !Topic.isValidName(session) {
            throw CLIError.usage(Topic.invalidNameMessage(session, role: "session"))
        }
    }

    /// The subscriptions: the events and snapshots of the camera, or of the session, and the
    /// health reports (the first one tells that the subscription is in place).
    /// - Throws: ``CLIError/usage(_:)`` when a name cannot make a topic.
    func topics() throws(CLIError) -> [TopicPrefix] {
        do {
            guard let session else {
                return [try .events(camera: camera), try .snapshots(camera: camera), .kind(.health)]
            }
            return [
                .kind(.health),
                .topic(try Topic.event(camera: camera, session: session)),
                .topic(try Topic.snapshot(camera: camera, session: session)),
            ]
        } catch {
            throw CLIError.usage(error.description)
        }
    }
}
