package import KinesiaWire

/// What a cue consumer (`kinesia voice`, `kinesia haptic`) follows: every session of one
/// camera, or the sessions named.
package struct CueTarget {
    /// `--camera`.
    package var camera: String
    /// `--session`, repeated: the sessions followed, in the order given and each once; empty for
    /// every session of the camera.
    package var sessions: [String]

    /// A target; `sessions` given twice are followed once.
    package init(camera: String, sessions: [String] = []) {
        self.camera = camera
        var seen = Set<String>()
        self.sessions = sessions.filter { seen.insert($0).inserted }
    }

    /// Checks every name with the bus's name rule.
    /// - Throws: ``CueConsumerError/usage(_:)`` naming the bad value.
    package func validate() throws(CueConsumerError) {
        guard !camera.isEmpty else { throw CueConsumerError.usage("--camera is required") }
        guard Topic.isValidName(camera) else {
            throw CueConsumerError.usage(Topic.invalidNameMessage(camera, role: "camera"))
        }
        for session in sessions where !Topic.isValidName(session) {
            throw CueConsumerError.usage(Topic.invalidNameMessage(session, role: "session"))
        }
    }

    /// What is followed, for the log: `camera cam0`, `session cam0/left`, `sessions cam0/left
    /// and cam0/right`.
    package var description: String {
        let names = sessions.map { "\(camera)/\($0)" }
        switch names.count {
        case 0: return "camera \(camera)"
        case 1: return "session \(names[0])"
        default:
            return "sessions " + names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
        }
    }

    /// The subscriptions: the events and snapshots of the camera, or of each session, and the
    /// health reports (the first one tells that the subscription is in place).
    /// - Throws: ``CueConsumerError/usage(_:)`` when a name cannot make a topic.
    package func topics() throws(CueConsumerError) -> [TopicPrefix] {
        do {
            guard !sessions.isEmpty else {
                return [
                    try .events(camera: camera), try .snapshots(camera: camera), try .runs(camera: camera),
                    .kind(.health),
                ]
            }
            var topics: [TopicPrefix] = [.kind(.health)]
            for session in sessions {
                topics.append(.topic(try Topic.event(camera: camera, session: session)))
                topics.append(.topic(try Topic.snapshot(camera: camera, session: session)))
                topics.append(.topic(try Topic.session(camera: camera, session: session)))
            }
            return topics
        } catch {
            throw CueConsumerError.usage(error.description)
        }
    }
}
