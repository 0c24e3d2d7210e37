import Foundation
import Glibc
import KinesiaService
import KinesiaWire
import Testing

@testable import KinesiaPublishJournal

/// Stream identities: which runs resume a stream.
struct StreamIdentityTests {
    private let stored = StreamIdentity(stream: StreamID(42), session: "squat:left")

    @Test func theSameSessionResumesItsStream() {
        let (identity, resumed) = StreamIdentity.resolve(
            stored: stored, session: "squat:left", newSession: false, random: { StreamID(7) })
        #expect(resumed)
        #expect(identity.stream == StreamID(42))
    }

    @Test(arguments: [
        (StreamIdentity?.none, "squat:left", false),
        (StreamIdentity(stream: StreamID(42), session: "squat:left"), "squat:right", false),
        (StreamIdentity(stream: StreamID(42), session: "squat:left"), "squat:left", true),
        (StreamIdentity(stream: StreamID(42), session: "squat:left", ended: true), "squat:left", false),
    ])
    func anotherSessionANewSessionOrAnEndedStreamStartsANewStream(
        stored: StreamIdentity?, session: String, newSession: Bool
    ) {
        let (identity, resumed) = StreamIdentity.resolve(
            stored: stored, session: session, newSession: newSession, random: { StreamID(7) })
        #expect(!resumed)
        #expect(identity == StreamIdentity(stream: StreamID(7), session: session))
    }

    @Test func theFileRoundTripsAndIsReadStrictly() throws {
        let identity = StreamIdentity(
            stream: StreamID(0xabc), session: "sim:squat \"x\" loop=false", ended: true)
        #expect(try StreamIdentity(json: Array(identity.json.utf8)) == identity)
        #expect(throws: PublishJournalError.self) {
            try StreamIdentity(
                json: Array(#"{"ended":false,"session":"s","stream":"0000000000000001","x":1}"#.utf8))
        }
        #expect(throws: PublishJournalError.self) {
            try StreamIdentity(json: Array(#"{"ended":false,"session":"s","stream":"zz"}"#.utf8))
        }
    }
}

/// The journal options' values.
struct JournalOptionsTests {
    @Test(arguments: [("2G", 2 << 30), ("500M", 500 << 20), ("64k", 64 << 10), ("1000", 1000)])
    func sizesTakeBinaryUnits(text: String, bytes: Int) {
        #expect(ByteCount(parsing: text)?.value == bytes)
    }

    @Test(arguments: ["", "0", "-1G", "2X", "G"])
    func refusesSizesThatAreNone(text: String) {
        #expect(ByteCount(parsing: text) == nil)
    }

    @Test(arguments: [("30d", 30 * 86_400), ("12h", 43_200), ("90s", 90), ("5m", 300)])
    func agesTakeAUnit(text: String, seconds: Int64) {
        #expect(AgeLimit(parsing: text)?.value == .seconds(seconds))
        #expect(AgeLimit(parsing: text)?.description == text)
    }

    @Test(arguments: ["", "30", "0d", "-1h", "1w"])
    func refusesAgesThatAreNone(text: String) {
        #expect(AgeLimit(parsing: text) == nil)
    }

    @Test func theDefaultStateDirectoryIsPerUserAndPerBus() throws {
        let options = JournalOptions()
        #expect(
            try options.stateDirectory(environment: ["HOME": "/home/pt"], bus: "/run/user/1000/kinesia")
                == "/home/pt/.local/state/kinesia/bus-_run_user_1000_kinesia")
        #expect(
            try options.stateDirectory(
                environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"], bus: "tcp://10.0.0.2:5555")
                == "/s/kinesia/bus-tcp___10.0.0.2_5555")
        var given = JournalOptions()
        given.state = "/var/lib/kinesia"
        #expect(try given.stateDirectory(environment: [:], bus: "x") == "/var/lib/kinesia")
        given.state = "relative"
        #expect(throws: PublishJournalError.self) { try given.stateDirectory(environment: [:], bus: "x") }
        #expect(throws: PublishJournalError.self) { try options.stateDirectory(environment: [:], bus: "x") }
    }

    @Test func aStateDirectoryOthersCanWriteIsRefused() throws {
        var template = Array("/tmp/kinesia-state.XXXXXX".utf8CString)
        #expect(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil })
        let directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o777)
        var options = JournalOptions()
        options.state = directory
        let log = Logger(label: "test", sink: CapturedText())
        #expect {
            try PublishJournal(options: options, environment: [:], bus: "b", log: log)
        } throws: { error in
            guard case .unusable(let message) = error as? PublishJournalError else { return false }
            return message.contains(directory) && message.contains("0777")
        }
    }
}
