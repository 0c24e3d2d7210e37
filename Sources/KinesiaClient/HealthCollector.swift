import KinesiaBus
public import KinesiaSystem
public import KinesiaWire

/// The site's processes as `kinesia status` sees them: the latest `health/` report of every
/// process heard on a bus within a time.
///
/// ```swift
/// let reports = try HealthCollector.collect(bus: bus, for: .seconds(2)) { stop.isRequested }
/// let silent = try HealthCollector.waitForReports(from: ["voice"], bus: bus, within: .seconds(30)) { false }
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
        var reports: [String: HealthReport] = [:]
        try listen(bus: bus, for: duration, elapsed: ElapsedClock(clock), isStopped: isStopped) {
            name, report in
            reports[name] = report
            return false
        }
        return Array(reports.values)
    }

    /// Waits until each of the processes `names` has been heard on the bus (a `health/` report
    /// of theirs came through the broker: they are connected to it), for at most `limit` (or
    /// until `isStopped`).
    ///
    /// - Parameters:
    ///   - names: The processes' names (their `health/<name>/` topics).
    ///   - bus: The bus.
    ///   - limit: The longest wait.
    ///   - elapsed: What `limit` is timed on.
    ///   - isStopped: Asked at least every 100 ms; `true` ends the wait.
    /// - Returns: The names not heard from (empty: every one was).
    /// - Throws: ``ZMQError`` when the bus cannot be reached.
    public static func waitForReports(
        from names: Set<String>, bus: BusAddress, within limit: Duration,
        elapsed: ElapsedClock = ElapsedClock(ContinuousClock()), isStopped: () -> Bool
    ) throws -> Set<String> {
        var silent = names
        guard !silent.isEmpty else { return silent }
        try listen(bus: bus, for: limit, elapsed: elapsed, isStopped: isStopped) { name, _ in
            silent.remove(name)
            return silent.isEmpty
        }
        return silent
    }

    /// Hands each report heard within `duration` to `heard` (with its process's name) until it
    /// returns `true`, `isStopped` does, or the time is up.
    private static func listen(
        bus: BusAddress, for duration: Duration, elapsed: ElapsedClock, isStopped: () -> Bool,
        heard: (String, HealthReport) -> Bool
    ) throws {
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let subscriber = try BusSubscriber(context: zmq, bus: bus, prefixes: [.kind(.health)])
        defer { subscriber.close() }
        let deadline = elapsed.now + duration
        while !isStopped() {
            let left = deadline - elapsed.now
            guard left > .zero else { return }
            guard let delivery = try subscriber.receive(timeout: min(left, .milliseconds(100))) else {
                continue
            }
            if case .message(let message, _) = delivery, case .health(let report) = message.body,
                heard(message.topic.process ?? report.process, report)
            {
                return
            }
        }
    }
}
