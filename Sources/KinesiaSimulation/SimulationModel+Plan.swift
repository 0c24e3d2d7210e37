import Foundation
import KinesiaMotion

extension SimulationModel {
    /// The quiet start of a block: long enough to arm the session and settle visibility.
    static let quietStart = 1.3

    /// Plans block `block` of reps, starting at `start`.
    ///
    /// Every block has the same shape (a quiet start, ``SimulationOptions/reps`` reps or holds
    /// per moving side, a pause after each); its durations, peaks and faults come from the
    /// block's own seeded stream, so block 0 is the same whether or not more blocks follow.
    func plan(block: Int, start: Double) -> SimulationScript {
        var random = random(.plan, block: block)
        let count = max(1, options.reps)
        var groups: [[BodySide]] = []
        for _ in 0..<count {
            switch sides {
            case .left: groups.append([.left])
            case .right: groups.append([.right])
            case .alternating: groups += [[.left], [.right]]
            case .together: groups.append([.left, .right])
            }
        }

        // Which reps break a rule, and which one.
        var faults = [FormRule?](repeating: nil, count: groups.count)
        let rules = motion.exercise.formRules
        // A fault needs room: holds shorter than 5 s get none.
        let room = motion.hold.map { $0.seconds >= 5 } ?? true
        if !rules.isEmpty, room {
            let rate = min(1, max(0, options.faultRate))
            let faulted = Int((rate * Double(groups.count)).rounded())
            var order = Array(groups.indices)
            for index in order.indices.reversed() where index > 0 {
                order.swapAt(index, random.integer(in: 0...index))
            }
            for index in order.prefix(faulted) {
                faults[index] = rules[random.integer(in: 0...(rules.count - 1))]
            }
        }
        // Holds: one shorter hold, given up, somewhere among the others.
        var brokenIndex: Int?
        if motion.isHold, options.brokenHold {
            brokenIndex = random.integer(in: 0...groups.count)
        }

        let lunge = motion.body == .ankleDorsiflexion && sides == .alternating
        var script = SimulationScript(
            index: block, start: start, end: start, reps: [],
            initialLeftRole: sides == .left || (lunge && block == 0) ? 1 : sides == .together ? 0.5 : 0,
            stanceChanges: [])
        var leftRole = script.initialLeftRole
        var time = start + Self.quietStart
        var planned: [(sides: [BodySide], fault: FormRule?, broken: Bool)] = zip(groups, faults).map {
            ($0, $1, false)
        }
        if let brokenIndex, let first = groups.first {
            planned.insert((first, nil, true), at: brokenIndex)
        }

        for (index, item) in planned.enumerated() {
            // Lunge: step so that the moving leg is in front.
            if lunge, let side = item.sides.first {
                let role: Double = side == .left ? 1 : 0
                if role != leftRole {
                    let from = index == 0 ? start + 0.1 : time - 1.4
                    script.stanceChanges.append(StanceChange(start: from, duration: 0.8, leftRole: role))
                    leftRole = role
                }
            }
            var rep = ScriptedRep(
                sides: item.sides, isHold: motion.isHold, isBroken: item.broken, start: time, rise: 0,
                plateau: 0, fall: 0, rest: motion.rest, level: random.uniform(in: motion.peakRange),
                swayPhase: random.uniform(in: 0...(2 * .pi)), fault: item.fault, faultStart: 0)
            let pause: Double
            if let hold = motion.hold {
                rep.rise = random.uniform(in: 1.8...2.4)
                rep.plateau =
                    item.broken
                    ? max(2.5, hold.seconds * random.uniform(in: 0.25...0.4))
                    : hold.seconds + random.uniform(in: 2.0...3.0)
                rep.fall = random.uniform(in: 1.6...2.2)
                pause = random.uniform(in: 2.0...3.0)
                // A fault well inside the hold, after it started and before it completes.
                let latest = max(1.0, hold.seconds - 3)
                rep.faultStart = rep.plateauStart + random.uniform(in: 1.0...latest)
            } else {
                rep.rise = random.uniform(in: 0.8...1.3)
                rep.plateau =
                    item.fault == nil ? random.uniform(in: 0.35...0.6) : random.uniform(in: 0.75...0.95)
                rep.fall = random.uniform(in: 0.8...1.3)
                pause = lunge ? random.uniform(in: 1.7...2.1) : random.uniform(in: 0.9...1.5)
                // Full strength from the top of the rise, for the whole fault duration.
                rep.faultStart = rep.plateauStart + 0.05
            }
            script.reps.append(rep)
            time = rep.end + pause
        }
        script.end = time
        return script
    }

    /// What `script` claims: every rep and hold per side, with its expected outcome.
    func truth(of script: SimulationScript) -> [SimulatedRep] {
        var reps: [SimulatedRep] = []
        for rep in script.reps {
            var start: Double
            var end: Double
            var peak = rep.level
            if let hold = motion.hold {
                start = rep.riseCrossing(hold.threshold)
                if rep.isBroken {
                    let breakLevel = hold.threshold - motion.exercise.sessionRules.holdBreakMargin
                    end = rep.fallCrossing(breakLevel) + motion.exercise.sessionRules.holdBreakTime
                } else {
                    end = start + hold.seconds
                }
                // The highest value of the sway, sampled finely.
                peak =
                    stride(from: rep.plateauStart, through: rep.plateauEnd, by: 0.01)
                    .map { rep.value(at: $0) }.max() ?? rep.level
            } else if let levels = motion.repLevels {
                start = rep.riseCrossing(levels.start)
                end = rep.fallCrossing(levels.end)
            } else {
                start = rep.start
                end = rep.end
            }
            let faults = rep.fault.map { [$0.fault] } ?? []
            let times =
                rep.fault == nil ? [] : [[rep.faultStart, rep.faultStart + ScriptedRep.faultDuration]]
            let outcome: SimulatedRep.Outcome =
                rep.isBroken ? .notCounted : faults.isEmpty ? .clean : .rejected
            for side in rep.sides {
                reps.append(
                    SimulatedRep(
                        side: side, isHold: rep.isHold, start: start, end: end, peak: peak, faults: faults,
                        faultTimes: times, outcome: outcome))
            }
        }
        return reps
    }
}
