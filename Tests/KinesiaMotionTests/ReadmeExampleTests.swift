import Foundation
import KinesiaMotion
import Testing

/// The README's SDK example, nearly verbatim: it must compile and do what the README says.
@MainActor
struct ReadmeExampleTests {
    @Test func theReadmeExampleMeasuresBothSidesFromOneLoop() async throws {
        let exercise = Exercise.shoulderAbduction
        let left = MotionSession(exercise: exercise, side: .left)
        let right = MotionSession(exercise: exercise, side: .right)

        var said: [String] = []
        let leftEvents = left.events()
        let voice = Task { @MainActor in
            var lines: [String] = []
            for await event in leftEvents {
                switch event {
                case .repCompleted(let rep): lines.append("clean rep, \(Int(rep.peak))°")
                case .repRejected(let rep): lines.append("rejected: \(rep.faults.map(\.rawValue))")
                case .formFault(let fault): lines.append("cue: \(fault.rawValue)")
                case .holdStarted: lines.append("hold it")
                case .visibilityChanged(let visibility): lines.append("visible: \(visibility.isVisible)")
                case .setupChanged(let issues): lines.append("setup: \(issues.map(\.rawValue))")
                case .baselineCompleted(let value): lines.append("baseline \(value)°")
                }
                if lines.count == 2 { break }
            }
            return lines
        }

        let camera = try JSONLinesRecording(
            contentsOf: RecordingFixtures.recording("s2d_demo_walk_mediapipe.jsonl"))
        var returned: [MotionEvent] = []
        for await pose in camera.poses() {
            returned += left.process(pose)
            right.process(pose)
        }
        said = await voice.value

        // A woman walking sideways: no shoulder abduction reps, and a front-view exercise
        // asks her to face the camera.
        let s = left.snapshot
        #expect(s.repCount == 0 && s.rejectedCount == 0)
        #expect(right.snapshot.repCount == 0)
        #expect(s.setupIssues.contains(.faceCamera))
        #expect(returned.count >= 2)
        #expect(said.first == "visible: true")
        #expect(said.count == 2)
    }
}
