import Foundation
import KinesiaClient
import KinesiaControl
import KinesiaIngest
import KinesiaMotion
import KinesiaPublishJournal
import KinesiaService
import KinesiaStore
import KinesiaSystem
import KinesiaWire
import Synchronization

/// The demo's clinic day, on a running site: the patients one after the other on one camera.
///
/// For each patient, its three sessions (left, right, analytics) are started through the
/// coordinator (`kinesia session start`'s request: a new run each, with the patient's
/// reference); then its camera plays the patient's own seeded simulation for its share of the
/// time; then its sessions are stopped (each run ends with its summary). The demo plays the
/// camera itself once the runs are confirmed, so each run begins at its camera's first pose and
/// the same seeds give the same runs.
public struct DemoDay: Sendable {
    /// A patient of the day: the reference the clinic gives, and the simulation's seed.
    public struct Patient: Hashable, Sendable {
        /// `demo-a`.
        public var reference: String
        /// The seed of the patient's simulation.
        public var seed: Int

        /// A patient.
        public init(reference: String, seed: Int) {
            self.reference = reference
            self.seed = seed
        }
    }

    /// The sessions each patient's camera feeds.
    static let sessions: [(name: String, analysis: SessionPlan.Analysis)] = [
        ("left", .left), ("right", .right), ("analytics", .analytics),
    ]
    /// The pool of the demo's worker.
    public static let pool = "demo"

    /// The bus.
    let bus: BusAddress
    /// The camera.
    let camera: String
    /// The exercise.
    let exercise: Exercise
    /// The patients, in order.
    let patients: [Patient]
    /// How long each patient's camera plays.
    let secondsEach: Double
    /// Where the camera journals its poses (a directory of the bus's).
    let state: String
    /// The record's database: the day ends once it holds every run's end.
    let database: String
    /// The log of the camera's ingest.
    let log: Logger
    /// Tells the demo's reader what happens (`started cam0/left on worker w (run 1)`).
    let say: @Sendable (String) -> Void
    /// What the day's waits are timed on (``DemoWait``): its ``listeners`` awaited for
    /// ``listenersTimeout``, a session's start asked again for ``startTimeout``, each patient's
    /// camera playing for ``secondsEach``, the record's run ends awaited for ``runEndsTimeout``.
    /// The system's clock; a ``ManualClock`` in tests (the listeners' wait then ends only when
    /// they are heard or the day is stopped, unless the test moves the clock).
    var clock = ElapsedClock(ContinuousClock())
    /// The processes that must hear the day from its first cue (the voices: they follow the bus
    /// live, and what is said before they are connected is never said). Before the first
    /// patient the day waits, for at most ``listenersTimeout`` on ``clock``, until each has
    /// reported on `health/`: its report came through the broker, so it is connected to it, and
    /// its subscriptions, sent as it connected, reach the publishers within moments.
    var listeners: Set<String> = []

    /// How long at most the day waits for its ``listeners`` before the first patient.
    static let listenersTimeout: Duration = .seconds(30)

    /// How long a session's start is asked again while the pool's worker has not joined.
    static let startTimeout: Duration = .seconds(30)
    /// The pause between two asks of a session's start.
    static let startRetryPause: Duration = .milliseconds(200)
    /// How long at most the day waits, after the last patient, for the record to hold the ends
    /// of the runs stopped.
    static let runEndsTimeout: Duration = .seconds(10)

    /// Runs the day until its end or `stop`.
    ///
    /// - Parameter cameraStarted: Called when a patient's camera starts playing.
    /// - Returns: `nil` when done (or stopped), else what failed.
    func run(stop: StopToken, cameraStarted: @Sendable () -> Void) -> String? {
        let client = ControlClient(bus: bus, timeout: .seconds(5))
        var ended = 0
        waitForListeners(stop: stop)
        for patient in patients {
            guard !stop.isRequested else { return nil }
            for session in Self.sessions {
                let answer: ControlAnswer
                switch start(session, patient: patient, stop: stop, send: { try client.send($0) }) {
                case .success(let done): answer = done
                case .failure(let failure): return failure.message
                }
                guard answer.outcome == .started else { return "\(answer.message)" }
                say("patient \(patient.reference): \(answer.message)")
            }
            let source = "sim:\(exercise.id),side=both,seed=\(patient.seed)"
            say("patient \(patient.reference): camera \(camera) plays \(source) for \(secondsEach) s")
            if let failure = play(source, patient: patient, stop: stop, started: cameraStarted) {
                return failure
            }
            // Stopped early (a signal): the site is shutting down, the runs stay open.
            guard !stop.isRequested else { return nil }
            for session in Self.sessions {
                do {
                    let key = try SessionKey(camera: camera, name: session.name)
                    let answer = try client.send(
                        ControlRequest(id: ControlClient.newRequestID(), command: .stop(key)))
                    say("patient \(patient.reference): \(answer.message)")
                    if answer.outcome == .stopped { ended += 1 }
                } catch {
                    return "cannot stop \(camera)/\(session.name): \(error)"
                }
            }
        }
        waitForRunEnds(ended, stop: stop, wait: DemoWait(limit: Self.runEndsTimeout, startedAt: clock.now))
        return nil
    }

    /// Waits until each of ``listeners`` is connected, for at most ``listenersTimeout``; says
    /// which were not (the day goes on: they may miss its first cues).
    func waitForListeners(stop: StopToken) {
        guard !listeners.isEmpty else { return }
        do {
            let silent = try HealthCollector.waitForReports(
                from: listeners, bus: bus, within: Self.listenersTimeout, elapsed: clock
            ) { stop.isRequested }
            guard !silent.isEmpty, !stop.isRequested else { return }
            say(
                "\(silent.sorted().joined(separator: ", ")) not heard on the bus within "
                    + "\(Int(Self.listenersTimeout.seconds)) s: the first cues may not be said")
        } catch {
            say("cannot hear the bus's health reports: \(error)")
        }
    }

    /// Where the demo keeps what stopped the day, across its tasks.
    final class FailureBox: Sendable {
        /// What failed, if anything.
        let value = Mutex<String?>(nil)
    }

    /// What stopped the day, for its reader.
    struct Failure: Error {
        /// What failed, and what was last heard.
        var message: String
    }

    /// Starts `session` of `patient`, asking again (every ``startRetryPause``) while the pool's
    /// worker has not joined yet, for at most ``startTimeout`` on ``clock``.
    /// - Parameter send: Sends a request to the coordinator and returns its answer.
    /// - Returns: The coordinator's answer, or a failure naming the session and the last answer
    ///   (or error) heard when the time is up.
    func start(
        _ session: (name: String, analysis: SessionPlan.Analysis), patient: Patient, stop: StopToken,
        send: (ControlRequest) throws -> ControlAnswer
    ) -> Result<ControlAnswer, Failure> {
        let plan: SessionPlan
        do {
            plan = try SessionPlan(
                key: SessionKey(camera: camera, name: session.name),
                exerciseFile: SessionPlan.catalogExercise(exercise.id), analysis: session.analysis,
                patient: patient.reference, pool: Self.pool)
        } catch {
            return .failure(Failure(message: error.description))
        }
        let wait = DemoWait(limit: Self.startTimeout, startedAt: clock.now)
        var last = "no answer from the coordinator"
        while !stop.isRequested, !wait.isOver(at: clock.now) {
            do {
                let answer = try send(ControlRequest(id: ControlClient.newRequestID(), command: .start(plan)))
                guard answer.outcome == .noLiveWorker else { return .success(answer) }
                last = answer.message
            } catch {
                last = "\(error)"
            }
            Thread.sleep(forTimeInterval: Self.startRetryPause.seconds)
        }
        return .failure(Failure(message: "cannot start \(plan.key): \(last)"))
    }

    /// Plays `source` on the camera for ``secondsEach`` on ``clock`` (or until `stop`, or the
    /// camera's failure).
    /// - Returns: The camera's failure, `nil` when it played its time (or was stopped).
    func play(_ source: String, patient: Patient, stop: StopToken, started: () -> Void) -> String? {
        let poses: PoseSource
        let topic: Topic
        do {
            poses = try PoseSource.open(source, loop: true)
            topic = try Topic.pose(camera: camera)
        } catch {
            return "camera \(camera): \(error)"
        }
        // The camera waits for its first subscriber (the worker, through the broker), as
        // `kinesia ingest` does: a pose sent before the subscription reaches a new publisher is
        // dropped by ZeroMQ, and the patient's runs would begin at its second pose.
        var journal = JournalOptions()
        journal.state = state + "/camera-\(patient.reference)"
        let service = IngestService(
            IngestService.Configuration(
                process: BusProcessIdentity(bus: bus, name: "ingest-\(camera)"), topic: topic,
                pace: .recording,
                waitSeconds: 10, source: source, loop: true, journal: journal, environment: [:]),
            source: poses, log: log)
        let cameraStop = StopToken()
        let finished = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let thread = Thread.named("kinesia.demo.camera") {
            do {
                try service.run(until: cameraStop)
            } catch {
                failure.withLock { $0 = "camera \(camera): \(error)" }
            }
            finished.signal()
        }
        thread.start()
        let playing = DemoWait(limit: .seconds(double: secondsEach), startedAt: clock.now)
        started()
        while !playing.isOver(at: clock.now), !stop.isRequested, failure.withLock({ $0 }) == nil {
            Thread.sleep(forTimeInterval: 0.05)
        }
        cameraStop.request()
        finished.wait()
        return failure.withLock { $0 }
    }

    /// Waits until the record holds the ends of the `count` runs stopped, or until `wait` is
    /// over on ``clock`` (``runEndsTimeout`` after the last stop): each is announced once its
    /// session's service has finished its last poses.
    /// - Returns: Whether the record holds them (`false`: the time was up, or `stop`).
    @discardableResult
    func waitForRunEnds(_ count: Int, stop: StopToken, wait: DemoWait) -> Bool {
        while !wait.isOver(at: clock.now), !stop.isRequested {
            let lines = (try? RecordStore(readingOnly: database).runLines()) ?? []
            if lines.count(where: { $0.json.hasPrefix("{\"type\":\"runEnded\"") }) >= count { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }
}
