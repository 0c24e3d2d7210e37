import Foundation
import KinesiaTestSupport
import Testing

@testable import KinesiaMotion

/// Invariants of the snapshot and the events on long random sessions: random movements, joints
/// dropping out, left-right swaps, gaps, resets, baselines and bad poses, for every exercise.
struct AnalyzerInvariantTests {
    @Test(arguments: Exercise.catalog)
    func theSnapshotAndTheEventsStayConsistentOnRandomSessions(exercise: Exercise) async {
        await offCooperativePool(.computing) {
            var generator = SplitMix64(seed: 0xC0FFEE &+ UInt64(exercise.id.count))
            var analyzer = MotionAnalyzer(exercise: exercise, side: .right)
            var body = Body(exercise, side: .right, value: 0)
            var time = 0.0
            var value = 0.0
            var target = 0.0
            var speed = 3.0
            var counted = (clean: 0, rejected: 0)
            var judged = 0
            var bestSinceReset: Double?
            var baselineEvents = 0
            for step in 0..<12000 {
                time += generator.next() % 600 == 0 ? generator.unit() * 3 : 1 / 30
                // Alternately rest and move to a random peak, at a random speed.
                // (Holds dwell long at the top: about 33 s on average.)
                let dwell: UInt64 = if case .hold = exercise.kind, target > 5 { 1000 } else { 20 }
                if abs(target - value) < 1, generator.next() % dwell == 0 {
                    let top: Double =
                        if case .hold = exercise.kind { 80 + generator.unit() * 60 } else {
                            generator.unit() * 140
                        }
                    target = target > 5 ? generator.unit() * 5 : top
                }
                value += max(-speed, min(speed, target - value))
                if generator.next() % 90 == 0 { speed = 1 + generator.unit() * 8 }
                body.setPrimary(value, exercise: exercise, side: .right)
                body.trunkLean = generator.next() % 200 == 0 ? 40 : body.trunkLean * 0.9
                var pose = body.pose(at: time)
                switch generator.next() % 40 {
                case 0: pose.points = [:]
                case 1: pose.points[.knee(.right)] = nil
                case 2: pose.points[.elbow(.right)] = pose.points[.elbow(.left)]
                case 3: pose.timestamp = time - 1
                case 4: pose.points[.neck] = CGPoint(x: Double.nan, y: 0)
                default: break
                }
                if step % 4000 == 3900 {
                    analyzer.reset()
                    counted = (0, 0)
                    bestSinceReset = nil
                }
                if step % 1000 == 300 { analyzer.startBaseline(reps: 2) }
                let rejectedBefore = analyzer.rejectedPoses.total
                let events = analyzer.process(pose)
                let accepted = analyzer.rejectedPoses.total == rejectedBefore
                let snapshot = analyzer.snapshot
                for event in events {
                    switch event {
                    case .repCompleted(let rep):
                        counted.clean += 1
                        judged += 1
                        #expect(rep.faults.isEmpty)
                        #expect(rep.end > rep.start)
                    case .repRejected(let rep):
                        counted.rejected += 1
                        judged += 1
                        #expect(!rep.faults.isEmpty)
                    case .baselineCompleted(let value):
                        baselineEvents += 1
                        #expect(snapshot.baseline?.isComplete == true)
                        #expect(snapshot.baseline?.value == value)
                    case .visibilityChanged(let visibility):
                        #expect(visibility.isVisible == visibility.missingJoints.isEmpty)
                    default: break
                    }
                }
                if accepted, let value = snapshot.value {
                    #expect(value.isFinite)
                    bestSinceReset = max(bestSinceReset ?? value, value)
                }
                #expect(snapshot.best == (bestSinceReset ?? 0))
                #expect(snapshot.repCount == counted.clean)
                #expect(snapshot.rejectedCount == counted.rejected)
                #expect(snapshot.isVisible == snapshot.missingJoints.isEmpty)
                if let progress = snapshot.holdProgress { #expect((0...1).contains(progress)) }
                if let confidence = snapshot.confidence { #expect((0...1).contains(confidence)) }
                if let baseline = snapshot.baseline { #expect(baseline.completed <= baseline.target) }
            }
            // The noise (gaps over a second, resets) ends most 30 s holds early.
            if case .hold = exercise.kind { #expect(judged > 0) } else { #expect(judged > 3) }
            #expect(analyzer.rejectedPoses.total > 100)
        }
    }
}
