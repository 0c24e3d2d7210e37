public import KinesiaWire

/// `GET /api/v1/sessions/CAMERA/NAME/events` (a session's) or `GET /api/v1/cameras/CAMERA/events`
/// (every session's of a camera): events (exactly once, in order per session) and snapshots as
/// server-sent events, from now, or resumed after the events a `Last-Event-ID` names.
///
/// A session's event id is its sender's stream id and sequence number, `<16 hex digits>-<sequence>`
/// (`5f3a9c0e11d2b7a4-17`); a camera's names every session's last event so far,
/// `NAME:<stream>-<sequence>` joined by commas in name order (`left:5f3a9c0e11d2b7a4-17,right:…`).
/// That is what the client library's exactly-once delivery resumes from, so a browser that
/// reconnects (or an application that kept the id, across its own restart or the gateway's) gets
/// every event after it once, fetched from the worker's journal when it was missed.
public struct EventStreamRequest: Sendable, Hashable {
    /// Where a session's events stand: its stream and the sequence number of its last event.
    public struct Position: Sendable, Hashable {
        /// The session's stream.
        public var stream: StreamID
        /// The last event's sequence number.
        public var sequence: UInt64

        /// A position.
        public init(stream: StreamID, sequence: UInt64) {
            self.stream = stream
            self.sequence = sequence
        }
    }

    /// The camera.
    public var camera: String
    /// The session's name; `nil`: every session of the camera.
    public var name: String?
    /// Where each session's events the client has end, by session name.
    public var resume: [String: Position]

    /// A request of a camera's sessions (`name` nil) or of one, resumed after `resume`.
    public init(camera: String, name: String?, resume: [String: Position] = [:]) {
        self.camera = camera
        self.name = name
        self.resume = resume
    }

    /// A request of one session, resumed after `resumeStream`'s event `resumeSequence`.
    public init(camera: String, name: String, resumeStream: StreamID? = nil, resumeSequence: UInt64? = nil) {
        self.init(camera: camera, name: name as String?, resume: [:])
        if let resumeStream, let resumeSequence {
            resume[name] = Position(stream: resumeStream, sequence: resumeSequence)
        }
    }

    /// The stream of the client's last event of a session request.
    public var resumeStream: StreamID? { name.flatMap { resume[$0]?.stream } }
    /// The sequence number of that event.
    public var resumeSequence: UInt64? { name.flatMap { resume[$0]?.sequence } }

    /// What the request asks, when its path is a session's or a camera's events (`nil`
    /// otherwise); ``Problem/badLastEventID`` when its `Last-Event-ID` is not an id of ours.
    public static func parse(_ request: HTTPRequest) -> Result<EventStreamRequest, Problem>? {
        guard request.path.hasSuffix("/events") else { return nil }
        var parsed: EventStreamRequest
        if request.path.hasPrefix("/api/v1/sessions/") {
            let parts = request.path.dropFirst("/api/v1/sessions/".count).dropLast("/events".count).split(
                separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, Topic.isValidName(String(parts[0])), Topic.isValidName(String(parts[1]))
            else {
                return nil
            }
            parsed = EventStreamRequest(camera: String(parts[0]), name: String(parts[1]))
        } else if request.path.hasPrefix("/api/v1/cameras/") {
            let camera = String(request.path.dropFirst("/api/v1/cameras/".count).dropLast("/events".count))
            guard Topic.isValidName(camera) else { return nil }
            parsed = EventStreamRequest(camera: camera, name: nil)
        } else {
            return nil
        }
        if let id = request.headers["last-event-id"], !id.isEmpty {
            guard let resume = Self.positions(parsing: id, session: parsed.name) else {
                return .failure(.badLastEventID)
            }
            parsed.resume = resume
        }
        return .success(parsed)
    }

    /// The id of an event after which the client has `positions` (by session name): for one
    /// session (`session` named) its position alone, for a camera every session's.
    public static func id(_ positions: [String: Position], session: String?) -> String {
        if let session, let position = positions[session] {
            return id(stream: position.stream, sequence: position.sequence)
        }
        return positions.keys.sorted().map { name in
            "\(name):" + id(stream: positions[name]!.stream, sequence: positions[name]!.sequence)
        }.joined(separator: ",")
    }

    /// The positions an id names (`nil`: not an id of ours).
    static func positions(parsing text: String, session: String?) -> [String: Position]? {
        if let session {
            return id(parsing: text).map { [session: Position(stream: $0.0, sequence: $0.1)] }
        }
        var positions: [String: Position] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard pieces.count == 2, Topic.isValidName(String(pieces[0])),
                positions[String(pieces[0])] == nil,
                let (stream, sequence) = id(parsing: String(pieces[1]))
            else { return nil }
            positions[String(pieces[0])] = Position(stream: stream, sequence: sequence)
        }
        return positions
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
