import Foundation
import KinesiaClient
import KinesiaControl
import KinesiaMotion
import KinesiaService
import KinesiaSystem
import KinesiaWire
import Synchronization
import Testing

@testable import KinesiaDemo

/// The demo day's waits, timed on a manual clock: a session's start is asked again for 30 s
/// while the pool has no live worker, then the day stops saying so; a patient's camera plays
/// for its share of the time; the record's run ends are awaited 10 s, then the day ends.
@Suite struct DemoDayClockTests {
    /// A day on a bus directory of its own (no site running), timed on `clock`.
    static func day(_ directory: String, clock: ManualClock, secondsEach: Double = 30) throws -> DemoDay {
        let bus = try BusAddress(parsing: directory)
        try bus.prepare()
        var day = DemoDay(
            bus: bus, camera: "cam0", exercise: .squat,
            patients: [DemoDay.Patient(reference: "demo-a", seed: 1)],
            secondsEach: secondsEach, state: directory + "/state", database: directory + "/record.sqlite",
            log: Logger(label: "demo", sink: CapturedText()), say: { _ in })
        day.clock = ElapsedClock(clock)
        return day
    }

    static func temporaryDirectory() -> String {
        NSTemporaryDirectory() + "kinesia-demo-clock-\(UUID().uuidString.prefix(8))"
    }

    /// The day's first session started on a manual clock, each request answered by `answer`
    /// (which may move the clock).
    static func startFirstSession(
        answering answer: @escaping (ControlRequest, ManualClock) -> ControlAnswer
    ) throws -> Result<ControlAnswer, DemoDay.Failure> {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        let day = try Self.day(directory, clock: clock)
        return day.start(
            DemoDay.sessions[0], patient: day.patients[0], stop: StopToken(), send: { answer($0, clock) })
    }

    @Test func theWaitsEndAtTheirLimitsNotBefore() {
        #expect(DemoDay.startTimeout == .seconds(30))
        #expect(DemoDay.runEndsTimeout == .seconds(10))
        let wait = DemoWait(limit: .seconds(double: 7.5), startedAt: .seconds(2))
        #expect(wait.isOver(at: .milliseconds(9499)) == false)
        #expect(wait.isOver(at: .milliseconds(9500)))
    }

    @Test func aSessionWhosePoolHasNoLiveWorkerFor30SecondsStopsTheDayWithTheCoordinatorsAnswer() throws {
        var asked = 0
        let result = try Self.startFirstSession { request, clock in
            asked += 1
            // Each ask takes the clock on: to 1 ms before the limit, then to it.
            clock.advance(by: asked == 1 ? DemoDay.startTimeout - .milliseconds(1) : .milliseconds(1))
            return ControlAnswer(
                id: request.id, outcome: .noLiveWorker, message: "no live worker in pool demo")
        }
        #expect(asked == 2, "asked again 1 ms before the limit, not after it")
        guard case .failure(let failure) = result else {
            Issue.record("the start succeeded: \(result)")
            return
        }
        #expect(failure.message == "cannot start cam0/left: no live worker in pool demo")
    }

    @Test func aSessionIsStartedOnceTheWorkerJoinsWithinTheLimit() throws {
        var asked = 0
        let result = try Self.startFirstSession { request, clock in
            asked += 1
            clock.advance(by: .seconds(10))
            return asked < 3
                ? ControlAnswer(
                    id: request.id, outcome: .noLiveWorker, message: "no live worker in pool demo")
                : ControlAnswer(id: request.id, outcome: .started, message: "started cam0/left")
        }
        #expect(asked == 3)
        #expect((try? result.get())?.message == "started cam0/left")
    }

    @Test func theDayWaitsTenSecondsOnItsClockForTheRunEndsThenEnds() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        let day = try Self.day(directory, clock: clock)
        let returned = DispatchSemaphore(value: 0)
        let held = Mutex<Bool?>(nil)
        let wait = DemoWait(limit: DemoDay.runEndsTimeout, startedAt: day.clock.now)
        Thread {
            // No record: its run ends never come.
            let result = day.waitForRunEnds(3, stop: StopToken(), wait: wait)
            held.withLock { $0 = result }
            returned.signal()
        }.start()
        clock.advance(by: DemoDay.runEndsTimeout - .milliseconds(1))
        #expect(returned.wait(timeout: .now() + 0.3) == .timedOut, "1 ms before 10 s: still waiting")
        clock.advance(by: .milliseconds(1))
        #expect(returned.wait(timeout: .now() + 10) == .success, "10 s: the day ends")
        #expect(held.withLock { $0 } == false, "without the run ends")
    }

    @Test func aPatientsCameraPlaysForItsShareOfTheTimeOnTheDaysClock() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        let day = try Self.day(directory, clock: clock, secondsEach: 45)
        let returned = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let started = DispatchSemaphore(value: 0)
        Thread {
            let result = day.play("sim:squat,side=both,seed=1", patient: day.patients[0], stop: StopToken()) {
                started.signal()
            }
            failure.withLock { $0 = result }
            returned.signal()
        }.start()
        #expect(started.wait(timeout: .now() + 10) == .success, "the camera starts")
        clock.advance(by: .seconds(45) - .milliseconds(1))
        #expect(returned.wait(timeout: .now() + 0.3) == .timedOut, "1 ms before 45 s: still playing")
        clock.advance(by: .milliseconds(1))
        #expect(returned.wait(timeout: .now() + 10) == .success, "45 s: the camera stops")
        #expect(failure.withLock { $0 } == nil)
    }
}
