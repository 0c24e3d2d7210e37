import Foundation
import KinesiaMotion

/// One planned rep or hold: its timing and shape, and the fault injected in it.
struct ScriptedRep: Sendable {
    /// The sides that move (one, or both together).
    var sides: [BodySide]
    var isHold: Bool
    /// A hold the patient gives up before its time.
    var isBroken: Bool
    /// When the movement leaves rest.
    var start: Double
    /// Raised-cosine rise from rest to the peak (holds: the way down into the position).
    var rise: Double
    /// Time at the peak (holds: the hold itself).
    var plateau: Double
    /// Raised-cosine return to rest.
    var fall: Double
    var rest: Double
    /// The peak (holds: the level held, before the sway).
    var level: Double
    /// Holds: the phase of the slow sway around the level.
    var swayPhase: Double
    /// The rule broken, if any.
    var fault: FormRule?
    /// When the fault reaches full strength; it stays there for ``faultDuration``.
    var faultStart: Double

    /// Ramp into and out of a fault.
    static let faultRamp = 0.35
    /// How long a fault stays at full strength.
    static let faultDuration = 0.6
    /// Holds: the sway's amplitude.
    static let swayAmplitude = 1.5

    var plateauStart: Double { start + rise }
    var plateauEnd: Double { start + rise + plateau }
    var end: Double { start + rise + plateau + fall }

    /// The intended primary value at `time` (within the rep).
    func value(at time: Double) -> Double {
        let t = time - start
        if t <= 0 { return rest }
        if t < rise { return rest + (level - rest) * (1 - cos(.pi * t / rise)) / 2 }
        if t < rise + plateau {
            guard isHold else { return level }
            let tau = t - rise
            let edge = min(1, tau, plateau - tau)
            let envelope = edge * edge * (3 - 2 * edge)
            return level + Self.swayAmplitude * envelope * sin(2 * .pi * tau / 3.7 + swayPhase)
        }
        let u = t - rise - plateau
        if u < fall { return rest + (level - rest) * (1 + cos(.pi * u / fall)) / 2 }
        return rest
    }

    /// 0 ... 1: how strong the fault is at `time`.
    func faultBlend(at time: Double) -> Double {
        guard fault != nil else { return 0 }
        let ramp = Self.faultRamp
        let t = time - (faultStart - ramp)
        if t <= 0 || t >= 2 * ramp + Self.faultDuration { return 0 }
        if t < ramp { return (1 - cos(.pi * t / ramp)) / 2 }
        if t <= ramp + Self.faultDuration { return 1 }
        let u = t - ramp - Self.faultDuration
        return (1 + cos(.pi * u / ramp)) / 2
    }

    /// When the rising value reaches `level` (after `start`).
    func riseCrossing(_ threshold: Double) -> Double {
        let fraction = min(1, max(0, (threshold - rest) / (level - rest)))
        return start + rise * acos(1 - 2 * fraction) / .pi
    }

    /// When the falling value reaches `level` (after the plateau).
    func fallCrossing(_ threshold: Double) -> Double {
        let fraction = min(1, max(0, (threshold - rest) / (level - rest)))
        return plateauEnd + fall * acos(2 * fraction - 1) / .pi
    }
}

/// A side change in a knee-to-wall lunge: the feet step so that the other leg is in front.
struct StanceChange: Sendable {
    var start: Double
    var duration: Double
    /// The left leg's role after the change (1 front, 0 back).
    var leftRole: Double
}

/// The plan of one block of reps: a quiet start, the reps with their pauses, a quiet end.
struct SimulationScript: Sendable {
    var index: Int
    var start: Double
    var end: Double
    var reps: [ScriptedRep]
    var initialLeftRole: Double
    var stanceChanges: [StanceChange]

    /// The rep under way at `time`, if any (reps are in time order: a binary search).
    func rep(at time: Double) -> ScriptedRep? {
        var low = 0
        var high = reps.count
        while low < high {
            let middle = (low + high) / 2
            if reps[middle].start <= time { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let rep = reps[low - 1]
        return time < rep.end ? rep : nil
    }

    /// The left leg's lunge role at `time`.
    func leftRole(at time: Double) -> Double {
        var role = initialLeftRole
        for change in stanceChanges where time > change.start {
            let t = min(1, (time - change.start) / change.duration)
            let eased = (1 - cos(.pi * t)) / 2
            role = role + (change.leftRole - role) * eased
        }
        return role
    }

    /// Whether a dropout may start at `time`: never in the quiet start, never near a fault
    /// (every fault, with its margins, lies inside its rep).
    func allowsDropout(at time: Double) -> Bool {
        guard time >= start + 1.0 else { return false }
        guard let rep = rep(at: time), rep.fault != nil else { return true }
        let from = rep.faultStart - ScriptedRep.faultRamp - 0.35
        let to = rep.faultStart + ScriptedRep.faultDuration + ScriptedRep.faultRamp + 0.1
        return time < from || time > to
    }
}
