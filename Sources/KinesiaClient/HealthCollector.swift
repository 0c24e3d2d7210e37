import KinesiaBus
public import KinesiaWire

/// The site's processes as `kinesia status` sees them: the latest `health/` report of every
/// process heard on a bus within a time.
///
/// ```swift
/// let reports = try HealthCollector.collect(bus: bus, for: .seconds(2)) { stop.isRequested }
/// ```
public enum HealthCollector {
    /// The latest report of every process heard within `duration` (or until `isStopped`), by
    /// the process's name.
    ///
    /// - Parameter clock: What `duration` is timed on.
    /// - Throws: ``ZMQError`` when the bus cannot be reached; a malformed message is not an
    ///   error (the subscriber counts it).
    public static func collect(
        bus: BusAddress, for duration: Duration, clock: some Clock<Duration> = ContinuousClock(),
        isStopped: () -> Bool
    ) throws -> [HealthReport] {
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let subscriber = try BusSubscriber(context: zmq, bus: bus, prefixes: [.kind(.health)])
        defer { subscriber.close() }
        let deadline = clock.now.advanced(by: duration)
        var reports: [String: HealthReport] = [:]
        while !isStopped() {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { break }
            guard let delivery = try subscriber.receive(timeout: min(left, .milliseconds(100))) else {
                continue
            }
            if case .message(let message, _) = delivery, case .health(let report) = message.body {
                reports[message.topic.process ?? report.process] = report
            }
        }
        return Array(reports.values)
    }
}
