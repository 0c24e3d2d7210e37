public import KinesiaWire

/// A request for poses of one stream, to send to the replay server that announced the stream.
public struct PoseReplayRequest: Hashable, Sendable {
    /// The stream.
    public var stream: StreamID
    /// The first sequence number wanted.
    public var from: UInt64
    /// The last one wanted, when known (a hole before a live pose, a closed segment); `nil`:
    /// as far as the server holds.
    public var through: UInt64?
    /// Whether it is worth waiting for a server to be announced (a rebuild: giving up starts a
    /// new run), rather than giving the hole up at once when none is known (live).
    public var waitsForServer: Bool

    /// Makes a request.
    public init(stream: StreamID, from: UInt64, through: UInt64? = nil, waitsForServer: Bool = false) {
        self.stream = stream
        self.from = from
        self.through = through
        self.waitsForServer = waitsForServer
    }
}
