package import KinesiaClient
package import KinesiaHaptic
package import KinesiaService
package import KinesiaWire

/// The shell of `kinesia haptic`: feeds the events to a ``HapticPlanner`` and gives the
/// patterns it decides to the ``HapticOutput``, counting them for `health/<name>/`.
package final class HapticPlayer: CueHandler {
    private var planner: HapticPlanner
    private let output: HapticOutput
    private let logger: Logger
    private var dropped: [String: Int] = [:]

    package init(mapping: HapticMapping, output: HapticOutput, logger: Logger) {
        planner = HapticPlanner(mapping: mapping)
        self.output = output
        self.logger = logger
    }

    /// The counters of `health/<name>/`: the output's, and the patterns the planner dropped.
    package var counters: [String: Int] {
        output.counters.merging(
            ["stale": dropped["stale", default: 0], "superseded": dropped["superseded", default: 0]]
        ) { own, _ in own }
    }

    package func receive(_ event: BusEvent) {
        perform(planner.receive(event.event, session: event.session, at: event.t))
    }

    package func receive(_ snapshot: BusSnapshot) {
        perform(planner.tick(snapshot.t))
    }

    package func senderRestarted(_ topic: Topic) -> Bool { false }

    package func receive(_ run: BusRun) {}

    package func idle() { output.poll() }

    package func finish() {
        output.drain()
        output.close()
    }

    private func perform(_ actions: [HapticPlanner.Action]) {
        for action in actions {
            switch action {
            case .play(let pattern, let trigger):
                guard output.isReady else {
                    output.countLost()
                    logger.info("\(trigger): not played (no device)")
                    continue
                }
                logger.info("\(trigger): \(pattern.steps.count) steps, \(Int(pattern.duration * 1000)) ms")
                output.enqueue(pattern)
            case .drop(let trigger, let reason):
                let name =
                    switch reason {
                    case .busy: "superseded"
                    case .stale: "stale"
                    }
                dropped[name, default: 0] += 1
                logger.info("\(trigger): not played (\(reason))")
            }
        }
    }
}
