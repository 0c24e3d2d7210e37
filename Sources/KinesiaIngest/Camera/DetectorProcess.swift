import Foundation
import KinesiaJSON
import KinesiaMotion
import KinesiaSystem

/// The pose detector (`detector/kinesia_detector.py`) running as a child process: its
/// standard output is pose JSON lines, its standard error `stats {...}` lines and messages.
///
/// The child has a process group of its own (Control-C at the terminal reaches the ingest,
/// which then stops it), default signal dispositions, standard input from `/dev/null`, and
/// exits by itself when the ingest goes away (its writes fail, and it watches its parent).
/// ``next(timeout:)`` never blocks longer than asked; when the output ends, the child is
/// reaped and its exit status decides between the end of the source and a failure that says
/// what happened (killed by a signal, a file OpenCV cannot decode, a camera that went away).
final class DetectorProcess {
    /// One step of the detector.
    enum Item {
        /// A pose line (already decoded) or a line that is not a pose.
        case pose(Pose)
        /// A line of standard output that is not a pose: its number and why.
        case malformed(line: Int, reason: String)
        /// Nothing yet.
        case idle
        /// The end of a video.
        case end
        /// The detector failed: the message says what happened and what to do.
        case failed(String)
    }

    /// The command line, for messages.
    let commandLine: String
    /// The child's pid.
    let pid: Int32
    /// The latest `stats` report.
    private(set) var stats = DetectorStats()
    /// The poses read so far.
    private(set) var poses = 0

    private let output: LineReader
    private let errors: LineReader
    private var lastError: String?
    private var messages: [String] = []
    private let child: ChildProcess
    private var pending: Item?
    private let onMessage: (String) -> Void
    /// The time since the detector was started, on the clock given.
    private let elapsed: ElapsedClock
    /// The clock given: what the child's grace before a SIGKILL is timed on. Passed as
    /// `self.clock`: a bare `clock` is also Glibc's `clock()`, and with two candidates the call
    /// does not open the existential for the callee's `some Clock<Duration>`.
    private let clock: any Clock<Duration>

    /// Starts `python script arguments`.
    /// - Parameters:
    ///   - onMessage: Called with the detector's warnings (`warning: ` lines of its standard
    ///     error), on the caller's thread. Its `error: ` line and, without one, its last other
    ///     line (a Python traceback's) make the failure's message; MediaPipe's own logging goes
    ///     nowhere else.
    ///   - clock: What the wait for the first frame is timed on, from now, and the child's
    ///     grace before a SIGKILL (a ``ManualClock`` in tests); the reads' waits are real.
    /// - Throws: ``PoseSourceError/failure(_:)`` when the child cannot be started.
    init(
        _ environment: DetectorEnvironment, arguments: [String], onMessage: @escaping (String) -> Void,
        clock: some Clock<Duration> = ContinuousClock()
    ) throws(PoseSourceError) {
        elapsed = ElapsedClock(clock)
        self.clock = clock
        // Close-on-exec pipes: only the copies the spawn puts on 1 and 2 reach the detector.
        let outputPipe = try Self.makePipe()
        let errorPipe = try Self.makePipe()
        let argv = [environment.python, "-u", environment.script] + arguments
        commandLine = argv.joined(separator: " ")
        var childEnvironment = ProcessInfo.processInfo.environment
        childEnvironment["KINESIA_SUPERVISOR_PID"] = nil
        childEnvironment["PYTHONDONTWRITEBYTECODE"] = "1"
        var spawn = ProcessSpawn(
            executable: environment.python, arguments: argv,
            environment: childEnvironment.map { "\($0.key)=\($0.value)" })
        spawn.standardOutput = .descriptor(outputPipe.writeEnd.rawValue)
        spawn.standardError = .descriptor(errorPipe.writeEnd.rawValue)
        let spawned = Result { () throws(ProcessSpawn.Failure) in
            try ChildProcess(spawn, name: "kinesia-detector")
        }
        // The parent's write ends close here, so the reads end when the detector exits.
        let outputRead = outputPipe.readEnd
        let errorRead = errorPipe.readEnd
        switch spawned {
        case .success(let child):
            self.child = child
            pid = child.pid ?? -1
        case .failure(let failure):
            throw PoseSourceError.failure(
                "cannot start the pose detector (\(environment.python)): \(failure.errno); run scripts/setup")
        }
        output = LineReader(outputRead)
        errors = LineReader(errorRead)
        self.onMessage = onMessage
    }

    deinit {
        stop()
    }

    private static func makePipe() throws(PoseSourceError) -> FileDescriptor.Pipe {
        do {
            return try FileDescriptor.pipe()
        } catch {
            throw PoseSourceError.failure("cannot start the pose detector: pipe: \(error)")
        }
    }

    /// How long ``PoseSource`` waits for a detector's first frame (a camera slow to start, a
    /// model loading on a busy machine).
    static let firstFrameTimeout: Duration = .seconds(60)

    /// Waits until the detector has analysed its first frame (or failed), so that a source it
    /// cannot read is an error at start rather than after the ingest waited for subscribers.
    /// The first item is kept for ``next(timeout:)``; once `timeout` has passed since the
    /// detector was started (on the clock given to it), it is left to go on (a camera slow to
    /// start), as ``FirstFrameWait`` decides.
    /// - Throws: ``PoseSourceError/failure(_:)`` when the detector failed.
    func waitForFirstFrame(timeout: Duration) throws(PoseSourceError) {
        let wait = FirstFrameWait(timeout: timeout, startedAt: .zero)
        while pending == nil, wait.decision(at: elapsed.now) == .read {
            switch next(timeout: .milliseconds(100)) {
            case .idle: continue
            case .failed(let reason): throw PoseSourceError.failure(reason)
            case let item: pending = item
            }
        }
    }

    /// Reads and drops the poses already written; stops at the first other item (kept for
    /// ``next(timeout:)``) or when nothing more is there.
    /// - Returns: How many poses were dropped.
    func discardBuffered() -> Int {
        var dropped = 0
        while true {
            switch next(timeout: .zero) {
            case .pose: dropped += 1
            case .idle: return dropped
            case let item:
                pending = item
                return dropped
            }
        }
    }

    /// The descriptor of its standard output, to wait for with others (see
    /// ``PoseSource/waitableDescriptor``).
    var outputDescriptor: Int32 { output.waitableDescriptor }

    /// The next pose, waiting at most `timeout` for it.
    func next(timeout: Duration) -> Item {
        if let item = pending {
            pending = nil
            return item
        }
        readErrors(timeout: .zero)
        switch output.nextLine(timeout: timeout) {
        case .idle:
            return .idle
        case .line(let number, let text):
            if text.allSatisfy(\.isWhitespace) { return .idle }
            do {
                let pose = try PoseJSONLine.decode(text)
                poses += 1
                return .pose(pose)
            } catch {
                return .malformed(line: number, reason: error.description)
            }
        case .tooLong(let number, let limit):
            return .malformed(line: number, reason: LineReader.tooLongReason(limit: limit))
        case .end:
            return finish()
        }
    }

    /// Stops the child (SIGTERM to its group, SIGKILL after two seconds on the detector's
    /// clock) and reaps it.
    /// - Returns: How it ended.
    @discardableResult
    func stop() -> TerminationStatus? {
        child.stop(grace: Self.stopGrace, clock: self.clock)
    }

    /// How long the detector has to end after a SIGTERM before it is killed.
    static let stopGrace: Duration = .seconds(2)

    /// How long the detector has to exit by itself once its output ended, before it is killed.
    static let exitGrace: Duration = .seconds(5)

    /// The output ended: reads what is left of standard error, reaps the child and says why.
    private func finish() -> Item {
        readErrors(timeout: .seconds(2), untilEnd: true)
        // The output is closed: the child is exiting (or, closing it early, is killed).
        let status = child.waitForExit(killingAfter: Self.exitGrace, clock: self.clock) ?? .exited(-1)
        switch status {
        case .exited(0):
            return .end
        case .exited(let code):
            let reason = lastError ?? "exit status \(code)" + (messages.last.map { ": \($0)" } ?? "")
            return .failed("the pose detector failed after \(poses) frames: \(reason)")
        case .signaled(let signal):
            return .failed(
                "the pose detector (pid \(pid)) was killed by \(signal) after \(poses) frames; "
                    + "start the ingest again (kinesia up restarts it)")
        }
    }

    private func readErrors(timeout: Duration, untilEnd: Bool = false) {
        var wait = timeout
        while true {
            switch errors.nextLine(timeout: wait) {
            case .idle, .end:
                return
            case .tooLong:
                // Not one of the detector's own lines (those are short): kept for a failure message.
                messages.append("(a line of standard error longer than 1 MiB, dropped)")
                if messages.count > 5 { messages.removeFirst() }
                if !untilEnd { wait = .zero }
            case .line(_, let text):
                if text.hasPrefix("stats ") {
                    stats.update(fromLine: text)
                } else if text.hasPrefix("error: ") {
                    lastError = String(text.dropFirst("error: ".count))
                } else if text.hasPrefix("warning: ") {
                    onMessage(String(text.dropFirst("warning: ".count)))
                } else if !text.isEmpty {
                    // MediaPipe's own logging, or a Python traceback: kept for a failure message.
                    messages.append(text)
                    if messages.count > 5 { messages.removeFirst() }
                }
                if !untilEnd { wait = .zero }
            }
        }
    }
}

/// The detector's latest `stats` report: frames in and out, drops, rates and timings.
struct DetectorStats: Hashable, Sendable {
    /// The report's fields, as numbers.
    private(set) var values: [String: Double] = [:]

    /// Reads `stats {...}` (a flat JSON object of numbers, read by the project's strict JSON
    /// reader); a line that is not one is ignored, as are fields that are not numbers.
    mutating func update(fromLine line: String) {
        guard case .object(let object)? = try? JSONParser.parse(line.dropFirst("stats ".count)) else {
            return
        }
        for case (let key, .number(let number)) in object { values[key] = number }
    }

    subscript(_ key: String) -> Double? { values[key] }

    /// The counters the ingest adds to its health reports (integers, as health counters are):
    /// frames read and analysed, frames dropped (a live camera faster than the detector), the
    /// frame rates in and out over the last second, and the detector's milliseconds per frame.
    var healthCounters: [String: Int] {
        guard !values.isEmpty else { return [:] }
        func rounded(_ key: String) -> Int {
            guard let value = values[key], value.isFinite else { return 0 }
            return Int(value.rounded())
        }
        return [
            "framesIn": rounded("framesIn"), "framesAnalysed": rounded("framesOut"),
            "framesDropped": rounded("framesDropped"), "fpsIn": rounded("fpsIn"), "fpsOut": rounded("fpsOut"),
            "detectorMs": rounded("detectorMs"),
        ]
    }

    /// One line for the log at the end: frames, rate, and where each frame's time went.
    var summary: String? {
        guard let frames = values["framesOut"], frames > 0, let wall = values["wallSeconds"], wall > 0 else {
            return nil
        }
        let detector = values["detectorSeconds"] ?? 0
        let decode = values["decodeSeconds"] ?? 0
        let other = values["otherSeconds"] ?? 0
        func ms(_ seconds: Double) -> String { String(format: "%.1f", 1000 * seconds / frames) }
        return "detector: \(Int(frames)) frames in \(String(format: "%.1f", wall)) s "
            + "(\(String(format: "%.1f", frames / wall)) fps), per frame \(ms(detector)) ms detecting, "
            + "\(ms(decode)) ms decoding, \(ms(other)) ms converting, \(ms(max(wall - detector, 0))) ms "
            + "outside the detector in all; \(Int(values["framesDropped"] ?? 0)) frames dropped"
    }
}
