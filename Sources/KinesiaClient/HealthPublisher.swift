import Foundation
import KinesiaSystem
public import KinesiaWire

/// Publishes a process's ``HealthReport`` on `health/<process>/` about once a second.
///
/// Call ``publishIfDue(counters:via:)`` from the process's loop (it publishes at once the
/// first time, then when ``interval`` has passed) and ``publish(counters:via:)`` at the end, so
/// that the last counters are seen.
///
/// Nothing is dropped silently. A report whose JSON would be over the wire's limit (a worker
/// with thousands of sessions) goes out summarised (``HealthReport/summarised(toFit:)``: the
/// details summed into their totals, and `omittedCounters` says how many are left out); a
/// report that cannot go out at all is counted in ``failures`` and the next report carries
/// `healthReportFailures`. The first summary and the first failure are told to `problems`
/// (the commands log them: once, not every second).
///
/// A process serving more replay streams than one report holds sends its announcement in pages
/// (``ReplayAnnouncement/pages(maximumStreams:maximumJSONSize:)``), one report per page, each
/// with the counters: every stream is announced at every interval, up to
/// ``maximumPagesPerInterval`` pages (4,096 streams or more); beyond that the pages rotate, so
/// every stream is still announced, every few intervals.
///
/// ```swift
/// var health = try HealthPublisher(process: "worker-4242", role: "worker", problems: { log.warning($0) })
/// health.publishIfDue(counters: ["poses": poses], via: publisher)
/// ```
public struct HealthPublisher {
    /// What became of one report.
    public enum Outcome: Hashable, Sendable {
        /// The report was queued as it is.
        case sent
        /// A summary was queued: the full report was too large; `omitted` counters are not in it.
        case summarised(omitted: Int)
        /// The publisher refused the report (an XPUB publisher at its high-water mark).
        case notQueued
        /// The report could not be encoded or sent; why.
        case failed(String)
    }

    /// The most reports (replay pages) one interval sends; more pages rotate over the intervals.
    public static let maximumPagesPerInterval = 64

    /// The counter that the reports carry once a report could not go out.
    public static let failuresCounterName = "healthReportFailures"

    /// The process name, as in the topic.
    public let process: String
    /// The role: `broker`, `ingest`, `worker`, `listen`...
    public let role: String
    /// The topic: `health/<process>/`.
    public let topic: Topic
    /// How often reports go out.
    public let interval: Duration
    /// Reports published so far (summaries included, failures not).
    public private(set) var published = 0
    /// Reports that went out summarised because the full report was too large.
    public private(set) var summarised = 0
    /// Reports that could not go out at all.
    public private(set) var failures = 0
    /// Counters every report carries as they are (`insecure: 1` for a process on a TCP bus
    /// without keys), under the counters given to each report.
    public var constantCounters: [String: Int] = [:]

    /// The time since this value was made, on the clock it was given.
    private let elapsed: ElapsedClock
    private var last: Duration?
    private let problems: (@Sendable (String) -> Void)?
    private var toldSummary = false
    private var toldFailure = false
    private var nextPage = 0

    /// Prepares the reports of one process.
    /// - Parameters:
    ///   - process: The process name (`health/<process>/`).
    ///   - role: What the process does.
    ///   - interval: How often reports go out.
    ///   - problems: Told once about the first summarised report and once about the first
    ///     report that could not go out (a command logs it).
    ///   - clock: What the interval and the uptime are read on (a ``ManualClock`` in tests).
    /// - Throws: ``TopicError`` when `process` is not a valid topic name.
    public init(
        process: String, role: String, interval: Duration = .seconds(1),
        problems: (@Sendable (String) -> Void)? = nil, clock: some Clock<Duration> = ContinuousClock()
    ) throws(TopicError) {
        self.process = process
        self.role = role
        self.interval = interval
        self.problems = problems
        topic = try Topic.health(process: process)
        elapsed = ElapsedClock(clock)
    }

    /// The `health/<process>/` publisher of a bus process, with `insecure` required: a process on
    /// an insecure TCP bus (TCP without keys) always carries the constant counter `insecure: 1`,
    /// which `status` and `watch` show.
    /// - Throws: ``TopicError`` when `process` is not a valid topic name.
    public init(
        process: String, role: String, insecure: Bool, problems: (@Sendable (String) -> Void)? = nil,
        clock: some Clock<Duration> = ContinuousClock()
    ) throws(TopicError) {
        try self.init(process: process, role: role, problems: problems, clock: clock)
        if insecure { constantCounters["insecure"] = 1 }
    }

    /// Where the process serves replay, and where its streams stand: read at every report and
    /// sent in its `"replay"` field (the replay heartbeat, ``ReplayAnnouncement``); `nil` for a
    /// process that serves no replay.
    public var replay: (() -> ReplayAnnouncement)?

    /// The streams the process published that go on in another process now (a pool worker's
    /// sessions moved or fenced): sent in every report's `"moving"` field
    /// (``MovingStream``), so that a consumer holding a hole in one waits for the taker.
    public var moving: [MovingStream] = []

    /// Seconds since this value was made (the process's start, near enough).
    public var uptime: Double { elapsed.seconds }

    /// The report with `counters` (and ``failuresCounterName`` once a report failed).
    public func report(counters: [String: Int]) -> HealthReport {
        var counters = counters.merging(constantCounters) { given, _ in given }
        if failures > 0 { counters[Self.failuresCounterName] = failures }
        return HealthReport(
            process: process, role: role, pid: Int(ProcessIdentity.id), uptime: uptime, counters: counters,
            replay: replay?(), moving: moving)
    }

    /// The reports of one interval: one per page of the replay announcement (one report when
    /// the process serves no replay or its streams fit one page), at most
    /// ``maximumPagesPerInterval``; when there are more pages, the next call goes on from the
    /// page after the last one sent.
    public mutating func reports(counters: [String: Int]) -> [HealthReport] {
        let full = report(counters: counters)
        guard let announcement = full.replay else { return [full] }
        let pages = announcement.pages()
        let count = Swift.min(pages.count, Self.maximumPagesPerInterval)
        if nextPage >= pages.count { nextPage = 0 }
        var reports: [HealthReport] = []
        for offset in 0..<count {
            var report = full
            report.replay = pages[(nextPage + offset) % pages.count]
            reports.append(report)
        }
        nextPage = (nextPage + count) % pages.count
        return reports
    }

    /// Whether the interval has passed since the last report (or none was sent).
    public var isDue: Bool { last.map { elapsed.now - $0 >= interval } ?? true }

    /// Publishes when the interval has passed since the last report (or none was sent).
    /// - Parameter counters: Called only when a report goes out.
    /// - Returns: Whether a report went out.
    @discardableResult
    public mutating func publishIfDue(counters: () -> [String: Int], via publisher: BusPublisher) -> Bool {
        guard isDue else { return false }
        publish(counters: counters(), via: publisher)
        return true
    }

    /// Publishes a report now: summarised when too large, counted in ``failures`` when it
    /// cannot go out (health is best effort: a failure never ends the process).
    /// - Returns: What became of the report.
    @discardableResult
    public mutating func publish(counters: [String: Int], via publisher: BusPublisher) -> Outcome {
        // What the broker forwarded since the last report, read and forgotten (a publisher that
        // watches for its first subscriptions keeps none).
        publisher.discardSubscriptions()
        last = elapsed.now
        var worst: Outcome = .sent
        for report in reports(counters: counters) {
            let outcome = publish(report, via: publisher, counters: counters.count)
            if case .sent = worst { worst = outcome }
        }
        return worst
    }

    private mutating func publish(_ full: HealthReport, via publisher: BusPublisher, counters: Int) -> Outcome
    {
        let outcome: Outcome
        do {
            let (report, omitted) = try full.summarised()
            if try publisher.publish(report, on: topic) {
                outcome = omitted > 0 ? .summarised(omitted: omitted) : .sent
            } else {
                outcome = .notQueued
            }
        } catch {
            outcome = .failed(String(describing: error))
        }
        switch outcome {
        case .sent:
            published += 1
        case .summarised(let omitted):
            published += 1
            summarised += 1
            if !toldSummary {
                toldSummary = true
                problems?(
                    "the health report of \(counters) counters is over "
                        + "\(HealthReport.maximumJSONSize) bytes: sending a summary (\(omitted) counters "
                        + "left out, details summed into their totals)")
            }
        case .notQueued, .failed:
            failures += 1
            if !toldFailure {
                toldFailure = true
                let reason =
                    if case .failed(let why) = outcome { why } else { "the publisher's queue is full" }
                problems?(
                    "a health report could not be sent (\(reason)); counted in \(Self.failuresCounterName)")
            }
        }
        return outcome
    }
}
