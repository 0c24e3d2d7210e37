import Foundation
import KinesiaBus
public import KinesiaClient
import KinesiaJSON
public import KinesiaService
import KinesiaSystem
public import KinesiaWire

/// The long-running part of `kinesia listen`: prints the bus's messages, as they come (a SUB of
/// the given prefixes) or exactly once and in order per session (``ExactlyOnceSubscriber``),
/// until `count` messages, `idle` without one, or the stop.
///
/// Gaps, sender restarts, losses and malformed messages are warned about on the logger (each
/// counted; the first ten of a reason shown, then every thousandth), never fatal. The idle time
/// is measured on the clock given (a ``ManualClock`` in tests); the sockets' waits are real.
///
/// ```swift
/// let service = ListenService(
///     configuration: .init(bus: bus, mode: .live(prefixes: ["event/"]), format: .json),
///     logger: log, output: FileDescriptorSink.standardOutput)
/// try service.run(until: stop)
/// ```
public struct ListenService<C: Clock<Duration>>: Sendable {
    /// What is listened to.
    public enum Mode: Sendable {
        /// Every message under these prefixes (empty: everything), as it comes.
        case live(prefixes: [String])
        /// The events or snapshots under these prefixes, exactly once, from `start`.
        case exactlyOnce(topics: [TopicPrefix], start: ReplayStart, from: String)
    }

    /// What `kinesia listen` was asked for.
    public struct Configuration: Sendable {
        /// The bus.
        public var bus: BusAddress
        /// Live or exactly once.
        public var mode: Mode
        /// How messages are printed.
        public var format: ListenLine.Format
        /// Stop after this many messages.
        public var count: Int?
        /// Stop after this long with nothing received.
        public var idle: Duration?

        /// A configuration.
        public init(
            bus: BusAddress, mode: Mode, format: ListenLine.Format = .text, count: Int? = nil,
            idle: Duration? = nil
        ) {
            self.bus = bus
            self.mode = mode
            self.format = format
            self.count = count
            self.idle = idle
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private let logger: Logger
    private let output: any TextSink
    private let clock: C

    /// A service printing to `output`, logging on `logger`, timing `idle` on `clock`.
    public init(configuration: Configuration, logger: Logger, output: any TextSink, clock: C) {
        self.configuration = configuration
        self.logger = logger
        self.output = output
        self.clock = clock
    }

    /// Prints messages until `count`, `idle` or `stop`.
    ///
    /// - Throws: ``ListenServiceError/bus(_:_:)`` when the bus fails.
    public func run(until stop: StopToken) throws(ListenServiceError) {
        let bus = configuration.bus.description
        try ListenServiceError.catching({ (error: ZMQError) in .bus(bus, error) }) { () throws(ZMQError) in
            switch configuration.mode {
            case .live(let prefixes): try listen(prefixes: prefixes, stop: stop)
            case .exactlyOnce(let topics, let start, let from):
                try listenExactlyOnce(topics: topics, start: start, from: from, stop: stop)
            }
        }
    }

    /// Whether the loop ends now: `count` printed, or `idle` since the last message.
    private func isDone(printed: Int, lastReceived: Duration, now: Duration) -> Bool {
        if let count = configuration.count, printed >= count { return true }
        if let idle = configuration.idle, now - lastReceived >= idle {
            logger.info("nothing for \(JSONWriter.compactNumber(idle.seconds)) s: exiting")
            return true
        }
        return false
    }

    /// Receives until `count`, `idle` or the stop: `handle` prints a delivery and says whether
    /// it counts as received (for `idle`) and as printed (for `count`).
    private func receiveUntilDone<Delivery>(
        _ stop: StopToken, receive: () throws(ZMQError) -> Delivery?,
        handle: (Delivery) -> (received: Bool, printed: Bool)
    ) throws(ZMQError) {
        let elapsed = ElapsedClock(clock)
        var lastReceived = elapsed.now
        var printed = 0
        while !stop.isRequested, !isDone(printed: printed, lastReceived: lastReceived, now: elapsed.now) {
            guard let delivery = try receive() else { continue }
            let outcome = handle(delivery)
            if outcome.received { lastReceived = elapsed.now }
            if outcome.printed { printed += 1 }
        }
        output.flush()
    }

    /// Prints one message's line.
    private func write(_ message: WireMessage) {
        output.write(ListenLine.line(message, format: configuration.format) + "\n")
        output.flush()
    }

    private func listen(prefixes: [String], stop: StopToken) throws(ZMQError) {
        let bus = configuration.bus
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let subscriber = try BusSubscriber(context: zmq, bus: bus)
        defer { subscriber.close() }
        let prefixes = prefixes.isEmpty ? [""] : prefixes
        for prefix in prefixes {
            if !prefix.isEmpty, !prefix.hasSuffix("/") {
                logger.warning(
                    "prefix \(prefix.quotedExcerpt()) does not end with '/': it also matches longer names")
            }
            try subscriber.subscribe(text: prefix)
        }
        let shown = prefixes.map { $0.isEmpty ? "everything" : $0 }.joined(separator: ", ")
        if try subscriber.waitForConnection(timeout: .seconds(2)) {
            logger.info("listening to \(shown) on \(bus)")
        } else {
            logger.info("listening to \(shown) on \(bus) (no broker yet: waiting for it)")
        }

        var warnings = WarningThrottle()
        try receiveUntilDone(
            stop, receive: { () throws(ZMQError) in try subscriber.receive(timeout: .milliseconds(100)) }
        ) {
            delivery in
            switch delivery {
            case .flatPose:
                return (received: true, printed: false)  // never: this subscriber decodes poses as messages
            case .malformed(let topic, let reason):
                // Every one is counted; the first ten of a reason are shown, then every thousandth.
                let seen = subscriber.decodeErrors[reason.code, default: 0]
                if seen <= 10 || seen % 1000 == 0 {
                    logger.warning(
                        "malformed message on \(topic.quotedExcerpt(limit: Topic.maximumLength)): \(reason) (\(seen) of this kind so far)"
                    )
                }
                return (received: true, printed: false)
            case .message(let message, let result):
                switch result {
                case .gap(let missed):
                    if let line = warnings.admit(
                        "gap",
                        "\(message.topic): \(missed) messages missing before #\(message.header.sequence)")
                    {
                        logger.warning(line)
                    }
                case .newStream(restart: true, _):
                    logger.notice(
                        "\(message.topic): the sender restarted (stream \(message.header.streamID))")
                case .outOfOrder:
                    logger.notice("\(message.topic): #\(message.header.sequence) arrived late")
                default: break
                }
                write(message)
                return (received: true, printed: true)
            }
        }
        if warnings.hidden > 0 {
            logger.warning("warnings given: \(warnings.summary) (\(warnings.hidden) not shown)")
        }
        if subscriber.decodeErrorCount > 0 {
            logger.warning(
                "\(subscriber.decodeErrorCount) malformed messages: "
                    + subscriber.decodeErrors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                    .joined(separator: " "))
        }
    }

    private func listenExactlyOnce(topics: [TopicPrefix], start: ReplayStart, from: String, stop: StopToken)
        throws(ZMQError)
    {
        let bus = configuration.bus
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let subscriber = try ExactlyOnceSubscriber(
            context: zmq, bus: bus, topics: topics, from: start, clock: clock)
        defer { subscriber.close() }
        logger.info(
            "listening to \(topics.map(\.string).joined(separator: ", ")) exactly once from \(from) on \(bus)"
        )
        // A hostile or broken sender can make every delivery a warning: each is counted, the
        // first ten of a reason are shown, then every thousandth.
        var warnings = WarningThrottle()
        try receiveUntilDone(
            stop, receive: { () throws(ZMQError) in try subscriber.receive(timeout: .milliseconds(100)) }
        ) {
            delivery in
            for line in ListenLine.warnings(for: delivery, into: &warnings) { logger.warning(line) }
            switch delivery {
            case .message(let message), .health(let message):
                write(message)
                return (received: true, printed: true)
            case .lost, .malformed:
                return (received: false, printed: false)  // warned above
            }
        }
        let counters = subscriber.machine.counters
        if !counters.isEmpty {
            logger.info(
                counters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
        if !warnings.counts.isEmpty {
            logger.info("warnings given: \(warnings.summary) (\(warnings.hidden) not shown)")
        }
    }
}

extension ListenService where C == ContinuousClock {
    /// A service timing `idle` on the system's clock.
    public init(configuration: Configuration, logger: Logger, output: any TextSink) {
        self.init(configuration: configuration, logger: logger, output: output, clock: ContinuousClock())
    }
}
