import KinesiaSystem
import KinesiaWire

/// Where the worker last learned its cameras' pose streams are served
/// (`STATE/replay-endpoints`, a line `STREAM ENDPOINT` per stream), so that a restarted worker
/// asks for the poses it must rebuild from at once instead of waiting for the ingest's next
/// heartbeat (up to a second, half of a restart's time).
///
/// A hint is only a hint: ``PoseReplayClient`` asks the endpoint, and when it does not answer
/// or does not hold the stream, waits for an announcement as it would have. Written to a
/// temporary name of the writer's own and renamed, not synced (a torn or lost file only costs the
/// wait); lines that do not read are passed over.
///
/// Workers of one bus share the state directory, and so this file: a save keeps the hints that
/// other workers stored for streams this one has not been told about, and each writer's temporary
/// file is its own (two workers renaming one temporary name lost each other's saves and failed
/// with "No such file or directory").
struct ReplayEndpointHints {
    /// The file.
    let path: String
    /// The most streams kept (the newest announced).
    static let limit = 1024

    private let directory: String
    private let name = "replay-endpoints"
    private let temporary: String

    /// The hints of `state`, saved by `writer` (a name of its own among the processes that share
    /// the directory: the process id by default).
    init(state: String, writer: String = "\(ProcessIdentity.id)") {
        directory = state
        path = state + "/" + name
        temporary = name + "." + writer + ".new"
    }

    /// The hints stored (none when the file is missing or unreadable).
    func load() -> [StreamID: String] {
        guard let opened = try? PrivateDirectory.open(directory, creating: false),
            let file = try? opened.openFile(name, .read), let size = try? file.size(), size <= 1 << 20,
            let bytes = try? file.read(upTo: size, at: 0)
        else { return [:] }
        return Self.parse(String(decoding: bytes, as: UTF8.self))
    }

    /// Stores `hints`, over what the file held for the same streams (at most ``limit`` streams:
    /// `hints` first, then the others' in stream order).
    func save(_ hints: [StreamID: String]) throws(WorkerStateError) {
        let text = Self.format(Self.merging(hints, over: load()))
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            let file = try opened.openFile(temporary, .write.creating.truncating)
            try file.write(Array(text.utf8), at: 0)
            try file.close()
            try opened.descriptor.renameEntry(temporary, to: name)
        } catch {
            throw WorkerStateError("cannot write \(path): \(error)")
        }
    }

    /// `hints`, and as many of `stored`'s other streams as fit under ``limit``.
    static func merging(_ hints: [StreamID: String], over stored: [StreamID: String]) -> [StreamID: String] {
        var merged = hints
        for (stream, endpoint) in stored.sorted(by: { $0.key.rawValue < $1.key.rawValue })
        where merged.count < limit && merged[stream] == nil {
            merged[stream] = endpoint
        }
        return merged
    }

    /// `STREAM ENDPOINT` lines, sorted by stream.
    static func format(_ hints: [StreamID: String]) -> String {
        hints.sorted { $0.key.rawValue < $1.key.rawValue }.prefix(limit).map { "\($0.key) \($0.value)\n" }
            .joined()
    }

    /// The lines that read: a stream id of 16 hex digits, then an `ipc://` or `tcp://` endpoint
    /// with no space or control character.
    static func parse(_ text: String) -> [StreamID: String] {
        var hints: [StreamID: String] = [:]
        for line in text.split(separator: "\n").prefix(limit) {
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 16, let raw = UInt64(parts[0], radix: 16), raw != 0,
                parts[1].hasPrefix("ipc://") || parts[1].hasPrefix("tcp://"), parts[1].count <= 512,
                parts[1].unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
            else { continue }
            hints[StreamID(rawValue: raw)] = String(parts[1])
        }
        return hints
    }
}
