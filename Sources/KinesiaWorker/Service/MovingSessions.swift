import KinesiaControl
import KinesiaWire

/// The sessions a pool worker stopped without ending their runs (moved to another worker, or
/// stopped by their fence when its lease lapsed): their streams are announced as moving
/// (``MovingStream``, in its health report) for ``announcedFor``, so that a consumer that saw
/// one of their messages live, and never a replay endpoint for it, waits for the worker that
/// takes the run over instead of taking the hole for one nobody can fill. A value with the time
/// passed in.
///
/// ```swift
/// var moving = MovingSessions()
/// moving.handedOver(key, resume: session.resume.resume, at: now)
/// health.moving = moving.streams(at: now)
/// ```
struct MovingSessions {
    /// How long a session's streams are announced once it stopped: a consumer needs to hear it
    /// once (reports go out every second), while the taker may still be rebuilding.
    static let announcedFor: Duration = .seconds(10)

    private var entries: [SessionKey: (streams: [MovingStream], until: Duration)] = [:]

    /// A session stopped at `now` without ending its run, which goes on on `resume`'s stream
    /// (`nil`: it published nothing, nothing moves).
    mutating func handedOver(_ key: SessionKey, resume: RunResume?, at now: Duration) {
        guard let resume, resume.stream != 0 else { return }
        let stream = StreamID(resume.stream)
        let topics = [
            try? Topic.event(camera: key.camera, session: key.name),
            try? Topic.snapshot(camera: key.camera, session: key.name),
            try? Topic.session(camera: key.camera, session: key.name),
        ].compactMap { $0 }
        entries[key] = (topics.map { MovingStream(topic: $0, stream: stream) }, now + Self.announcedFor)
    }

    /// The session runs here again: its own service announces its streams.
    mutating func hostedAgain(_ key: SessionKey) {
        entries[key] = nil
    }

    /// The streams to announce at `now` (the sessions whose time is over are forgotten), at most
    /// ``MovingStream/maximumPerReport``, in the order of their sessions.
    mutating func streams(at now: Duration) -> [MovingStream] {
        entries = entries.filter { $0.value.until > now }
        let streams = entries.sorted { $0.key < $1.key }.flatMap(\.value.streams)
        return Array(streams.prefix(MovingStream.maximumPerReport))
    }
}
