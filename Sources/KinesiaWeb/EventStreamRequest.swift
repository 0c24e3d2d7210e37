public import KinesiaWire

/// `GET /api/v1/sessions/CAMERA/NAME/events`: a session's events (exactly once, in order) and
/// snapshots as server-sent events, from now, or resumed after the event a `Last-Event-ID`
/// names.
///
/// Each event's id is its sender's stream id and sequence number, `<16 hex digits>-<sequence>`
/// (`5f3a9c0e11d2b7a4-17`): what the client library's exactly-once delivery resumes from, so a
/// browser that reconnects (or an application that kept the id, across its own restart or the
/// gateway's) gets every event after it once, fetched from the worker's journal when it was
/// missed.
public struct EventStreamRequest: Sendable, Hashable {
    /// The session's camera.
    public var camera: String
    /// The session's name.
    public var name: String
    /// The stream and sequence number of the last event the client has, if it said.
    public var resumeStream: StreamID?
    /// The sequence number of that event.
    public var resumeSequence: UInt64?

    /// A request.
    public init(camera: String, name: String, resumeStream: StreamID? = nil, resumeSequence: UInt64? = nil) {
        self.camera = camera
        self.name = name
        self.resumeStream = resumeStream
        self.resumeSequence = resumeSequence
    }

    /// What the request asks, when its path is a session's events (`nil` otherwise);
    /// ``Problem/badLastEventID`` when its `Last-Event-ID` is not an id of ours.
    public static func parse(_ request: HTTPRequest) -> Result<EventStreamRequest, Problem>? {
        let prefix = "/api/v1/sessions/"
        guard request.path.hasPrefix(prefix), request.path.hasSuffix("/events") else { return nil }
        let parts = request.path.dropFirst(prefix.count).dropLast("/events".count).split(
            separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, Topic.isValidName(String(parts[0])), Topic.isValidName(String(parts[1]))
        else {
            return nil
        }
        var parsed = EventStreamRequest(camera: String(parts[0]), name: String(parts[1]))
        if let id = request.headers["last-event-id"], !id.isEmpty {
            guard let (stream, sequence) = Self.id(parsing: id) else { return .failure(.badLastEventID) }
            parsed.resumeStream = stream
            parsed.resumeSequence = sequence
        }
        return .success(parsed)
    }

    /// Why a request for events is refused.
    public enum Problem: Error, Sendable, Hashable {
        /// `Last-Event-ID` is not `<16 hex digits>-<sequence>`.
        case badLastEventID
    }

    /// The id of event `sequence` of `stream`.
    public static func id(stream: StreamID, sequence: UInt64) -> String { "\(stream)-\(sequence)" }

    /// The stream and sequence of an id, or `nil`.
    public static func id(parsing text: String) -> (StreamID, UInt64)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 16, let stream = UInt64(parts[0], radix: 16),
            stream != 0,
            let sequence = UInt64(parts[1])
        else { return nil }
        return (StreamID(stream), sequence)
    }
}
