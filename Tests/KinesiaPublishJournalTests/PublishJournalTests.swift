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
        var template = Array("/tmp/kinesia-journal.XXXXXX".utf8CString)
        #expect(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil })
        let state = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { try? FileManager.default.removeItem(atPath: state) }
        var options = JournalOptions()
        options.state = state
        let errors = CapturedText()
        let log = Logger(label: "test", sink: errors)
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let bus = try BusAddress(parsing: state + "/no-bus")
        let topic = try Topic.event(camera: "cam0", session: "left")

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
        let reattached = try again.attach([topic], identity: "session+cam0+left", session: "s", to: second)
        #expect(reattached.resumed == false)
        #expect(reattached.stream != attached.stream)
        _ = try second.publish(json: #"{"n":0}"#, kind: .event, on: topic)
        #expect(second.lastSequence(on: topic) == 0)
        #expect(second.streamID(on: topic) == reattached.stream)
    }

    /// A worker's health report is made on its live loop: it must not wait while the journal's
    /// thread writes and syncs a batch (once a second, hundreds of syncs), or the loop stops
    /// receiving poses for as long and the broker drops them.
    @Test func healthCountersDoNotWaitForTheBatchTheJournalsThreadIsWriting() throws {
        var template = Array("/tmp/kinesia-journal.XXXXXX".utf8CString)
        #expect(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil })
        let state = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { try? FileManager.default.removeItem(atPath: state) }
        var options = JournalOptions()
        options.state = state
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let bus = try BusAddress(parsing: state + "/no-bus")
        let topic = try Topic.event(camera: "cam0", session: "left")
        let publisher = try BusPublisher(context: zmq, bus: bus, linger: .zero)
        defer { publisher.close() }
        let journal = try PublishJournal(
            options: options, environment: [:], bus: "b", log: Logger(label: "test", sink: CapturedText()))
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
