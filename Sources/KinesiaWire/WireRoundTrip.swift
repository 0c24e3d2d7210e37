/// The property every decoder of this module keeps on any input, checked by the libFuzzer
/// target (`fuzz/WireFuzz.swift`) and the robustness tests alike: a decoder answers with a value
/// or a ``WireError``, and what decodes survives re-encoding, in a canonical form.
///
/// ```swift
/// let decoded = try WireRoundTrip.checkPayload(payload)  // throws a Violation, never a WireError
/// if decoded.contains(.pose) { ... }
/// ```
public enum WireRoundTrip {
    /// A decoded value that changed through re-encoding, or a re-encoding that is not canonical.
    public struct Violation: Error, Hashable, Sendable, CustomStringConvertible {
        /// What went wrong, naming the decoder.
        public var description: String

        /// A violation saying `description`.
        public init(_ description: String) { self.description = description }
    }

    /// Which decoders accepted an input.
    public struct Decoded: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// ``WireHeader/decode(from:)-(UnsafeRawBufferPointer)``.
        public static let header = Decoded(rawValue: 1)
        /// ``Topic/init(parsing:)-(UnsafeRawBufferPointer)``, the input taken as a topic.
        public static let topic = Decoded(rawValue: 2)
        /// ``JSONPayloadCodec/decode(_:)-(UnsafeRawBufferPointer)``.
        public static let json = Decoded(rawValue: 4)
        /// ``PoseCodec/decode(_:)-(UnsafeRawBufferPointer)``.
        public static let pose = Decoded(rawValue: 8)
    }

    /// Runs every payload decoder on `payload` (and the topic parser on the same bytes); a JSON
    /// payload or a pose that decodes must re-encode to bytes that decode to the same header and
    /// value, and encoding those again must give the same bytes.
    ///
    /// - Returns: The decoders that accepted the input.
    /// - Throws: ``Violation`` when a round trip changes a value or is not canonical.
    public static func checkPayload(_ payload: UnsafeRawBufferPointer) throws(Violation) -> Decoded {
        var decoded: Decoded = []
        if (try? WireHeader.decode(from: payload)) != nil { decoded.insert(.header) }
        if (try? Topic(parsing: payload)) != nil { decoded.insert(.topic) }
        if let (header, json) = try? JSONPayloadCodec.decode(payload) {
            decoded.insert(.json)
            guard let bytes = try? JSONPayloadCodec.encode(json: json, header: header),
                let again = try? JSONPayloadCodec.decode(bytes), again.header == header, again.json == json
            else { throw Violation("a JSON payload changed through re-encoding") }
            guard let twice = try? JSONPayloadCodec.encode(json: again.json, header: again.header),
                twice == bytes
            else { throw Violation("the JSON payload encoding is not canonical") }
        }
        if let (header, pose) = try? PoseCodec.decode(payload) {
            decoded.insert(.pose)
            guard let bytes = try? PoseCodec.encode(pose, header: header),
                let again = try? PoseCodec.decode(bytes), again.pose == pose, again.header == header
            else { throw Violation("a pose changed through re-encoding") }
            guard let twice = try? PoseCodec.encode(again.pose, header: again.header), twice == bytes else {
                throw Violation("the pose encoding is not canonical")
            }
        }
        return decoded
    }

    /// The same check as the raw-buffer `checkPayload(_:)`, on an array.
    public static func checkPayload(_ payload: [UInt8]) throws(Violation) -> Decoded {
        try payload.withBytes { (raw) throws(Violation) in try checkPayload(raw) }
    }

    /// Decodes a whole message (topic and payload); when it decodes, it must re-encode to frames
    /// that decode to the same message, and encoding that again must give the same frames.
    ///
    /// - Returns: Whether the message decoded.
    /// - Throws: ``Violation`` when the round trip changes the message or is not canonical.
    public static func checkMessage(topic: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer)
        throws(Violation) -> Bool
    {
        guard let message = try? WireMessage.decode(topic: topic, payload: payload) else { return false }
        guard let frames = try? message.encode(),
            let again = try? WireMessage.decode(topic: frames.topic, payload: frames.payload),
            again == message
        else { throw Violation("a message changed through re-encoding") }
        guard let twice = try? again.encode(), twice.topic == frames.topic, twice.payload == frames.payload
        else {
            throw Violation("the message encoding is not canonical")
        }
        return true
    }

    /// The same check as the raw-buffer `checkMessage(topic:payload:)`, on arrays.
    public static func checkMessage(topic: [UInt8], payload: [UInt8]) throws(Violation) -> Bool {
        try topic.withBytes { (topicBytes) throws(Violation) in
            try payload.withBytes { (payloadBytes) throws(Violation) in
                try checkMessage(topic: topicBytes, payload: payloadBytes)
            }
        }
    }
}
