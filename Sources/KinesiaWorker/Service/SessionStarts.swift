import KinesiaJSON
import KinesiaMotion
import KinesiaSystem
import KinesiaWire

/// Where each camera's sessions started, in a worker's state directory: the pose segments a
/// restarted worker replays (``PoseSegment``), kept in `STATE/starts/<camera>+<first session's
/// stream id>.json` (one file per worker and camera, so that the workers of one camera, a left
/// and a right one, never overwrite each other's; 0600, replaced atomically by a rename,
/// synced: by the journal's thread when the live loop saved it) as
/// `{"segments":[{"first":"0","stream":"<16 hex>","skipped":[["5","9"]]}],"sessions":["<16 hex>",...]}`
/// (sequence numbers as decimal strings, so that every `UInt64` reads back exactly; plain
/// numbers of earlier versions are read too; `skipped` holds half-open ranges).
///
/// The holes the live analysis gives up on are appended, one line `STREAM FROM UPTO` each, to
/// `STATE/starts/<same name>.skipped` (``appendSkip(camera:sessions:stream:sequences:)``: one
/// write on a descriptor held open (``SkipFiles``), no rename, as cheap as a journal record; a
/// publisher that leaves holes on purpose cannot slow the worker down with it; flushed by the
/// journal's thread, ``SkipFileSyncs``); ``load(camera:sessions:)`` merges them and
/// ``save(camera:sessions:segments:)`` folds them in and empties the file.
///
/// `sessions` are the stream ids of the camera's sessions when the segments were recorded: the
/// segments are resumed only for the same sessions (a new session, `--new-session`, or another
/// exercise starts new streams, and then starts at its first pose).
struct SessionStarts {
    /// `STATE/starts`.
    let directory: String
    /// The `.skipped` files, held open by the live thread.
    private let skipFiles: SkipFiles
    /// The `.skipped` files appended to since their last flush (by the journal's thread).
    let unsyncedSkips: SkipFileSyncs

    init(state: String) throws(WorkerStateError) {
        directory = state + "/starts"
        skipFiles = SkipFiles(directory: directory)
        unsyncedSkips = SkipFileSyncs(directory: directory)
        do {
            try PrivateDirectory.open(directory, creating: true).close()
        } catch {
            throw WorkerStateError("state directory: \(error)")
        }
    }

    /// The file of `camera`'s `sessions`.
    static func fileName(camera: String, sessions: [StreamID]) -> String {
        camera + (sessions.first.map { "+\($0)" } ?? "") + ".json"
    }

    /// The segments recorded for `camera`, when they were recorded for these `sessions`.
    func load(camera: String, sessions: [StreamID]) throws(WorkerStateError) -> [PoseSegment] {
        try loadWithOrigin(camera: camera, sessions: sessions).segments
    }

    /// ``load(camera:sessions:)``, with the first pose the sessions analysed (`"origin"`, which
    /// checkpoints never move; the first segment's start in a file written before it was kept),
    /// `nil` when none is recorded for these `sessions`.
    func loadWithOrigin(camera: String, sessions: [StreamID]) throws(WorkerStateError) -> (
        segments: [PoseSegment], origin: (stream: StreamID, sequence: UInt64)?
    ) {
        var name = Self.fileName(camera: camera, sessions: sessions)
        let bytes: [UInt8]
        var skippedLines: [UInt8] = []
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            if try opened.checkEntry(name) == nil {
                // The one file per camera of earlier versions, used when its sessions are these.
                name = camera + ".json"
                guard try opened.checkEntry(name) != nil else { return ([], nil) }
            }
            let file = try opened.openFile(name, .read)
            bytes = (try? file.read(upTo: 1 << 24, at: 0)) ?? []
            if try opened.checkEntry(name + ".skipped") != nil {
                let appended = try opened.openFile(name + ".skipped", .read)
                skippedLines = (try? appended.read(upTo: 1 << 24, at: 0)) ?? []
            }
        } catch {
            throw WorkerStateError("session starts: \(error)")
        }
        do {
            let fields = try JSONFields(JSONParser.parse(bytes: bytes), what: "session starts")
            try fields.rejectUnknownKeys(allowed: ["segments", "sessions", "origin"])
            let recorded = try fields.strings("sessions").compactMap { (text: String) -> StreamID? in
                UInt64(text, radix: 16).map { StreamID($0) }
            }
            guard recorded == sessions else { return ([], nil) }
            var segments: [PoseSegment] = []
            for (index, value) in try fields.array("segments").enumerated() {
                let item = try JSONFields(
                    value, what: "a segment", path: fields.path("segments") + [.index(index)])
                try item.rejectUnknownKeys(allowed: ["stream", "first", "last", "skipped"])
                guard let stream = UInt64(try item.string("stream"), radix: 16), stream != 0 else {
                    throw item.error("stream", "\"stream\" must be 16 hexadecimal digits")
                }
                let first = try Self.sequence(item.value("first"))
                var last: UInt64?
                if item.has("last") {
                    guard let value = try Self.sequence(item.value("last")) else {
                        throw item.error("last", "\"last\" must be a sequence number")
                    }
                    last = value
                }
                guard let first, (last ?? first) >= first else {
                    throw item.error("first", "a segment's sequence numbers are never negative nor reversed")
                }
                var skipped: [Range<UInt64>] = []
                if item.has("skipped") {
                    for range in try item.array("skipped") {
                        guard case .array(let bounds) = range, bounds.count == 2,
                            let lower = Self.sequence(bounds[0]), let upper = Self.sequence(bounds[1]),
                            lower < upper
                        else {
                            throw item.error("skipped", "\"skipped\" holds [from, upTo] pairs, from < upTo")
                        }
                        skipped.append(lower..<upper)
                    }
                }
                segments.append(
                    PoseSegment(stream: StreamID(stream), first: first, last: last, skipped: skipped))
            }
            var origin = segments.first.map { ($0.stream, $0.first) }
            if fields.has("origin") {
                let item = try fields.object("origin")
                try item.rejectUnknownKeys(allowed: ["stream", "first"])
                guard let stream = UInt64(try item.string("stream"), radix: 16), stream != 0,
                    let first = Self.sequence(try item.value("first"))
                else { throw item.error("origin", "\"origin\" holds a stream and a first sequence number") }
                origin = (StreamID(stream), first)
            }
            return (Self.merging(skippedLines: skippedLines, into: segments), origin)
        } catch {
            throw WorkerStateError(
                "\(directory)/\(name) is not a record of session starts (\(error)): remove it or give --new-session"
            )
        }
    }

    /// Forces the record of `camera`'s `sessions` and its name to the device (what
    /// ``save(camera:sessions:segments:origin:synced:)`` left to the journal's thread); nothing
    /// when there is no record.
    ///
    /// Static, of the `directory` of a ``SessionStarts``: the journal's thread holds no
    /// starts (the live thread's `.skipped` descriptors are its own).
    static func sync(in directory: String, camera: String, sessions: [StreamID]) throws(WorkerStateError) {
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            let name = Self.fileName(camera: camera, sessions: sessions)
            guard try opened.checkEntry(name) != nil else { return }
            let file = try opened.openFile(name, .read)
            try file.synchronizeData()
            try file.close()
            try opened.descriptor.synchronize()
        } catch {
            throw WorkerStateError("cannot sync where \(camera)'s sessions started in \(directory): \(error)")
        }
    }

    /// A sequence number: a decimal string (every `UInt64`) or, as earlier versions wrote it,
    /// a whole non-negative number; `nil` otherwise.
    private static func sequence(_ value: JSONValue) -> UInt64? {
        switch value {
        case .string(let text): UInt64(text)
        case .number(let number) where number >= 0 && number < 0x1p53 && number.rounded() == number:
            UInt64(number)
        default: nil
        }
    }

    /// The segments with the appended lines `STREAM FROM UPTO` added to the skipped ranges of
    /// the segment of their stream (a torn or foreign last line is passed over).
    static func merging(skippedLines bytes: [UInt8], into segments: [PoseSegment]) -> [PoseSegment] {
        var segments = segments
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
            guard fields.count == 3, let stream = UInt64(fields[0], radix: 16), let lower = UInt64(fields[1]),
                let upper = UInt64(fields[2]), lower < upper,
                let index = segments.lastIndex(where: { $0.stream == StreamID(stream) }),
                !segments[index].skipped.contains(lower..<upper)
            else { continue }
            segments[index].skipped.append(lower..<upper)
            segments[index].skipped.sort { $0.lowerBound < $1.lowerBound }
        }
        return segments
    }

    /// Appends that the live analysis gave up on `sequences` of `stream`: written before what
    /// follows is published, so a kill never loses it; forced to the device by
    /// ``unsyncedSkips``' ``SkipFileSyncs/flush()``, which the caller has the journal's thread
    /// run ahead of the records of what follows (so a power cut never keeps those without it).
    /// - Returns: Whether the caller must queue that flush (none is waiting that would see
    ///   this line).
    @discardableResult
    func appendSkip(camera: String, sessions: [StreamID], stream: StreamID, sequences: Range<UInt64>)
        throws(WorkerStateError) -> Bool
    {
        let line = "\(stream) \(sequences.lowerBound) \(sequences.upperBound)\n"
        let name = Self.fileName(camera: camera, sessions: sessions) + ".skipped"
        do {
            try skipFiles.append(Array(line.utf8), to: name)
        } catch {
            throw WorkerStateError("cannot record a hole given up for \(camera) in \(directory): \(error)")
        }
        return unsyncedSkips.mark(name)
    }

    /// Records `segments` for `camera`'s `sessions`: the file written whole and renamed over
    /// the last, so a kill leaves one or the other; forced to the device before the rename
    /// when `synced`.
    ///
    /// The live loop passes `false` and has ``sync(in:camera:sessions:)`` run on the journal's
    /// thread, ahead of the records of what the pose causes: a camera's first pose then costs
    /// a write and a rename, not a device flush (64 cameras starting at once held the live loop
    /// for their 64 flushes).
    func save(
        camera: String, sessions: [StreamID], segments: [PoseSegment],
        origin: (stream: StreamID, sequence: UInt64)? = nil, synced: Bool = true
    ) throws(WorkerStateError) {
        var json = "{"
        if let origin {
            json += "\"origin\":{\"first\":\"\(origin.sequence)\",\"stream\":\"\(origin.stream)\"},"
        }
        json += "\"segments\":["
        json += segments.map { segment in
            "{\"first\":\"\(segment.first)\"" + (segment.last.map { ",\"last\":\"\($0)\"" } ?? "")
                + (segment.skipped.isEmpty
                    ? ""
                    : ",\"skipped\":["
                        + segment.skipped.map { "[\"\($0.lowerBound)\",\"\($0.upperBound)\"]" }.joined(
                            separator: ",")
                        + "]")
                + ",\"stream\":\"\(segment.stream)\"}"
        }.joined(separator: ",")
        json += "],\"sessions\":[" + sessions.map { "\"\($0)\"" }.joined(separator: ",") + "]}\n"
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            let name = Self.fileName(camera: camera, sessions: sessions)
            let temporary = name + ".new"
            let file = try opened.openFile(temporary, .write.creating.truncating)
            try file.write(Array(json.utf8), at: 0)
            if synced { try file.synchronizeData() }
            try file.close()
            try opened.descriptor.renameEntry(temporary, to: name)
            // The appended holes are in the file now.
            if try opened.checkEntry(name + ".skipped") != nil {
                try opened.openFile(name + ".skipped", .write.truncating).close()
            }
        } catch {
            throw WorkerStateError(
                "cannot record where \(camera)'s sessions started in \(directory): \(error)")
        }
    }
}
