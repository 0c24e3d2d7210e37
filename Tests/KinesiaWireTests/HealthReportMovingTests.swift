import KinesiaWire
import Testing

/// The `"moving"` field of a health report: the streams a pool worker stopped without ending
/// their runs, read back as written, absent when none, refused when malformed.
struct HealthReportMovingTests {
    static let moving = [
        MovingStream(
            topic: try! Topic.event(camera: "cam7", session: "left"), stream: StreamID(0x2F05_E0CE_D4D7_A433)),
        MovingStream(
            topic: try! Topic.session(camera: "cam7", session: "left"),
            stream: StreamID(0x2F05_E0CE_D4D7_A433)),
    ]

    static func report(moving: [MovingStream]) -> HealthReport {
        HealthReport(
            process: "pool-a", role: "pool-worker", pid: 7, uptime: 1.5, counters: ["sessions": 0],
            moving: moving)
    }

    @Test func movingStreamsReadBackAsWrittenAndAreAbsentWhenNone() throws {
        let json = String(decoding: try Self.report(moving: Self.moving).json(), as: UTF8.self)
        #expect(
            json.contains(
                "\"moving\":[{\"stream\":\"2f05e0ced4d7a433\",\"topic\":\"event/cam7/left/\"},"
                    + "{\"stream\":\"2f05e0ced4d7a433\",\"topic\":\"session/cam7/left/\"}],\"pid\":7"))
        #expect(try HealthReport(json: json) == Self.report(moving: Self.moving))
        let none = String(decoding: try Self.report(moving: []).json(), as: UTF8.self)
        #expect(!none.contains("moving"))
        #expect(try HealthReport(json: none).moving.isEmpty)
    }

    @Test(arguments: [
        ("[{\"stream\":\"0000000000000000\",\"topic\":\"event/cam7/left/\"}]", "not all zero"),
        ("[{\"stream\":\"2f05\",\"topic\":\"event/cam7/left/\"}]", "16 hexadecimal digits"),
        ("[{\"stream\":\"2f05e0ced4d7a433\",\"topic\":\"nonsense\"}]", "not a valid topic"),
        ("{\"stream\":\"2f05e0ced4d7a433\"}", "must be an array"),
    ])
    func aMalformedMovingListIsRefusedWithItsReason(list: String, reason: String) {
        let json =
            "{\"counters\":{},\"moving\":\(list),\"pid\":7,\"process\":\"pool-a\",\"role\":\"pool-worker\",\"uptime\":1}"
        #expect {
            try HealthReport(json: json)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test func aListLongerThanOneReportHoldsIsRefusedAndAWriterSendsNoMore() throws {
        let many = (1...(MovingStream.maximumPerReport + 1)).map {
            MovingStream(
                topic: try! Topic.event(camera: "cam\($0)", session: "left"), stream: StreamID(UInt64($0)))
        }
        let json = String(decoding: try Self.report(moving: many).json(), as: UTF8.self)
        #expect(try HealthReport(json: json).moving == Array(many.prefix(MovingStream.maximumPerReport)))
        let items = many.map { "{\"stream\":\"\($0.stream)\",\"topic\":\"\($0.topic.string)\"}" }
        let tooMany =
            "{\"counters\":{},\"moving\":[\(items.joined(separator: ","))],\"pid\":7,\"process\":\"p\",\"role\":\"r\",\"uptime\":1}"
        #expect(throws: WireError.self) { try HealthReport(json: tooMany) }
    }
}
