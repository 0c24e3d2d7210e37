import Foundation
import KinesiaBus
package import KinesiaClient
package import KinesiaService
package import KinesiaWire

/// What a cue consumer (`kinesia voice`, `kinesia haptic`) does with the messages of its
/// ``CueTarget``: made, used and finished on the consumer's bus thread (``CueConsumer``), so
/// that what it owns (a speech engine, a device) never changes threads.
package protocol CueHandler: AnyObject {
    /// An event of the camera or session followed.
    func receive(_ event: BusEvent) throws
    /// A snapshot: every event up to its time has been received.
    func receive(_ snapshot: BusSnapshot) throws
    /// The sender of `topic` started a new stream (a new run, or a worker started again).
    /// - Returns: Whether the handler dealt with it (and logged it); if not, it is logged as an
    ///   info line (a new stream loses nothing).
    func senderRestarted(_ topic: Topic) -> Bool
    /// A run record of a session followed (`runStarted`, `runEnded`...: `session/` topics).
    func receive(_ run: BusRun)
    /// Called between messages, at least every 100 ms (a device to open again...).
    func idle()
    /// The end: decides what still waits.
    func finish() throws
    /// The handler's counters, reported on `health/<name>/` with the loop's own.
    var counters: [String: Int] { get }
}

/// The loop that `kinesia voice` and `kinesia haptic` share: subscribes to a ``CueTarget`` on
/// a thread of its own (a ``BlockingService`` under a ``ServiceRunner``: libzmq sockets are
/// confined to one thread), feeds each event and snapshot to a ``CueHandler``, logs the gaps
/// and malformed messages, says `connected` once the bus's health reports come through (its
/// subscription is then in place), and publishes the process's health on `health/<name>/`
/// about once a second: the handler's counters with `events` (received), `gaps` (messages
/// missed) and `malformed`. Stops on SIGINT or SIGTERM, lets the handler finish, and sends a
/// last report.
package struct CueConsumer {
    /// What is followed.
    package var target: CueTarget
    /// The role on `health/` (`voice`, `haptic`).
    package var role: String
    /// The process name on `health/<name>/`.
    package var name: String
    /// The bus.
    package var bus: BusAddress
    /// Whether the bus is TCP without keys (`insecure: 1` in every report).
    package var insecure = false

    /// A consumer of `target` on `bus`, named `name` on `health/` with the role `role`.
    package init(target: CueTarget, role: String, name: String, bus: BusAddress, insecure: Bool = false) {
        self.target = target
        self.role = role
        self.name = name
        self.bus = bus
        self.insecure = insecure
    }

    /// The loop's own counters.
    package struct Counters {
        var events = 0
        var malformed = 0
        var missed: UInt64 = 0

        var values: [String: Int] {
            ["events": events, "malformed": malformed, "gaps": Int(clamping: missed)]
        }
    }

    /// What the target names in the log: `camera cam0`, `session cam0/left`, `sessions
    /// cam0/left and cam0/right`.
    package var what: String { target.description }

    /// Runs until SIGINT or SIGTERM, as a service (a ``BlockingService`` under a
    /// ``ServiceRunner``).
    /// - Parameters:
    ///   - logger: The process's logger.
    ///   - beforeForcedExit: Called before a second SIGINT ends the process (flush the outputs).
    ///   - makeHandler: Makes the handler on the bus thread (a failure ends the consumer).
    public func run(
        logger: Logger, beforeForcedExit: @escaping @Sendable () -> Void = {},
        makeHandler: @escaping @Sendable (Logger) throws -> any CueHandler
    ) async throws {
        let consumer = self
        let topics = try target.topics()
        let runner = ServiceRunner(logger: logger, forcedEnd: .exitProcess(beforeExit: beforeForcedExit))
        try await runner.run(
            BlockingService { stop in
                try consumer.consume(topics: topics, stop: stop, log: logger, makeHandler: makeHandler)
            })
    }

    private func consume(
        topics: [TopicPrefix], stop: StopToken, log: Logger, makeHandler: (Logger) throws -> any CueHandler
    ) throws {
        let handler = try makeHandler(log)
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let publisher = try BusPublisher(context: zmq, bus: bus, linger: .seconds(1))
        defer { publisher.close() }
        let subscriber = try BusSubscriber(context: zmq, bus: bus, prefixes: topics)
        defer { subscriber.close() }
        var health = try HealthPublisher(
            process: name, role: role, insecure: insecure, problems: { log.warning($0) })
        var counters = Counters()
        var connected = false
        // Every gap and malformed message is counted; the first ten of a reason are logged, then
        // every thousandth (a hostile sender can make each message one).
        var warnings = WarningThrottle()
        func report() -> [String: Int] {
            handler.counters.merging(counters.values) { own, _ in own }
        }

        func handle(_ delivery: BusSubscriber.Delivery) throws {
            for message in BusMessage.messages(from: delivery) {
                switch message {
                case .event(let event):
                    counters.events += 1
                    try handler.receive(event)
                case .snapshot(let snapshot):
                    try handler.receive(snapshot)
                case .gap(let gap):
                    switch gap {
                    case .missed(_, let count, _): counters.missed.addSaturating(count)
                    case .overflow(let dropped): counters.missed.addSaturating(UInt64(max(0, dropped)))
                    case .senderRestarted(let topic, _):
                        // A new stream (a new run, a process restarted): nothing was lost, so
                        // nothing to warn of (a run's every start would otherwise be a warning).
                        if !handler.senderRestarted(topic), let line = warnings.admit("restart", "\(gap)") {
                            log.info(line)
                        }
                        continue
                    }
                    if let line = warnings.admit("gap", "gap: \(gap)") { log.warning(line) }
                case .malformed(let bad):
                    counters.malformed += 1
                    if let line = warnings.admit("malformed", "malformed message: \(bad)") {
                        log.warning(line)
                    }
                case .health:
                    if !connected {
                        connected = true
                        log.info("connected: the bus's health reports come through")
                    }
                case .run(let run):
                    handler.receive(run)
                case .pose, .analytics:
                    break
                }
            }
        }

        while !stop.isRequested {
            health.publishIfDue(counters: report, via: publisher)
            handler.idle()
            guard let delivery = try subscriber.receive(timeout: .milliseconds(100)) else { continue }
            try handle(delivery)
            while !stop.isRequested, let next = try subscriber.tryReceive() { try handle(next) }
        }
        try handler.finish()
        health.publish(counters: report(), via: publisher)
    }
}
