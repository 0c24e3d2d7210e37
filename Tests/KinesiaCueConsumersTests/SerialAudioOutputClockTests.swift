import Foundation
import KinesiaSystem
import Synchronization
import Testing

@testable import KinesiaCueConsumers

/// The sound output's deadlines on an injected clock: an utterance whose turn comes after its
/// deadline is not played and is counted late, whatever the wall clock did meanwhile.
struct SerialAudioOutputClockTests {
    /// A player that takes half a second per file (`sh -c 'sleep 0.5' FILE`).
    static let slowPlayer = AudioPlayer(
        name: "sh", executable: "/bin/sh", arguments: ["-c", "sleep 0.5"], environment: [:], output: "test")

    @Test(.timeLimit(.minutes(3)))
    func anUtteranceQueuedPastItsDeadlineOnTheOutputsClockIsSkippedAndCountedLate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-audio-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        let failures = Mutex<[String]>([])
        let output = SerialAudioOutput(
            player: Self.slowPlayer, turn: nil, directory: directory, clock: ElapsedClock(clock)
        ) { error in failures.withLock { $0.append("\(error)") } }
        let events = Mutex<[String]>([])
        func enqueue(_ name: String, deadline: Duration) throws {
            try output.enqueue(
                Array("RIFF".utf8), number: events.withLock { $0.count } + 1, deadline: deadline,
                started: { events.withLock { $0.append("started \(name)") } },
                skipped: { events.withLock { $0.append("skipped \(name)") } })
        }
        // The first plays for half a second of real time; meanwhile the output's clock runs
        // 3 s: the second, due within 2 s, is too late when its turn comes; the third, due
        // within 10 s, is not.
        try enqueue("first", deadline: .seconds(10))
        try enqueue("second", deadline: .seconds(2))
        try enqueue("third", deadline: .seconds(10))
        clock.advance(by: .seconds(3))
        output.drain()
        #expect(events.withLock { $0 } == ["started first", "skipped second", "started third"])
        #expect(output.late == 1)
        #expect(output.failures == 0, "\(failures.withLock { $0 })")
    }
}
