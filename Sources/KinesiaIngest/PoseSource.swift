import Foundation
import KinesiaJSON
public import KinesiaMotion
import KinesiaSimulation
import KinesiaSystem

/// Where poses come from for `kinesia ingest` (and `kinesia analyze`): a JSON Lines recording,
/// an OpenPose folder, standard input (`-`), the simulator (`sim:EXERCISE[,key=value...]`), the
/// pose detector on a video file or a camera (`video:PATH`, `camera:/dev/videoN`), or a camera's
/// pose journal (`journal:PATH[,camera=ID]`, ``JournalPoses``).
///
/// ```swift
/// var source = try PoseSource.open("sim:squat,seed=7", loop: false)
/// while case .pose(let pose) = source.next(timeout: .seconds(1)) { send(pose) }
/// ```
public struct PoseSource {
    /// One step of a source.
    public enum Item {
        /// The next pose.
        case pose(Pose)
        /// A line of standard input that is not a pose: its number and why (the source goes on).
        case malformed(line: Int, reason: String)
        /// Nothing arrived in time (standard input only): ask again.
        case idle
        /// The source is exhausted.
        case end
        /// The pose detector failed (it died, or could not read its video or camera): why, and
        /// what to do.
        case failed(String)
    }

    private enum Storage {
        case poses([Pose], index: Int, offset: Double, loops: Bool)
        case simulation(SimulationStream)
        case standardInput(LineReader)
        case detector(DetectorProcess)
    }

    private var storage: Storage
    /// Whether the source is live (standard input): it is never paced, poses go out as they come.
    public let isLive: Bool
    /// The number of poses when known in advance (a recording, a single simulated block).
    public let count: Int?
    /// How many times a looping recording started over.
    public private(set) var loops = 0

    /// Opens a source.
    /// - Parameters:
    ///   - spec: A file, an OpenPose folder, `-`, or `sim:...`.
    ///   - loop: Start over at the end, timestamps shifted so that they keep increasing (a
    ///     simulation runs on, block after block).
    ///   - openPose: How to read OpenPose folders.
    ///   - camera: How the detector reads `video:` and `camera:` sources.
    ///   - onDetectorMessage: Where the detector's messages go (its warnings and errors).
    /// - Throws: ``PoseSourceError/usage(_:)`` for a bad `sim:` spec, ``PoseSourceError/failure(_:)`` for a
    ///   missing or malformed file, or a detector that cannot start.
    public static func open(
        _ spec: String, loop: Bool, openPose: OpenPoseRecording.Options = OpenPoseRecording.Options(),
        camera: CameraOptions = CameraOptions(), onDetectorMessage: @escaping (String) -> Void = { _ in },
        onWarning: (String) -> Void = { _ in }
    ) throws(PoseSourceError) -> PoseSource {
        if let source = try CameraSource(parsing: spec) {
            try source.checkReadable()
            let environment = try DetectorEnvironment.locate(environment: ProcessInfo.processInfo.environment)
            let detector = try DetectorProcess(
                environment, arguments: source.detectorArguments(camera), onMessage: onDetectorMessage)
            try detector.waitForFirstFrame(timeout: DetectorProcess.firstFrameTimeout)
            return PoseSource(storage: .detector(detector), isLive: source.kind == .camera, count: nil)
        }
        if spec == "-" {
            return PoseSource(storage: .standardInput(LineReader.standardInput()), isLive: true, count: nil)
        }
        if SimulationSpec.isSimulation(spec) {
            let simulator = try simulator(spec)
            let stream = loop ? simulator.endless() : simulator.poses()
            return PoseSource(
                storage: .simulation(stream), isLive: false, count: loop ? nil : simulator.run().poses.count)
        }
        let poses = try load(spec, openPose: openPose, onWarning: onWarning)
        return PoseSource(
            storage: .poses(poses, index: 0, offset: 0, loops: loop), isLive: false, count: poses.count)
    }

    /// Every pose of a finite source (a file, a folder, one simulated block, a video through
    /// the detector).
    /// - Throws: As ``open(_:loop:openPose:camera:onDetectorMessage:)``, or the detector's
    ///   failure; standard input and cameras are usage errors here.
    ///   - onWarning: Where a journal's damaged records are reported (`journal:` sources).
    public static func load(
        _ spec: String, openPose: OpenPoseRecording.Options = OpenPoseRecording.Options(),
        camera: CameraOptions = CameraOptions(), onDetectorMessage: @escaping (String) -> Void = { _ in },
        onWarning: (String) -> Void = { _ in }
    ) throws(PoseSourceError) -> [Pose] {
        if spec == "-" { throw PoseSourceError.usage("standard input (-) is not a recording") }
        if CameraSource.isCamera(spec) {
            if spec.hasPrefix("camera:") {
                throw PoseSourceError.usage("a camera (\(spec)) is not a recording")
            }
            var source = try open(spec, loop: false, camera: camera, onDetectorMessage: onDetectorMessage)
            var poses: [Pose] = []
            while true {
                switch source.next(timeout: .seconds(1)) {
                case .pose(let pose): poses.append(pose)
                case .idle: continue
                case .end: return poses
                case .failed(let reason): throw PoseSourceError.failure(reason)
                case .malformed(let line, let reason):
                    throw PoseSourceError.failure("the pose detector's line \(line) is not a pose: \(reason)")
                }
            }
        }
        if SimulationSpec.isSimulation(spec) {
            return Array(try simulator(spec).poses())
        }
        if JournalPoses.isJournal(spec) {
            let (poses, warning) = try JournalPoses.load(spec)
            if let warning { onWarning(warning) }
            return poses
        }
        do {
            return try Recording.load(URL(fileURLWithPath: spec), openPose: openPose)
        } catch {
            throw PoseSourceError.failure(error.description)
        }
    }

    private static func simulator(_ spec: String) throws(PoseSourceError) -> ExerciseSimulator {
        do {
            return try SimulationSpec(parsing: spec).makeSimulator()
        } catch let error as SimulationSpecError {
            throw PoseSourceError.usage("invalid source \(spec.quotedExcerpt()): \(error)")
        } catch {
            throw PoseSourceError.failure("cannot simulate \(spec.quotedExcerpt()): \(error)")
        }
    }

    /// For a source that waits for its poses (standard input, a detector), the descriptor they
    /// come on: a caller that waits for other things too (replay requests) waits for it with
    /// them, and calls ``next(timeout:)`` with a zero timeout when it is readable. `nil` for a
    /// source whose poses are there at once (a recording, a simulation).
    public var waitableDescriptor: Int32? {
        switch storage {
        case .poses, .simulation: nil
        case .standardInput(let reader): reader.waitableDescriptor
        case .detector(let detector): detector.outputDescriptor
        }
    }

    /// The next item, waiting at most `timeout` for standard input.
    public mutating func next(timeout: Duration) -> Item {
        switch storage {
        case .poses(let poses, let index, var offset, let loops):
            guard !poses.isEmpty else { return .end }
            var index = index
            if index == poses.count {
                guard loops else { return .end }
                offset += Self.loopShift(poses)
                index = 0
                self.loops += 1
            }
            var pose = poses[index]
            if offset != 0 { pose.timestamp += offset }
            storage = .poses(poses, index: index + 1, offset: offset, loops: loops)
            return .pose(pose)
        case .simulation(var stream):
            guard let pose = stream.next() else { return .end }
            storage = .simulation(stream)
            return .pose(pose)
        case .standardInput(let reader):
            switch reader.nextLine(timeout: timeout) {
            case .end: return .end
            case .idle: return .idle
            case .line(let number, let text):
                if text.allSatisfy(\.isWhitespace) { return .idle }
                do {
                    return .pose(try PoseJSONLine.decode(text))
                } catch {
                    return .malformed(line: number, reason: error.description)
                }
            case .tooLong(let number, let limit):
                return .malformed(line: number, reason: LineReader.tooLongReason(limit: limit))
            }
        case .detector(let detector):
            switch detector.next(timeout: timeout) {
            case .pose(let pose): return .pose(pose)
            case .malformed(let line, let reason): return .malformed(line: line, reason: reason)
            case .idle: return .idle
            case .end: return .end
            case .failed(let reason): return .failed(reason)
            }
        }
    }

    /// Drops the poses a live camera's detector has already written (the ingest had nobody to
    /// send them to); a failure or the end stays for ``next(timeout:)``. Other sources: nothing.
    /// - Returns: How many poses were dropped.
    public mutating func discardBufferedLivePoses() -> Int {
        guard isLive, case .detector(let detector) = storage else { return 0 }
        return detector.discardBuffered()
    }

    /// The detector's counters for the health reports (frames in, analysed, dropped, frame
    /// rates, milliseconds per frame); empty for other sources.
    public var detectorCounters: [String: Int] {
        guard case .detector(let detector) = storage else { return [:] }
        return detector.stats.healthCounters
    }

    /// The detector's figures at the end (frame rate, time per frame); `nil` for other sources.
    public var detectorSummary: String? {
        guard case .detector(let detector) = storage else { return nil }
        return detector.stats.summary
    }

    /// How much a loop moves timestamps: the recording's span plus one typical frame interval,
    /// so the first pose of the next loop comes one frame after the last one.
    static func loopShift(_ poses: [Pose]) -> Double {
        guard let first = poses.first?.timestamp, let last = poses.last?.timestamp, first.isFinite,
            last.isFinite
        else { return 1 }
        let span = max(last - first, 0)
        let interval = poses.count > 1 ? span / Double(poses.count - 1) : 1.0 / 30
        return span + (interval > 0 ? interval : 1.0 / 30)
    }
}
