import KinesiaBus
import KinesiaClient
import KinesiaControl
import KinesiaJSON
import KinesiaMotion
import KinesiaService
import KinesiaSystem
import KinesiaWire

/// The socket loop behind `kinesia watch` and `kinesia demo`: subscribes, folds every message
/// into a ``WatchState`` and shows it, until a stop, a duration or an idle time.
///
/// - On a terminal: the view of ``WatchRenderer/render(_:now:width:title:)`` (plus the
///   caller's footer), redrawn in place at most ten times a second, and twice a second when
///   nothing changes (uptimes and staleness move on), cut to the terminal's size.
/// - Otherwise: one line per event (``WatchRenderer/eventLine(_:t:_:)``), the progress lines
///   every ``progressInterval`` seconds, and the full view at the end when ``printsFinalView``.
/// - With ``once``: listens that long, then prints the full view once, without redrawing.
///
/// Runs on the calling thread (the libzmq socket stays on it); the clock (``startClock``) is
/// monotonic and starts when the loop of ``run(stop:context:)`` does.
struct LiveView: Sendable {
    /// How the view is shown.
    enum Mode: Sendable {
        /// Redrawn in place.
        case terminal
        /// Appended lines.
        case plain
    }

    var bus: BusAddress
    var prefixes: [TopicPrefix]
    var mode: Mode
    /// The header's first words, given the seconds since the start.
    var title: @Sendable (Double) -> String = { _ in "kinesia watch" }
    /// Lines shown under the view on a terminal.
    var footer: @Sendable () -> [String] = { [] }
    /// Stop after this many seconds.
    var duration: Double?
    /// Stop when nothing arrived for this many seconds.
    var idle: Double?
    /// Listen this many seconds, print the view once and stop.
    var once: Double?
    /// Seconds between progress lines in plain mode.
    var progressInterval = 5.0
    /// Waits (at most 2 s, or ``idle`` or ``duration`` when shorter) for the connection to the
    /// broker before the clock starts, and logs `watching BUS` once the subscriptions are on
    /// their way (`kinesia watch`: a script or a test starts the publishers after that line).
    var announcesConnection = false
    /// Plain mode: print the full view when the loop ends.
    var printsFinalView = true
    /// The width of plain full views.
    var plainWidth = 100
    /// The view's time (its limits, redraws and progress lines), counted from when the loop
    /// starts: the system's clock, or a ``ManualClock`` in tests.
    var startClock: @Sendable () -> ElapsedClock = { ElapsedClock(ContinuousClock()) }

    /// Runs until `stop` is requested or a limit is reached.
    /// - Returns: Everything the view collected.
    /// - Throws: ``ZMQError`` when the bus cannot be reached at all.
    func run(stop: StopToken, context: CommandContext) throws -> WatchState {
        let output = context.standardOutput
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let subscriber = try BusSubscriber(context: zmq, bus: bus, prefixes: prefixes)
        defer { subscriber.close() }
        if announcesConnection {
            // No longer than --idle or --duration would let the whole run last.
            let limit = [2, idle, duration].compactMap { $0 }.min() ?? 2
            if try subscriber.waitForConnection(timeout: .seconds(double: limit)) {
                context.logger.info("watching \(bus)")
            } else {
                context.logger.info("watching \(bus) (no broker yet: waiting for it)")
            }
        }

        let elapsed = startClock()
        func now() -> Double { elapsed.seconds }

        var state = WatchState()
        var lastActivity = 0.0
        var lastDraw = -1.0
        var lastProgress = 0.0
        var dirty = true
        let redraws = mode == .terminal && once == nil
        if redraws { output.write(Terminal.enter) }

        func handle(_ delivery: BusSubscriber.Delivery) {
            let time = now()
            lastActivity = time
            dirty = true
            switch delivery {
            case .flatPose: break  // never: this subscriber decodes poses as messages
            case .message(let message, _):
                let update = state.apply(message, at: time)
                if !redraws, once == nil, case .event(let session, let t, let event) = update {
                    output.write(WatchRenderer.eventLine(session, t: t, event) + "\n")
                    output.flush()
                }
                if !redraws, once == nil, case .run(let session, let record) = update {
                    output.write("\(session): \(record.description)\n")
                    output.flush()
                }
            case .malformed(let topic, let reason):
                state.recordInvalid(
                    "\(topic.isEmpty ? "(no topic)" : topic.quotedExcerpt(limit: Topic.maximumLength)): \(reason)",
                    at: time)
                if !redraws {
                    context.logger.warning(
                        "invalid message on \(topic.quotedExcerpt(limit: Topic.maximumLength)): \(reason)")
                }
            }
        }

        func draw(at time: Double) {
            let size = Terminal.size(environment: context.environment)
            var lines = WatchRenderer.render(state, now: time, width: size.columns, title: title(time))
            let footer = self.footer()
            if !footer.isEmpty { lines += [""] + footer.map { WatchRenderer.fit($0, size.columns) } }
            output.write(WatchRenderer.terminalFrame(Array(lines.prefix(max(1, size.rows - 1)))))
            output.flush()
            lastDraw = time
            dirty = false
        }

        while !stop.isRequested {
            let time = now()
            if let duration, time >= duration { break }
            if let once, time >= once { break }
            if let idle, time - lastActivity >= idle { break }
            if let delivery = try subscriber.receive(timeout: .milliseconds(50)) {
                handle(delivery)
                var drained = 0
                while drained < 10_000, let more = try subscriber.tryReceive() {
                    handle(more)
                    drained += 1
                }
            }
            let after = now()
            if redraws {
                if (dirty && after - lastDraw >= 0.1) || after - lastDraw >= 0.5 { draw(at: after) }
            } else if once == nil, after - lastProgress >= progressInterval {
                lastProgress = after
                for line in WatchRenderer.progressLines(state, now: after) { output.write(line + "\n") }
                output.flush()
            }
        }

        let end = now()
        if redraws {
            draw(at: end)
            output.write(Terminal.leave)
        } else if printsFinalView || once != nil {
            let lines = WatchRenderer.render(state, now: end, width: plainWidth, title: title(end))
            output.write(lines.joined(separator: "\n") + "\n")
        }
        output.flush()
        return state
    }
}
