import KinesiaWire
import Testing

struct WireHeaderTests {
    @Test func headerHasTheDocumentedBytes() {
        let bytes = header(.snapshot, sequence: 0x0102).bytes
        #expect(bytes.count == WireFormat.headerSize)
        #expect(
            bytes.hex
                == "4b5701" + "03" + "efcdab8967452301" + "0201000000000000" + "0000df49f1b97c18")
    }

    @Test(arguments: PayloadKind.allCases)
    func headerRoundTripsForEveryKind(kind: PayloadKind) throws {
        var bytes = WireHeader(kind: kind, streamID: StreamID(.max), sequence: .max, sentAt: 0).bytes
        if kind.isJSON { bytes.append(UInt8(ascii: "{")) }
        let decoded = try WireHeader.decode(from: bytes)
        #expect(decoded == WireHeader(kind: kind, streamID: StreamID(.max), sequence: .max, sentAt: 0))
    }

    @Test func headerRejectsForeignAndFuturePayloads() {
        let good = header(.pose).bytes
        #expect(throws: WireError.truncated(needed: 28, available: 27)) {
            try WireHeader.decode(from: Array(good.dropLast()))
        }
        #expect(throws: WireError.truncated(needed: 28, available: 0)) { try WireHeader.decode(from: []) }
        var bytes = good
        bytes[1] = 0
        #expect(throws: WireError.badMagic) { try WireHeader.decode(from: bytes) }
        bytes = good
        bytes[2] = 0
        #expect(throws: WireError.unsupportedVersion(0)) { try WireHeader.decode(from: bytes) }
        bytes = good
        bytes[3] = 0
        #expect(throws: WireError.unknownKind(0)) { try WireHeader.decode(from: bytes) }
        let json = header(.event).bytes + [UInt8](repeating: 0x20, count: WireFormat.maximumJSONPayloadSize)
        #expect(throws: WireError.oversized(size: json.count, limit: WireFormat.maximumJSONPayloadSize)) {
            try WireHeader.decode(from: json)
        }
    }

    @Test func nowIsAfter2024AndMonotonicEnoughForLogs() {
        let now = WireHeader.now()
        #expect(now > 1_704_067_200_000_000_000)
        #expect(WireHeader.now() >= now)
    }

    @Test func streamIDsAreRandomNonZeroAndPrintAsSixteenHexDigits() {
        let ids = (0..<100).map { _ in StreamID.random() }
        #expect(Set(ids).count == 100)
        #expect(!ids.contains(StreamID(0)))
        #expect(StreamID(0xAB).description == "00000000000000ab")
    }
}

struct JSONPayloadCodecTests {
    @Test func jsonRoundTripsForEveryJSONKind() throws {
        let json = #"{"type":"formFault","feedback":"keepTrunkUpright","note":"ção ✓"}"#
        for kind in [PayloadKind.event, .snapshot, .health] {
            let payload = try JSONPayloadCodec.encode(json: json, header: header(kind))
            #expect(payload.count == 28 + json.utf8.count)
            let (decodedHeader, decoded) = try JSONPayloadCodec.decode(payload)
            #expect(decodedHeader == header(kind))
            #expect(decoded == json)
        }
    }

    @Test func jsonCodecRefusesPosesEmptyAndInvalidUTF8() {
        #expect(throws: WireError.unexpectedKind(.pose)) {
            try JSONPayloadCodec.encode(json: "{}", header: header(.pose))
        }
        #expect(throws: WireError.emptyJSON) { try JSONPayloadCodec.encode(json: "", header: header(.event)) }
        #expect(throws: WireError.invalidUTF8) {
            try JSONPayloadCodec.encode(json: [0x7B, 0xC3, 0x28, 0x7D], header: header(.event))
        }
        #expect(throws: WireError.emptyJSON) { try JSONPayloadCodec.decode(header(.event).bytes) }
        #expect(throws: WireError.unexpectedKind(.pose)) {
            try JSONPayloadCodec.decode(header(.pose).bytes + [0x7B, 0x7D])
        }
        // Overlong "/", a lone surrogate, a code point above U+10FFFF, a truncated sequence.
        for bad: [UInt8] in [
            [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x7B, 0xE2, 0x82],
        ] {
            #expect(throws: WireError.invalidUTF8) {
                try JSONPayloadCodec.decode(header(.snapshot).bytes + bad)
            }
        }
    }

    /// The ASCII prefix is passed over a word at a time: a bad byte is found at every offset of
    /// a word and after it, and good multi-byte text after any prefix is kept.
    @Test func invalidUTF8IsFoundAfterAnASCIIPrefixOfAnyLength() throws {
        for prefix in 0..<20 {
            let ascii = [UInt8](repeating: UInt8(ascii: "a"), count: prefix)
            for bad: [UInt8] in [[0xC3, 0x28], [0xFF], [0x80], [0xE2, 0x82]] {
                #expect(throws: WireError.invalidUTF8, "prefix \(prefix), \(bad)") {
                    try JSONPayloadCodec.decode(header(.event).bytes + ascii + bad + ascii)
                }
            }
            let text =
                String(decoding: ascii, as: UTF8.self) + "ção ✓ 🙂" + String(decoding: ascii, as: UTF8.self)
            let (_, decoded) = try JSONPayloadCodec.decode(header(.event).bytes + Array(text.utf8))
            #expect(decoded == text)
        }
    }

    @Test func jsonCodecRefusesPayloadsOverOneMebibyte() {
        let json = [UInt8](repeating: UInt8(ascii: " "), count: WireFormat.maximumJSONPayloadSize - 27)
        #expect(
            throws: WireError.oversized(
                size: WireFormat.maximumJSONPayloadSize + 1, limit: WireFormat.maximumJSONPayloadSize)
        ) {
            try JSONPayloadCodec.encode(json: json, header: header(.event))
        }
        #expect(throws: Never.self) {
            try JSONPayloadCodec.encode(json: Array(json.dropFirst()), header: header(.event))
        }
    }

    @Test func healthReportRoundTripsThroughSortedJSON() throws {
        let report = HealthReport(
            process: "worker-cam0-left", role: "worker", pid: 4242, uptime: 12.5,
            counters: ["poses": 1200, "dropped.nonFinite": 0])
        let json = String(decoding: try report.json(), as: UTF8.self)
        #expect(
            json
                == #"{"counters":{"dropped.nonFinite":0,"poses":1200},"pid":4242,"#
                + #""process":"worker-cam0-left","role":"worker","uptime":12.5}"#)
        #expect(try HealthReport(json: json) == report)
    }

    @Test func healthReportIgnoresUnknownKeysAndRejectsMissingOnes() throws {
        let json = #"{"counters":{},"pid":1,"process":"p","role":"r","uptime":0,"newField":[1,2]}"#
        #expect(try HealthReport(json: json).pid == 1)
        #expect(throws: WireError.self) { try HealthReport(json: #"{"pid":1}"#) }
        #expect(throws: WireError.self) { try HealthReport(json: "not json") }
        // The one strict reader: a duplicate key or a fractional count is refused.
        #expect(throws: WireError.self) {
            try HealthReport(json: #"{"counters":{},"pid":1,"pid":2,"process":"p","role":"r","uptime":0}"#)
        }
        #expect(throws: WireError.self) {
            try HealthReport(json: #"{"counters":{"poses":1.5},"pid":1,"process":"p","role":"r","uptime":0}"#)
        }
        let nan = HealthReport(process: "p", role: "r", pid: 1, uptime: .nan, counters: [:])
        #expect(throws: WireError.nonFinite(.uptime)) { try nan.json() }
    }
}
