/// Events, snapshots and health reports: the ``WireHeader`` followed by UTF-8 JSON.
///
/// The JSON itself is produced and parsed elsewhere (`MotionJSON` for events and snapshots,
/// ``HealthReport`` for health): this codec frames it, checks that it is non-empty, valid UTF-8
/// and within ``WireFormat/maximumJSONPayloadSize``. Consumers must ignore JSON fields they do
/// not know: new fields do not change the format version.
///
/// ```swift
/// let payload = try JSONPayloadCodec.encode(json: #"{"type":"holdStarted"}"#, header: header)
/// let (header, json) = try JSONPayloadCodec.decode(payload)
/// ```
public enum JSONPayloadCodec {
    /// Frames `json` (UTF-8 bytes) behind `header`.
    /// - Throws: ``WireError/unexpectedKind(_:)`` when `header.kind` is `.pose`,
    ///   ``WireError/emptyJSON``, ``WireError/invalidUTF8``, ``WireError/oversized(size:limit:)``.
    public static func encode(json: [UInt8], header: WireHeader) throws(WireError) -> [UInt8] {
        var buffer: [UInt8] = []
        try encode(json: json, header: header, into: &buffer)
        return buffer
    }

    /// Frames `json` behind `header`.
    /// - Throws: ``WireError``, as ``encode(json:header:)-([UInt8],_)``.
    public static func encode(json: String, header: WireHeader) throws(WireError) -> [UInt8] {
        try encode(json: Array(json.utf8), header: header)
    }

    /// Frames `json` behind `header` into `buffer`, replacing its content and reusing its
    /// storage.
    /// - Throws: ``WireError``, as ``encode(json:header:)-([UInt8],_)``.
    public static func encode(json: [UInt8], header: WireHeader, into buffer: inout [UInt8])
        throws(WireError)
    {
        guard header.kind.isJSON else { throw .unexpectedKind(header.kind) }
        try json.withBytes { (raw) throws(WireError) in try validate(raw) }
        let size = WireFormat.headerSize + json.count
        guard size <= WireFormat.maximumJSONPayloadSize else {
            throw .oversized(size: size, limit: WireFormat.maximumJSONPayloadSize)
        }
        buffer.removeAll(keepingCapacity: true)
        buffer.reserveCapacity(size)
        buffer.append(contentsOf: header.bytes)
        buffer.append(contentsOf: json)
    }

    /// Decodes a JSON payload (event, snapshot or health) into its header and its JSON text.
    /// - Throws: ``WireError``: the header's errors, ``WireError/unexpectedKind(_:)`` for a
    ///   pose, ``WireError/emptyJSON``, ``WireError/invalidUTF8``.
    public static func decode(_ payload: UnsafeRawBufferPointer) throws(WireError) -> (
        header: WireHeader, json: String
    ) {
        let header = try WireHeader.decode(from: payload)
        guard header.kind.isJSON else { throw .unexpectedKind(header.kind) }
        let body = UnsafeRawBufferPointer(rebasing: payload[WireFormat.headerSize...])
        try validate(body)
        return (header, String(decoding: body, as: UTF8.self))
    }

    /// Decodes a JSON payload.
    /// - Throws: ``WireError``, as ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ payload: [UInt8]) throws(WireError) -> (
        header: WireHeader, json: String
    ) {
        try payload.withBytes { (raw) throws(WireError) in try decode(raw) }
    }

    /// Checks that `body` is non-empty, well-formed UTF-8.
    static func validate(_ body: UnsafeRawBufferPointer) throws(WireError) {
        guard !body.isEmpty else { throw .emptyJSON }
        guard isValidUTF8(body) else { throw .invalidUTF8 }
    }

    /// A strict UTF-8 check (no overlong forms, no surrogates, nothing above U+10FFFF).
    ///
    /// The ASCII prefix (all of a worker's snapshots, most events) is passed over eight bytes at
    /// a time; the decoder checks from the first byte with its high bit set.
    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let ascii = asciiPrefixLength(bytes)
        guard ascii < bytes.count else { return true }
        var iterator = UnsafeRawBufferPointer(rebasing: bytes[ascii...]).makeIterator()
        var decoder = Unicode.UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// How many bytes at the start of `bytes` are ASCII (high bit clear).
    static func asciiPrefixLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if word & highBits != 0 { break }
            index += 8
        }
        while index < bytes.count, bytes[index] < 0x80 { index += 1 }
        return index
    }
}
