public import KinesiaJournal
public import KinesiaWire

/// A process's journals as a ``ReplaySource``: what a ``ReplayServer`` answers replay requests
/// from, so that what was published is served from disk and survives restarts (the ingest
/// serves its camera's poses, a worker its sessions' events and snapshots).
///
/// Every stream of the store whose topic is one of ``topics`` is served, older streams
/// included (a worker resuming a session replays the pose streams it read, not only the newest);
/// a request that names no stream gets the process's current stream of the topic. Readers are
/// opened on first use and follow the writers: a record is served as soon as it is journaled.
/// A damaged record is never served (``JournalReader`` skips it; the receiver sees it missing).
///
/// Not `Sendable`: use it on the server's thread.
///
/// ```swift
/// let source = JournalReplaySource(store: journal.store, current: [topic: attached.stream])
/// try server.serve(from: source)
/// health.replay = { ReplayAnnouncement(endpoint: server.endpoint, streams: source.streams()) }
/// ```
public final class JournalReplaySource: ReplaySource {
    /// The journals.
    public let store: JournalStore
    /// The process's current stream of each topic it publishes.
    public private(set) var current: [Topic: StreamID]
    /// The topics served.
    public var topics: Set<Topic> { Set(current.keys) }
    /// The current stream of each topic, as the broker's replay port is told of them
    /// (``BrokerReplayLink``): no journal is read.
    public var servedStreams: [ReplayServeFrame.Stream] {
        current.map { ReplayServeFrame.Stream(topic: $0.key, stream: $0.value) }
    }

    private var readers: [JournalStream: JournalReader] = [:]

    /// Called with a topic and the first sequence number wanted before its journal is read (a
    /// publisher that writes behind writes what it gathered: ``PublishJournal/writePending(_:from:)``),
    /// so that what was published is served.
    public var beforeReading: ((Topic, UInt64) -> Void)?

    /// The last sequence number of a stream as its writer in this process knows it
    /// (``PublishJournal/lastJournaled(_:stream:)``), `nil` when it does not write it. With it,
    /// ``streams()`` announces a stream's end without reading what was written since the last
    /// announcement (every second, every stream), and reads the journal for its first
    /// record (which only retention changes) every ``firstRefreshInterval`` announcements.
    public var lastJournaled: ((Topic, StreamID) -> UInt64?)?

    /// How many announcements reuse a stream's first sequence number before the journal is
    /// read again (retention runs at most every 10 s; a heartbeat comes every second). The
    /// streams take turns: each announcement reads one in ``firstRefreshInterval`` of them, so
    /// that a worker of 64 cameras (256 streams, announced on its live thread) reads 26 a
    /// second instead of all 256 every tenth second (17-20 ms of its live loop at once).
    public static let firstRefreshInterval = 10

    private var announcements = 0

    /// Serves `current`'s topics from `store`.
    public init(store: JournalStore, current: [Topic: StreamID]) {
        self.store = store
        self.current = current
    }

    /// The damage the readers found in the segments they read (a damaged record is never
    /// served; the holes it leaves are reported lost to the consumers).
    public var damageFound: [JournalDamage] { readers.values.flatMap(\.damageFound) }

    /// Serves and announces `stream` as `topic`'s stream from now on (a new run); the topic's
    /// earlier streams are still served when asked for by id.
    public func setCurrent(_ stream: StreamID, for topic: Topic) {
        current[topic] = stream
        inTopicOrder = nil
    }

    /// ``current`` in the order the streams are announced (by topic), kept until it changes:
    /// sorting a 64-camera worker's 256 topics by their text at every heartbeat held its live
    /// loop about 2 ms a second.
    private var inTopicOrder: [(topic: Topic, stream: StreamID)]?

    private func currentInTopicOrder() -> [(topic: Topic, stream: StreamID)] {
        if let inTopicOrder { return inTopicOrder }
        let ordered = current.map { (text: $0.key.string, topic: $0.key, stream: $0.value) }
            .sorted { $0.text < $1.text }.map { (topic: $0.topic, stream: $0.stream) }
        inTopicOrder = ordered
        return ordered
    }

    /// The current streams, with their first and last journaled sequence numbers (streams with
    /// no record yet are left out).
    public func streams() -> [ReplayStreamInfo] {
        announcements &+= 1
        return currentInTopicOrder().enumerated().compactMap { index, entry in
            info(
                JournalStream(topic: entry.topic, streamID: entry.stream),
                refreshing: (announcements &+ index) % Self.firstRefreshInterval == 0)
        }
    }

    /// Where `stream` (`nil`: the current one) of `topic` stands.
    public func stream(topic: Topic, stream: StreamID?) -> ReplayStreamInfo? {
        guard current[topic] != nil, let id = stream ?? current[topic] else { return nil }
        return info(JournalStream(topic: topic, streamID: id), refreshing: false)
    }

    /// At most `limit` journaled entries of the stream from `from`.
    public func entries(topic: Topic, stream: StreamID?, from: UInt64, limit: Int) throws(ReplaySourceError)
        -> [ReplayEntry]
    {
        guard current[topic] != nil, let id = stream ?? current[topic],
            let reader = reader(JournalStream(topic: topic, streamID: id))
        else { throw .unknownStream }
        beforeReading?(topic, from)
        guard let first = reader.firstSequence, let last = reader.lastSequence else { return [] }
        guard from >= first else { throw .notRetained(first: first, last: last) }
        guard limit > 0, let found = try? reader.entries(from: from, limit: limit) else { return [] }
        return found.map { ReplayEntry(sequence: $0.sequence, frames: $0.frames) }
    }

    /// Where `stream` stands; its journal is read for its first record when `refreshing` (its
    /// turn) or when none is known yet.
    private func info(_ stream: JournalStream, refreshing: Bool) -> ReplayStreamInfo? {
        guard let reader = reader(stream) else { return nil }
        if let last = lastJournaled?(stream.topic, stream.streamID) {
            if reader.firstSequence == nil {
                // A stream that has just begun: read what its writer has written so far, without
                // waiting for what it still holds (a worker's writes behind): a stream whose
                // first record is not written yet is announced at the next heartbeat.
                try? reader.refresh()
            } else if refreshing {
                // Only the first record is wanted, which only retention moves: the segments
                // are listed, the records written since are not read.
                try? reader.refreshFirst()
            }
            guard let first = reader.firstSequence, first <= last else { return nil }
            return ReplayStreamInfo(topic: stream.topic, stream: stream.streamID, first: first, last: last)
        }
        beforeReading?(stream.topic, 0)
        try? reader.refresh()
        guard let first = reader.firstSequence, let last = reader.lastSequence else { return nil }
        return ReplayStreamInfo(topic: stream.topic, stream: stream.streamID, first: first, last: last)
    }

    private func reader(_ stream: JournalStream) -> JournalReader? {
        if let reader = readers[stream] { return reader }
        guard let reader = try? store.openReader(for: stream) else { return nil }
        readers[stream] = reader
        return reader
    }
}
