import KinesiaMotion

@testable import KinesiaWorker

/// A test's sessions written as `kinesia worker --session` takes them
/// (`cam0/left=shoulderAbduction:left`, `cam0/analytics=squat:analytics`), for catalog
/// exercises: the command's own parsing, with its usage errors, is tested with the CLI.
extension WorkerSession {
    struct SpecError: Error, CustomStringConvertible {
        var description: String
    }

    init(spec: String) throws {
        let parts = spec.split(separator: "=", maxSplits: 1).map(String.init)
        let target = parts[0].split(separator: "/").map(String.init)
        let analysis = parts.count == 2 ? parts[1].split(separator: ":").map(String.init) : []
        guard target.count == 2, analysis.count == 2, let exercise = Exercise.named(analysis[0]) else {
            throw SpecError(description: "not CAMERA/NAME=EXERCISE:SIDE: \(spec)")
        }
        if analysis[1] == Self.analyticsKeyword {
            self.init(camera: target[0], name: target[1], exercise: exercise, analysis: .analytics)
        } else if let side = BodySide(rawValue: analysis[1]) {
            self.init(camera: target[0], name: target[1], exercise: exercise, side: side)
        } else {
            throw SpecError(description: "no side \(analysis[1]) in \(spec)")
        }
    }
}
