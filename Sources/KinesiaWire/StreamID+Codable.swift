/// A stream id encodes as its raw `UInt64` (a checkpoint of a worker's sessions keeps it).
extension StreamID: Codable {}
