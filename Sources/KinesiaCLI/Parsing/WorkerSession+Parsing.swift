import KinesiaControl
import KinesiaJSON
import KinesiaMotion
import KinesiaWire
public import KinesiaWorker

extension WorkerSession {
    /// Parses `[CAMERA/]NAME=EXERCISE:SIDE` (SIDE `left`, `right` or `analytics`); EXERCISE may be
    /// `@FILE`, an exercise file (``ExerciseFile``) with changed thresholds.
    /// - Parameters:
    ///   - text: The value of `--session`.
    ///   - defaultCamera: `--camera`, used when the value names no camera.
    /// - Throws: ``CLIError/usage(_:)`` naming what is wrong, with the valid exercises or sides.
    public init(parsing text: String, defaultCamera: String?) throws(CLIError) {
        let expected = "expected [CAMERA/]NAME=EXERCISE:SIDE, e.g. cam0/left=shoulderAbduction:left"
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw CLIError.usage("invalid --session \(text.quotedExcerpt()): \(expected)")
        }
        let target = parts[0].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let camera: String
        let name: String
        switch target.count {
        case 1:
            guard let defaultCamera else {
                throw CLIError.usage(
                    "--session \(text.quotedExcerpt()) names no camera: give --camera or write CAMERA/NAME=EXERCISE:SIDE"
                )
            }
            camera = defaultCamera
            name = target[0]
        case 2:
            camera = target[0]
            name = target[1]
        default:
            throw CLIError.usage("invalid --session \(text.quotedExcerpt()): \(expected)")
        }
        for (field, value) in [("camera", camera), ("session name", name)] where !Topic.isValidName(value) {
            throw CLIError.usage(
                "in --session \(text.quotedExcerpt()): " + Topic.invalidNameMessage(value, role: field))
        }
        // The side follows the last ':' (an exercise file's path may hold others).
        guard let colon = parts[1].lastIndex(of: ":") else {
            throw CLIError.usage("invalid --session \(text.quotedExcerpt()): \(expected)")
        }
        let analysis = [String(parts[1][..<colon]), String(parts[1][parts[1].index(after: colon)...])]
        let exercise: Exercise
        if analysis[0].hasPrefix("@") {
            exercise = try ExerciseFile.loadForCommand(String(analysis[0].dropFirst()))
        } else {
            guard !analysis[0].contains(":") else {
                throw CLIError.usage("invalid --session \(text.quotedExcerpt()): \(expected)")
            }
            guard let named = Exercise.named(analysis[0]) else {
                throw CLIError.usage(
                    "unknown exercise \(analysis[0].quotedExcerpt()) in --session \(text.quotedExcerpt()); valid exercises: "
                        + Exercise.catalog.map(\.id).joined(separator: ", "))
            }
            exercise = named
        }
        if analysis[1] == Self.analyticsKeyword {
            self.init(camera: camera, name: name, exercise: exercise, analysis: .analytics)
            return
        }
        guard let side = BodySide(rawValue: analysis[1]) else {
            throw CLIError.usage(
                "unknown side \(analysis[1].quotedExcerpt()) in --session \(text.quotedExcerpt()); valid sides: "
                    + BodySide.allCases.map(\.rawValue).joined(separator: ", ") + " (or "
                    + Self.analyticsKeyword + " for both sides' analytics)")
        }
        self.init(camera: camera, name: name, exercise: exercise, side: side)
    }
}
