import Glibc
import KinesiaMotion
import KinesiaSystem
import KinesiaWire

/// Where each camera's sessions started, in a worker's state directory: the pose segments a
/// restarted worker replays (``PoseSegment``), kept in `STATE/starts/<camera>+<first session's
/// stream id>.json` (one file per worker and camera, so that the workers of one camera, a left
/// and a right one, never overwrite each other's; 0600, replaced atomically by a rename,
/// synced) as
/// `{"segments":[{"first":0,"stream":"<16 hex>"}],"sessions":["<16 hex>",...]}`.
///
/// `sessions` are the stream ids of the camera's sessions when the segments were recorded: the
/// segments are resumed only for the same sessions (a new session, `--new-session`, or another
/// exercise starts new streams, and then starts at its first pose).
struct SessionStarts {
    /// `STATE/starts`.
    let directory: String

    init(state: String) throws(CLIError) {
        directory = state + "/starts"
        do {
            try PrivateDirectory.open(directory, creating: true).close()
        } catch {
            throw CLIError.failure("state directory: \(error)")
        }
    }

    /// The file of `camera`'s `sessions`.
    static func fileName(camera: String, sessions: [StreamID]) -> String {
        camera + (sessions.first.map { "+\($0)" } ?? "") + ".json"
    }

    /// The segments recorded for `camera`, when they were recorded for these `sessions`.
    func load(camera: String, sessions: [StreamID]) throws(CLIError) -> [PoseSegment] {
        var name = Self.fileName(camera: camera, sessions: sessions)
        let bytes: [UInt8]
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            if try opened.checkEntry(name) == nil {
                // The one file per camera of earlier versions, used when its sessions are these.
                name = camera + ".json"
                guard try opened.checkEntry(name) != nil else { return [] }
            }
            let file = try opened.openFile(name, O_RDONLY)
            bytes = (try? file.read(upTo: 1 << 20, at: 0)) ?? []
        } catch {
            throw CLIError.failure("session starts: \(error)")
        }
        do {
            let fields = try JSONFields(JSONParser.parse(bytes: bytes), what: "session starts")
            try fields.rejectUnknownKeys(allowed: ["segments", "sessions"])
            let recorded = try fields.strings("sessions").compactMap { (text: String) -> StreamID? in
                UInt64(text, radix: 16).map { StreamID($0) }
            }
            guard recorded == sessions else { return [] }
            var segments: [PoseSegment] = []
            for (index, value) in try fields.array("segments").enumerated() {
                let item = try JSONFields(
                    value, what: "a segment", path: fields.path("segments") + [.index(index)])
                try item.rejectUnknownKeys(allowed: ["stream", "first", "last"])
                guard let stream = UInt64(try item.string("stream"), radix: 16), stream != 0 else {
                    throw item.error("stream", "\"stream\" must be 16 hexadecimal digits")
                }
                let first = try item.integer("first")
                let last = item.has("last") ? try item.integer("last") : nil
                guard first >= 0, (last ?? first) >= first else {
                    throw item.error("first", "a segment's sequence numbers are never negative nor reversed")
                }
                segments.append(
                    PoseSegment(stream: StreamID(stream), first: UInt64(first), last: last.map(UInt64.init)))
            }
            return segments
        } catch {
            throw CLIError.failure(
                "\(directory)/\(name) is not a record of session starts (\(error)): remove it or give --new-session"
            )
        }
    }

    /// Records `segments` for `camera`'s `sessions`.
    func save(camera: String, sessions: [StreamID], segments: [PoseSegment]) throws(CLIError) {
        var json = "{\"segments\":["
        json += segments.map { segment in
            "{\"first\":\(segment.first)" + (segment.last.map { ",\"last\":\($0)" } ?? "")
                + ",\"stream\":\"\(segment.stream)\"}"
        }.joined(separator: ",")
        json += "],\"sessions\":[" + sessions.map { "\"\($0)\"" }.joined(separator: ",") + "]}\n"
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            let name = Self.fileName(camera: camera, sessions: sessions)
            let temporary = name + ".new"
            let file = try opened.openFile(temporary, O_WRONLY | O_CREAT | O_TRUNC)
            try file.write(Array(json.utf8), at: 0)
            try file.synchronizeData()
            try file.close()
            try opened.descriptor.renameEntry(temporary, to: name)
        } catch {
            throw CLIError.failure(
                "cannot record where \(camera)'s sessions started in \(directory): \(error)")
        }
    }
}
