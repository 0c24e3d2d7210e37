import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaJournal
import KinesiaService
import KinesiaSystem
import KinesiaWire
import Synchronization
import Testing

@testable import KinesiaPublishJournal

/// What a journaling process does when its journal stops (a full disk): it publishes on, and
/// the stream is never resumed, so no later start numbers other content with numbers that were
/// published without being journaled.
@Suite struct PublishJournalTests {
    @Test func aStreamWhoseJournalStoppedIsNotResumedByTheNextStart() throws {
        try JournalTestState.with { fixture in
            let (options, log, errors, zmq, bus, topic) = (
                fixture.options, fixture.log, fixture.text, fixture.zmq, fixture.bus, fixture.topic
            )

            let first = try BusPublisher(context: zmq, bus: bus, linger: .zero)
            let journal = try PublishJournal(options: options, environment: [:], bus: "b", log: log)
            let attached = try journal.attach([topic], identity: "session+cam0+left", session: "s", to: first)
            journal.install(on: first)
            for index in 0..<3 { _ = try first.publish(json: #"{"n":\#(index)}"#, kind: .event, on: topic) }
            // The disk is full from here on: publishing goes on, unjournaled.
            journal.writer(of: topic)?.writeFunction = { _, _, _ in (0, Errno(rawValue: ENOSPC)) }
            for index in 3..<10 { _ = try first.publish(json: #"{"n":\#(index)}"#, kind: .event, on: topic) }
            #expect(first.lastSequence(on: topic) == 9)
            #expect(journal.healthCounters["journalStopped"] == 1)
            #expect(journal.healthCounters["streamsEnded"] == 1)
            #expect(errors.text.contains("will not be resumed"), "\(errors.text)")
            journal.finish(ended: false)
            first.close()

            // The next start: a new stream, numbered from 0 (not #3 of the old stream, which was
            // published with other content).
            let second = try BusPublisher(context: zmq, bus: bus, linger: .zero)
            defer { second.close() }
            let again = try PublishJournal(options: options, environment: [:], bus: "b", log: log)
            let reattached = try again.attach(
                [topic], identity: "session+cam0+left", session: "s", to: second)
            #expect(reattached.resumed == false)
            #expect(reattached.stream != attached.stream)
            _ = try second.publish(json: #"{"n":0}"#, kind: .event, on: topic)
            #expect(second.lastSequence(on: topic) == 0)
            #expect(second.streamID(on: topic) == reattached.stream)
        }
    }

    /// A worker's health report is made on its live loop: it must not wait while the journal's
    /// thread writes and syncs a batch (once a second, hundreds of syncs), or the loop stops
    /// receiving poses for as long and the broker drops them.
    @Test func healthCountersDoNotWaitForTheBatchTheJournalsThreadIsWriting() throws {
        try JournalTestState.with { fixture in
            let topic = fixture.topic
            let publisher = try BusPublisher(context: fixture.zmq, bus: fixture.bus, linger: .zero)
            defer { publisher.close() }
            let journal = try PublishJournal(
                options: fixture.options, environment: [:], bus: "b", log: fixture.log)
            journal.writesBehind = true
            _ = try journal.attach([topic], identity: "session+cam0+left", session: "s", to: publisher)
            journal.install(on: publisher)

            // The thread's write of the first record blocks until the test lets it go.
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let held = Atomic(false)
            journal.writer(of: topic)?.writeFunction = { descriptor, bytes, offset in
                if !held.exchange(true, ordering: .relaxed) {
                    entered.signal()
                    release.wait()
                }
                return FileDescriptor.write(descriptor: descriptor, bytes, at: offset)
            }
            _ = try publisher.publish(json: #"{"n":0}"#, kind: .event, on: topic)
            // The turn of the publisher's loop hands the record over.
            journal.writeAndSyncIfDue(now: .zero)
            #expect(entered.wait(timeout: .now() + 30) == .success, "the journal's thread never wrote")

            nonisolated(unsafe) let reading = journal
            let counters = Mutex<[String: Int]?>(nil)
            let answered = DispatchSemaphore(value: 0)
            Thread {
                let values = reading.healthCounters
                counters.withLock { $0 = values }
                answered.signal()
            }.start()
            let inTime = answered.wait(timeout: .now() + 5) == .success
            release.signal()
            if !inTime { answered.wait() }
            #expect(inTime, "the health counters waited for the journal's batch")
            // As of the batch before: the record being written is not counted yet.
            #expect(counters.withLock { $0?["journalRecords"] } == 0)

            journal.writePending(topic)
            journal.finish(ended: false)
            #expect(journal.healthCounters["journalRecords"] == 1)
        }
    }

    /// A pool worker paused past its lease comes back while another worker journals its
    /// sessions' streams: its writers, fenced away, fail. That must end nothing: marking the
    /// stream ended in the state directory the holders share made the taker's next start begin
    /// a new stream in the middle of a run (the short chaos run with pools, seed 556823193,
    /// lost events so).
    @Test(arguments: [true, false])
    func aWriterFailingAfterItsStreamWasTakenEndsNothing(takerHolds: Bool) throws {
        try JournalTestState.with { fixture in
            let (options, log, text, zmq, bus, topic) = (
                fixture.options, fixture.log, fixture.text, fixture.zmq, fixture.bus, fixture.topic
            )
            func journal(epoch: UInt64, holds: (@Sendable () -> Bool)? = nil) throws -> PublishJournal {
                let journal = try PublishJournal(options: options, environment: [:], bus: "b", log: log)
                journal.fencingEpoch = epoch
                journal.holdsStreams = holds
                return journal
            }

            let lease = LeaseFlag()
            let paused = try journal(epoch: 3, holds: { lease.holds })
            let pausedPublisher = try BusPublisher(context: zmq, bus: bus, linger: .zero)
            defer { pausedPublisher.close() }
            let attached = try paused.attach(
                [topic], identity: "session+cam0+left", session: "s", to: pausedPublisher)
            paused.install(on: pausedPublisher)
            for index in 0..<3 {
                _ = try pausedPublisher.publish(json: #"{"n":\#(index)}"#, kind: .event, on: topic)
            }
            lease.lapse()

            // With a taker: it fences the paused holder's stream (its holder file names epoch 5);
            // without one yet: only the paused holder's own lease says it lost the right.
            let takerPublisher = try BusPublisher(context: zmq, bus: bus, linger: .zero)
            defer { takerPublisher.close() }
            let taker = takerHolds ? try journal(epoch: 5) : nil
            if let taker {
                let took = try taker.attach(
                    [topic], identity: "session+cam0+left", session: "s", to: takerPublisher)
                #expect(took.resumed && took.stream == attached.stream && took.lastSequences[topic] == 2)
                taker.install(on: takerPublisher)
                _ = try takerPublisher.publish(json: #"{"n":3}"#, kind: .event, on: topic)
            }
            // The paused holder, back: its writer fails (here, a full disk).
            paused.writer(of: topic)?.writeFunction = { _, _, _ in (0, Errno(rawValue: ENOSPC)) }
            _ = try pausedPublisher.publish(json: #"{"n":3}"#, kind: .event, on: topic)
            #expect(paused.healthCounters["streamsLost"] == 1)
            #expect(paused.healthCounters["streamsEnded"] == 0)
            #expect(!text.text.contains("will not be resumed"), "\(text.text)")
            #expect(text.text.contains("it goes on there"), "\(text.text)")
            paused.finish(ended: false)
            taker?.finish(ended: false)

            // The next holder resumes the same stream after the last record journaled.
            let next = try journal(epoch: 7)
            let nextPublisher = try BusPublisher(context: zmq, bus: bus, linger: .zero)
            defer { nextPublisher.close() }
            let resumed = try next.attach(
                [topic], identity: "session+cam0+left", session: "s", to: nextPublisher)
            #expect(resumed.resumed)
            #expect(resumed.stream == attached.stream)
            #expect(resumed.lastSequences[topic] == (takerHolds ? 3 : 2))
            next.finish(ended: false)
        }
    }
    /// The journal remembers the last topic's writer (or slot): records of topics interleaved,
    /// then of a topic attached again for a new stream (a new run), each land in their own
    /// stream's journal, with the queue's thread or without.
    @Test(arguments: [false, true])
    func interleavedTopicsAndATopicAttachedAgainJournalWhereTheyBelong(writesBehind: Bool) throws {
        try JournalTestState.with { fixture in
            let events = fixture.topic
            let snapshots = try Topic.snapshot(camera: "cam0", session: "left")
            let publisher = try BusPublisher(context: fixture.zmq, bus: fixture.bus, linger: .zero)
            defer { publisher.close() }
            let journal = try PublishJournal(
                options: fixture.options, environment: [:], bus: "b", log: fixture.log)
            journal.writesBehind = writesBehind
            let first = try journal.attach(
                [events, snapshots], identity: "session+cam0+left", session: "s", to: publisher)
            journal.install(on: publisher)
            // The last of them on the topic attached again next.
            for topic in [events, snapshots, events, snapshots, events] {
                _ = try publisher.publish(json: #"{"n":0}"#, kind: topic.kind.payloadKind, on: topic)
            }
            let second = try journal.attach(
                [events], identity: "session+cam0+left", session: "s", newStream: StreamID(0xBEEF),
                to: publisher)
            #expect(second.stream == StreamID(0xBEEF))
            for _ in 0..<2 { _ = try publisher.publish(json: #"{"n":1}"#, kind: .event, on: events) }
            journal.finish(ended: false)

            func sequences(_ topic: Topic, _ stream: StreamID) throws -> [UInt64] {
                try journal.store.openReader(for: JournalStream(topic: topic, streamID: stream))
                    .allEntries().map(\.sequence)
            }
            #expect(try sequences(events, first.stream) == [0, 1, 2])
            #expect(try sequences(snapshots, first.stream) == [0, 1])
            #expect(try sequences(events, second.stream) == [0, 1])
        }
    }
}

/// A pool worker's lease, as its sessions read it.
private final class LeaseFlag: Sendable {
    private let value = Atomic(true)
    var holds: Bool { value.load(ordering: .relaxed) }
    func lapse() { value.store(false, ordering: .relaxed) }
}

/// A private state directory (removed after), its journal options, a logger whose text is
/// kept, a libzmq context and a bus address with no broker behind it: what each test of a
/// publishing process's journal starts from.
private struct JournalTestState {
    let options: JournalOptions
    let text = CapturedText()
    let log: Logger
    let zmq: ZMQContext
    let bus: BusAddress
    let topic: Topic

    static func with(_ body: (JournalTestState) throws -> Void) throws {
        var template = Array("/tmp/kinesia-journal.XXXXXX".utf8CString)
        #expect(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil })
        let state = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { try? FileManager.default.removeItem(atPath: state) }
        var options = JournalOptions()
        options.state = state
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        try body(
            JournalTestState(
                options: options, zmq: zmq, bus: try BusAddress(parsing: state + "/no-bus"),
                topic: try Topic.event(camera: "cam0", session: "left")))
    }

    private init(options: JournalOptions, zmq: ZMQContext, bus: BusAddress, topic: Topic) {
        self.options = options
        log = Logger(label: "test", sink: text)
        self.zmq = zmq
        self.bus = bus
        self.topic = topic
    }
}
