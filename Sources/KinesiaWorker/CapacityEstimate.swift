public import KinesiaSystem

/// How many sessions a pool worker has room for, measured rather than guessed: what its
/// sessions cost in processor time, against the box's processors, with no I/O (samples passed
/// in).
///
/// Each report, the worker passes a ``ProcessorUsage`` sample and the sessions it hosted since
/// the last one. The processor time per session per second is smoothed over the samples (an
/// exponential average, a third of the weight on the newest). The capacity is as many sessions
/// as fit in ``headroom`` of the box's online processors at that cost, never more than the
/// ceiling (`--capacity`) and never less than the sessions hosted (a worker past its room has
/// none; it does not shed sessions). Until a cost is known (no session yet, or no interval with
/// the same sessions throughout), the ceiling stands. The load of other processes of the box is
/// not counted: on a box of several workers, each one's room is what the box could give it.
///
/// ```swift
/// var estimate = CapacityEstimate(ceiling: 16, processors: ProcessorUsage.onlineProcessors)
/// estimate.add(ProcessorUsage.sample(), at: now, sessions: hosted.count)
/// report.capacity = estimate.capacity(sessions: hosted.count)
/// ```
public struct CapacityEstimate: Sendable {
    /// The most sessions, whatever the measure (`--capacity`).
    public let ceiling: Int
    /// The box's processors.
    public let processors: Int
    /// The share of the box's processors sessions may take (the rest is for the bus, the
    /// consumers, and bursts): 0.8.
    public let headroom: Double

    private var last: (usage: ProcessorUsage, at: Duration, sessions: Int)?
    /// Processor seconds per second one session costs (`nil`: not measured yet).
    public private(set) var costPerSession: Double?

    /// The shortest interval measured: samples closer to the last one are passed over.
    static let shortestInterval: Duration = .milliseconds(500)

    /// An estimate that knows nothing yet.
    public init(ceiling: Int, processors: Int, headroom: Double = 0.8) {
        self.ceiling = ceiling
        self.processors = max(1, processors)
        self.headroom = headroom
    }

    /// Takes a sample read at `now`, when the worker hosted `sessions` since the last one.
    public mutating func add(_ usage: ProcessorUsage, at now: Duration, sessions: Int) {
        if let last, now - last.at < Self.shortestInterval, sessions == last.sessions { return }
        defer { last = (usage, now, sessions) }
        // A cost is measured over an interval that hosted the same sessions throughout.
        guard let last, now > last.at, sessions > 0, sessions == last.sessions,
            usage.processSeconds >= last.usage.processSeconds
        else { return }
        let cost =
            (usage.processSeconds - last.usage.processSeconds) / (now - last.at).seconds / Double(sessions)
        guard cost.isFinite else { return }
        costPerSession = costPerSession.map { $0 * 2 / 3 + cost / 3 } ?? cost
    }

    /// The sessions it has room for, hosting `sessions`.
    public func capacity(sessions: Int) -> Int {
        guard let costPerSession, costPerSession > 0 else { return ceiling }
        let fit = Int(min(Double(ceiling), (Double(processors) * headroom / costPerSession).rounded(.down)))
        return min(ceiling, max(sessions, fit))
    }
}
