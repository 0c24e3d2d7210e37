public import KinesiaMotion

/// Decides which pattern to play for each event: a value-type state machine with no I/O, time
/// from the events' pose timestamps.
///
/// One pattern at a time: while one plays (its ``HapticPattern/duration`` in pose time), at
/// most one waits, the most urgent (setup, then form, then progress; a newer one of the same
/// rank replaces it); it is played when the device is free, unless it has waited longer than
/// ``maximumAge``.
///
/// ```swift
/// var planner = HapticPlanner(mapping: try .builtIn())
/// for action in planner.receive(.repCompleted(rep), session: "left", at: 4.2) {
///     if case .play(let pattern, _) = action { try device.play(pattern) }
/// }
/// ```
public struct HapticPlanner: Sendable {
    /// What the planner asks for.
    public enum Action: Hashable, Sendable {
        /// Play this pattern now.
        case play(HapticPattern, HapticTrigger)
        /// This trigger's pattern will not be played, and why.
        case drop(HapticTrigger, DropReason)
    }

    /// Why a pattern was not played.
    public enum DropReason: Hashable, Sendable {
        /// The device was busy and a more urgent (or newer) pattern waits.
        case busy
        /// It waited longer than ``HapticPlanner/maximumAge``.
        case stale
    }

    /// The mapping.
    public let mapping: HapticMapping
    /// The longest a pattern may wait for the device, in seconds.
    public let maximumAge: Double
    /// Until when the current pattern plays.
    public private(set) var busyUntil = -Double.infinity
    private var waiting: (trigger: HapticTrigger, at: Double)?
    private var holding: Set<String> = []

    /// A planner with nothing playing.
    public init(mapping: HapticMapping, maximumAge: Double = 1) {
        self.mapping = mapping
        self.maximumAge = maximumAge
    }

    /// The trigger of an event (and what the planner learns from it: holds).
    mutating func trigger(for event: MotionEvent, session: String) -> HapticTrigger {
        switch event {
        case .repCompleted: return holding.remove(session) != nil ? .holdCompleted : .repCompleted
        case .repRejected: return holding.remove(session) != nil ? .holdRejected : .repRejected
        case .holdStarted:
            holding.insert(session)
            return .holdStarted
        case .formFault: return .formFault
        case .setupChanged(let issues): return issues.isEmpty ? .setupFixed : .setupIssue
        case .visibilityChanged(let visibility):
            return visibility.isVisible ? .visibilityRegained : .visibilityLost
        case .baselineCompleted: return .baselineCompleted
        }
    }

    /// An event at pose time `t`.
    public mutating func receive(_ event: MotionEvent, session: String, at t: Double) -> [Action] {
        var actions = tick(t)
        let trigger = trigger(for: event, session: session)
        guard mapping.pattern(for: trigger) != nil else { return actions }
        if t >= busyUntil, waiting == nil {
            actions += play(trigger, at: t)
            return actions
        }
        if let current = waiting {
            if trigger.priority <= current.trigger.priority {
                actions.append(.drop(current.trigger, .busy))
                waiting = (trigger, t)
            } else {
                actions.append(.drop(trigger, .busy))
            }
        } else {
            waiting = (trigger, t)
        }
        return actions
    }

    /// Time has reached `t`: the waiting pattern plays if the device is free.
    public mutating func tick(_ t: Double) -> [Action] {
        guard let current = waiting, busyUntil <= t else { return [] }
        waiting = nil
        let start = max(busyUntil, current.at)
        guard start - current.at <= maximumAge else { return [.drop(current.trigger, .stale)] }
        return play(current.trigger, at: start)
    }

    private mutating func play(_ trigger: HapticTrigger, at t: Double) -> [Action] {
        guard let pattern = mapping.pattern(for: trigger) else { return [] }
        busyUntil = t + pattern.duration
        return [.play(pattern, trigger)]
    }
}
