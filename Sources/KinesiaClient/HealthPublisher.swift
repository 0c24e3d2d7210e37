import Foundation
import Glibc
public import KinesiaWire

/// Publishes a process's ``HealthReport`` on `health/<process>/` about once a second.
///
/// Call ``publishIfDue(counters:via:)`` from the process's loop (it publishes at once the
/// first time, then when ``interval`` has passed) and ``publish(counters:via:)`` at the end, so
/// that the last counters are seen.
///
/// ```swift
/// var health = try HealthPublisher(process: "worker-4242", role: "worker")
/// health.publishIfDue(counters: ["poses": poses], via: publisher)
/// ```
public struct HealthPublisher {
    /// The process name, as in the topic.
    public let process: String
    /// The role: `broker`, `ingest`, `worker`, `listen`...
    public let role: String
    /// The topic: `health/<process>/`.
    public let topic: Topic
    /// How often reports go out.
    public let interval: Duration
    /// Reports published so far.
    public private(set) var published = 0

    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private var last: ContinuousClock.Instant?

    /// Prepares the reports of one process.
    /// - Throws: ``TopicError`` when `process` is not a valid topic name.
    public init(process: String, role: String, interval: Duration = .seconds(1)) throws(TopicError) {
        self.process = process
        self.role = role
        self.interval = interval
        topic = try Topic.health(process: process)
        started = clock.now
    }

    /// Seconds since this value was made (the process's start, near enough).
    public var uptime: Double {
        let elapsed = clock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    /// The report with `counters`.
    public func report(counters: [String: Int]) -> HealthReport {
        HealthReport(process: process, role: role, pid: Int(getpid()), uptime: uptime, counters: counters)
    }

    /// Publishes when the interval has passed since the last report (or none was sent).
    /// - Parameter counters: Called only when a report goes out.
    /// - Returns: Whether a report went out.
    @discardableResult
    public mutating func publishIfDue(counters: () -> [String: Int], via publisher: BusPublisher) -> Bool {
        if let last, clock.now - last < interval { return false }
        publish(counters: counters(), via: publisher)
        return true
    }

    /// Publishes a report now (errors are ignored: health is best effort).
    public mutating func publish(counters: [String: Int], via publisher: BusPublisher) {
        last = clock.now
        published += 1
        _ = try? publisher.publish(report(counters: counters), on: topic)
    }
}
