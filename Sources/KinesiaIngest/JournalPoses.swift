import KinesiaJSON
import KinesiaJournal
public import KinesiaMotion
import KinesiaSystem
import KinesiaWire

/// A camera's pose journal read as a recording: `journal:PATH` for `kinesia analyze` and
/// `kinesia ingest`, so a past session can be analysed again (with other thresholds).
///
/// PATH is a stream directory (`STATE/journal/pose+cam0/<stream>`), or any directory above
/// stream directories (a state directory, its `journal/`, a `pose+cam0/`) that holds exactly
/// one pose stream; with several, the error lists them to choose from. `journal:PATH,camera=ID`
/// keeps the streams of that camera, and when several remain, the newest (by its last record)
/// is read, so `journal:STATE,camera=cam0` is the camera's latest session. `stream=ID` (16 hex
/// digits) picks a stream by its id, and `first=N`, `last=N` keep the poses of sequence numbers
/// N and after, N and before: the poses of one run, as its `runEnded` names them (`firstPose`,
/// `lastPose`).
///
/// The poses come in sequence order, decoded from the journaled wire messages; damaged records
/// are skipped and reported, never read.
///
/// ```swift
/// let poses = try JournalPoses.load("journal:/home/pt/.local/state/kinesia/bus-x,camera=cam0")
/// let run = try JournalPoses.load("journal:STATE,stream=5f0c9e4a1b2d3c4e,first=120,last=905")
/// ```
public enum JournalPoses {
    /// The prefix of a journal source.
    public static let prefix = "journal:"

    /// Whether `spec` names a journal (`journal:PATH`).
    public static func isJournal(_ spec: String) -> Bool { spec.hasPrefix(prefix) }

    /// The poses of the journal `spec` names, and a warning when damaged records were skipped.
    ///
    /// - Throws: ``PoseSourceError/failure(_:)`` when PATH holds no pose stream, or several to choose
    ///   from; ``PoseSourceError/usage(_:)`` for an option that is none.
    public static func load(_ spec: String) throws(PoseSourceError) -> (poses: [Pose], warning: String?) {
        let options = try parse(spec)
        let stream = try streamDirectory(options.path, camera: options.camera, stream: options.stream)
        let entries: [JournalEntry]
        let reader: JournalReader
        do {
            reader = try JournalReader(directory: stream)
            entries = try reader.allEntries()
        } catch {
            throw PoseSourceError.failure("\(spec): \(error)")
        }
        var poses: [Pose] = []
        poses.reserveCapacity(entries.count)
        var undecodable = 0
        for entry in entries where options.sequences.contains(entry.sequence) {
            guard entry.frames.count == 2, let decoded = try? PoseCodec.decode(entry.frames[1]) else {
                undecodable += 1
                continue
            }
            poses.append(decoded.pose)
        }
        var problems: [String] = []
        if reader.damagedRanges > 0 {
            problems.append(
                "\(reader.damagedRanges) damaged range(s) skipped ("
                    + reader.damage.prefix(3).joined(separator: "; ")
                    + ")")
        }
        if undecodable > 0 { problems.append("\(undecodable) record(s) that are not poses skipped") }
        if poses.isEmpty, options.sequences != 0...UInt64.max {
            throw PoseSourceError.failure(
                "\(spec): no pose of sequence \(options.sequences.lowerBound)...\(options.sequences.upperBound) in \(stream)"
            )
        }
        return (poses, problems.isEmpty ? nil : "\(stream): " + problems.joined(separator: ", "))
    }

    /// What a `journal:` spec asks for.
    struct Options: Equatable {
        /// The directory given.
        var path: String
        /// `camera=ID`.
        var camera: String?
        /// `stream=ID`.
        var stream: StreamID?
        /// `first=N` through `last=N` (every sequence number without them).
        var sequences: ClosedRange<UInt64> = 0...UInt64.max
    }

    static let usage = "give journal:PATH[,camera=ID][,stream=ID][,first=N][,last=N]"

    static func parse(_ spec: String) throws(PoseSourceError) -> Options {
        let parts = spec.dropFirst(prefix.count).split(separator: ",", omittingEmptySubsequences: false)
        guard let path = parts.first, !path.isEmpty else {
            throw PoseSourceError.usage("\(spec.quotedExcerpt()): \(usage)")
        }
        var trimmed = String(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        var options = Options(path: trimmed)
        var seen: Set<Substring> = []
        var first: UInt64?
        var last: UInt64?
        for option in parts.dropFirst() {
            let pair = option.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = pair[0]
            let value = pair.count == 2 ? String(pair[1]) : ""
            guard seen.insert(key).inserted else {
                throw PoseSourceError.usage("\(spec.quotedExcerpt()): \(key) given twice")
            }
            func invalid(_ what: String) -> PoseSourceError {
                .usage("\(spec.quotedExcerpt()): \(key)=\(value.quotedExcerpt()) is not \(what)")
            }
            switch key {
            case "camera" where !value.isEmpty:
                options.camera = value
            case "stream":
                guard value.count == 16, let raw = UInt64(value, radix: 16), raw != 0 else {
                    throw invalid("a stream id (16 hex digits)")
                }
                options.stream = StreamID(raw)
            case "first", "last":
                guard let number = UInt64(value) else { throw invalid("a sequence number") }
                if key == "first" { first = number } else { last = number }
            default:
                throw PoseSourceError.usage(
                    "\(spec.quotedExcerpt()): unknown option \(String(option).quotedExcerpt()) (\(usage))")
            }
        }
        let lower = first ?? 0
        let upper = last ?? UInt64.max
        guard lower <= upper else {
            throw PoseSourceError.usage("\(spec.quotedExcerpt()): first=\(lower) is after last=\(upper)")
        }
        options.sequences = lower...upper
        return options
    }

    /// The one pose stream directory at or under `path` (three levels at most).
    static func streamDirectory(_ path: String, camera: String?, stream id: StreamID? = nil)
        throws(PoseSourceError) -> String
    {
        var found: [String] = []
        collect(path, depth: 0, into: &found)
        if let id {
            found = found.filter { $0.split(separator: "/").last.map(String.init) == id.description }
            guard !found.isEmpty else {
                throw PoseSourceError.failure("journal:\(path): no pose stream \(id) there")
            }
        }
        let poseStreams = found.filter { stream in
            let parent = stream.split(separator: "/").dropLast().last.map(String.init) ?? ""
            guard let topic = JournalStream.topic(directoryName: parent), topic.kind == .pose else {
                // A stream directory given itself: its parent may have any name.
                return stream == path
            }
            return camera.map { topic.camera == $0 } ?? true
        }
        guard !poseStreams.isEmpty else {
            throw PoseSourceError.failure(
                "journal:\(path): no pose journal there" + (camera.map { " for camera \($0)" } ?? "")
                    + " (give a state directory, its journal/ or a stream directory journal/pose+CAMERA/STREAM)"
            )
        }
        if poseStreams.count == 1 { return poseStreams[0] }
        guard camera != nil else {
            throw PoseSourceError.failure(
                "journal:\(path) holds \(poseStreams.count) pose streams; give one with ,camera=ID "
                    + "(the newest is read) or its directory: " + poseStreams.sorted().joined(separator: ", ")
            )
        }
        return poseStreams.max { lastChange($0) < lastChange($1) }!
    }

    private static func collect(_ path: String, depth: Int, into found: inout [String]) {
        guard let directory = try? PrivateDirectory.open(path, creating: false) else { return }
        let names = (try? directory.descriptor.entryNames()) ?? []
        directory.close()
        if names.contains(where: { $0.hasSuffix(".journal") }) {
            found.append(path)
            return
        }
        guard depth < 3 else { return }
        for name in names.sorted() where !name.hasPrefix(".") && !name.hasSuffix(".json") && name != "lock" {
            collect(path + "/" + name, depth: depth + 1, into: &found)
        }
    }

    private static func lastChange(_ stream: String) -> Int64 {
        (try? FileStatus(path: stream))?.changedAt ?? 0
    }
}
