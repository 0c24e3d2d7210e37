import KinesiaJSON
import KinesiaMotion
import KinesiaSystem
public import KinesiaWire

/// A stream identity kept in the state directory, so that a process that restarts resumes its
/// streams (same stream id, sequence numbers carried on) instead of starting new ones.
///
/// One file per identity in `STATE/streams/`: `pose+<camera>.json` for a camera's ingest,
/// `session+<camera>+<session>.json` for a worker session (its event and snapshot topics share
/// the id). The file holds `{"ended":false,"session":"...","stream":"<16 hex digits>"}`.
///
/// The rule (``resolve(stored:session:newSession:random:)``): the stored stream is resumed when
/// its `session` text is the same (the same source for an ingest; the same exercise, side and
/// thresholds for a worker session), it has not ended, and `--new-session` was not given.
/// Otherwise a new random stream id starts, and is stored.
public struct StreamIdentity: Hashable, Sendable {
    /// The stream id.
    public var stream: StreamID
    /// What the stream is the stream of: an ingest's source, a session's analysis.
    public var session: String
    /// Whether the stream is over (an ingest that reached the end of its source): the next
    /// start begins a new one.
    public var ended: Bool

    /// Makes an identity.
    public init(stream: StreamID, session: String, ended: Bool = false) {
        self.stream = stream
        self.session = session
        self.ended = ended
    }

    /// The identity to use now, and whether it resumes the stored one.
    public static func resolve(
        stored: StreamIdentity?, session: String, newSession: Bool, random: () -> StreamID = { .random() }
    ) -> (identity: StreamIdentity, resumed: Bool) {
        if let stored, !newSession, !stored.ended, stored.session == session {
            return (stored, true)
        }
        return (StreamIdentity(stream: random(), session: session), false)
    }

    /// The file's JSON.
    var json: String {
        var out = "{\"ended\":\(ended),\"session\":"
        JSONWriter.appendString(session, to: &out)
        out += ",\"stream\":\"\(stream)\"}\n"
        return out
    }

    /// Reads the file's JSON.
    init(json bytes: [UInt8]) throws(PublishJournalError) {
        do {
            let fields = try JSONFields(JSONParser.parse(bytes: bytes), what: "a stream identity")
            try fields.rejectUnknownKeys(allowed: ["ended", "session", "stream"])
            guard let id = UInt64(try fields.string("stream"), radix: 16), id != 0 else {
                throw PublishJournalError.unusable("its stream is not 16 hex digits")
            }
            self.init(
                stream: StreamID(id), session: try fields.string("session"), ended: try fields.bool("ended"))
        } catch let error as PublishJournalError {
            throw error
        } catch {
            throw PublishJournalError.unusable(String(describing: error))
        }
    }
}

/// The `streams/` directory of a state directory: reads and writes ``StreamIdentity`` files
/// (0600, replaced atomically by a rename).
struct StreamIdentityFiles {
    /// `STATE/streams`.
    let directory: String

    init(state: String) throws(PublishJournalError) {
        directory = state + "/streams"
        do {
            try PrivateDirectory.open(directory, creating: true).close()
        } catch {
            throw PublishJournalError.unusable("state directory: \(error)")
        }
    }

    /// The identity stored under `key`, or `nil`.
    func load(_ key: String) throws(PublishJournalError) -> StreamIdentity? {
        let path = directory + "/" + key + ".json"
        let bytes: [UInt8]
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            guard try opened.checkEntry(key + ".json") != nil else { return nil }
            let file = try opened.openFile(key + ".json", .read)
            bytes = (try? file.read(upTo: 65_536, at: 0)) ?? []
        } catch {
            throw PublishJournalError.unusable("stream identity: \(error)")
        }
        do {
            return try StreamIdentity(json: bytes)
        } catch {
            throw PublishJournalError.unusable(
                "\(path) is not a stream identity (\(error)): remove it or give --new-session")
        }
    }

    /// Marks the identity stored under `key` ended, in place: `false` becomes `true ` at the
    /// start of the file (``StreamIdentity``'s JSON begins `{"ended":`), the same number of
    /// bytes in a block the file already has, so that it works on a full disk, where a new file
    /// and a rename cannot be had. A stream whose journal stopped is never resumed: its next
    /// numbers were published without being journaled, and a restart must not number anything
    /// else with them.
    func markEnded(_ key: String) throws(PublishJournalError) {
        let prefix = Array(#"{"ended":"#.utf8)
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            let file = try opened.openFile(key + ".json", .readWrite)
            let head = try file.read(upTo: prefix.count + 5, at: 0)
            guard head.count == prefix.count + 5, Array(head.prefix(prefix.count)) == prefix else {
                throw PublishJournalError.unusable(
                    "\(directory)/\(key).json does not start with \(#"{"ended":"#)")
            }
            guard head.suffix(5) == Array("false".utf8)[...] else { return }
            try file.write(Array("true ".utf8), at: prefix.count)
            try file.synchronizeData()
            try file.close()
        } catch let error as PublishJournalError {
            throw error
        } catch {
            throw PublishJournalError.unusable(
                "cannot mark the stream identity \(directory)/\(key).json ended: \(error)")
        }
    }

    /// Stores `identity` under `key`.
    func save(_ identity: StreamIdentity, as key: String) throws(PublishJournalError) {
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            let temporary = key + ".json.new"
            let file = try opened.openFile(temporary, .write.creating.truncating)
            try file.write(Array(identity.json.utf8), at: 0)
            try file.synchronizeData()
            try file.close()
            try opened.descriptor.renameEntry(temporary, to: key + ".json")
        } catch {
            throw PublishJournalError.unusable(
                "cannot store the stream identity \(directory)/\(key).json: \(error)")
        }
    }
}
