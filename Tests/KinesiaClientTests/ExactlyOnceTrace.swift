import KinesiaClient
import KinesiaTestSupport
import KinesiaWire

/// One run of ``ExactlyOnceStateMachine`` against a simulated publisher, written down as what
/// went in and what came out: the committed traces (`Fixtures/exactly-once-traces.json`) that
/// the Swift machine regenerates and the Python port (`clients/python`) replays, action for
/// action.
///
/// The simulation, in whole milliseconds: each stream publishes a message every 20 ms; the live
/// path drops some, delivers some twice and delays each by up to 15 ms (so some arrive out of
/// order); the publisher announces its streams every 500 ms (or never: no replay); its replay
/// server answers each request 1 to 20 ms later from what it holds (a retention window, damaged
/// records it goes past, a stream it does not know, a time when it answers nothing). Ticks
/// every 250 ms, until 20 s after the last message, so that every timeout has passed. A
/// consumer that joins late (`joinAt`) gets what was published before only by replay.
struct ExactlyOnceTraceScenario {
    var name: String
    var seed: UInt64
    var start: ReplayStart = .beginning
    /// The last sequence delivered before, per stream index (a cursor to resume from).
    var cursor: [Int: UInt64] = [:]
    var streams = 2
    var messages = 40
    var dropPercent = 15
    var duplicatePercent = 5
    /// The first sequence number the server still holds.
    var retainedFrom: UInt64 = 0
    /// Records the server goes past without sending.
    var damaged: Set<UInt64> = []
    /// Milliseconds during which the server answers nothing.
    var silent: Range<Int>? = nil
    /// The index of a stream the server does not know.
    var unknownStream: Int? = nil
    /// Whether the publisher announces a replay endpoint.
    var announces = true
    /// A stream that moves to another publisher (a pool session taken over): from the first
    /// time (ms) the old one says every 500 ms that its streams are moving, and announces
    /// nothing; from the second the taker announces them.
    var moves: (saidFrom: Int, takenOverAt: Int)? = nil
    var maximumBuffered = 16
    var maximumInFlight = 3
    /// When the consumer starts (ms): what is published before, it gets only by replay.
    var joinAt = 0
    /// Every this many batches the server answers, one is cut short after half its messages,
    /// end included (a client whose queue was full).
    var cutEvery: Int? = nil

    static let endpoint = "ipc:///tmp/bus/replay/worker.sock"
    static let requestTimeout = 3_000
    static let announcementTimeout = 5_000
    static let takeoverTimeout = 30_000

    static let all: [ExactlyOnceTraceScenario] = [
        .init(name: "lossy live path, from the beginning", seed: 1),
        .init(name: "late join from now", seed: 2, start: .now, dropPercent: 25),
        .init(name: "resumed from a cursor", seed: 3, cursor: [0: 11, 1: 4]),
        .init(name: "from a sequence", seed: 4, start: .sequence(7)),
        .init(name: "retention window", seed: 5, retainedFrom: 9),
        .init(name: "damaged records", seed: 6, damaged: [3, 17, 18]),
        .init(name: "server silent for 10 s", seed: 7, silent: 300..<10_300),
        .init(name: "a stream unknown to the server", seed: 8, unknownStream: 1),
        .init(name: "no replay endpoint", seed: 9, announces: false),
        .init(name: "a stream moving to another worker", seed: 13, dropPercent: 25, moves: (500, 9_000)),
        .init(
            name: "small buffer, one batch in flight", seed: 10, dropPercent: 30, maximumBuffered: 4,
            maximumInFlight: 1),
        .init(
            name: "long catch-up", seed: 11, streams: 1, messages: 700, dropPercent: 2, maximumBuffered: 8,
            joinAt: 12_000),
        .init(
            name: "slow consumer: batches cut short", seed: 12, streams: 1, messages: 700, dropPercent: 2,
            maximumBuffered: 300, joinAt: 12_000, cutEvery: 2),
    ]

    func topic(_ index: Int) -> Topic { try! Topic.event(camera: "cam\(index)", session: "left") }
    func stream(_ index: Int) -> StreamID { StreamID(0x0123_4567_89AB_CD00 + UInt64(index)) }
    func key(_ index: Int) -> ReplayStreamKey { ReplayStreamKey(topic: topic(index), stream: stream(index)) }

    /// Runs the scenario: the trace, and the deliveries and losses per stream for the checks.
    func run() -> ExactlyOnceTrace {
        var random = SplitMix64(seed: seed)
        var cursorPositions = ReplayCursor()
        for (index, sequence) in cursor { cursorPositions.delivered[key(index)] = sequence }
        var machine = ExactlyOnceStateMachine<String>(
            start: start, cursor: cursorPositions, accepts: [.kind(.event)],
            maximumBuffered: maximumBuffered, requestTimeout: .milliseconds(Self.requestTimeout),
            announcementTimeout: .milliseconds(Self.announcementTimeout),
            takeoverTimeout: .milliseconds(Self.takeoverTimeout), maximumInFlight: maximumInFlight)
        var trace = ExactlyOnceTrace(scenario: self)
        var published = Array(repeating: UInt64(0), count: streams)
        // (arrival ms, order, stream, sequence) and (answer ms, order, request)
        var arrivals: [(at: Int, order: Int, stream: Int, sequence: UInt64)] = []
        var answers: [(at: Int, order: Int, request: ReplayRequest)] = []
        var order = 0
        // One connection: the server answers requests in the order they came.
        var lastAnswer = 0
        var batchesAnswered = 0
        let lastPublish = 10 + (messages - 1) * 20
        var now = 0

        func perform(_ input: ExactlyOnceTrace.Input, _ actions: [ExactlyOnceStateMachine<String>.Action]) {
            trace.steps.append(.init(now: now, input: input, actions: actions))
            for action in actions {
                guard case .request(_, let request) = action else { continue }
                let sentAt = now
                if let silent, silent.contains(sentAt) { continue }
                order += 1
                lastAnswer = max(lastAnswer, sentAt + Int.random(in: 1...20, using: &random))
                answers.append((lastAnswer, order, request))
            }
        }
        func index(of request: ReplayRequest) -> Int {
            (0..<streams).first { topic($0) == request.topic }!
        }
        func answer(_ request: ReplayRequest) {
            let at = Duration.milliseconds(now)
            let streamIndex = index(of: request)
            let requested = stream(streamIndex)
            let last = published[streamIndex] - 1
            if unknownStream == streamIndex {
                let failure = ReplayFailure(
                    requestID: request.requestID, code: .unknownStream, stream: requested, first: 0, last: 0,
                    message: "unknown stream")
                perform(.failed(failure), machine.replayFailed(failure, now: at))
                return
            }
            if request.from < retainedFrom {
                let failure = ReplayFailure(
                    requestID: request.requestID, code: .notRetained, stream: requested,
                    first: retainedFrom, last: last, message: "not retained")
                perform(.failed(failure), machine.replayFailed(failure, now: at))
                return
            }
            let limit: UInt64 = Swift.min(UInt64(request.limit), UInt64(ReplayFormat.maximumBatch))
            let end: UInt64? = request.from > last ? nil : Swift.min(last, request.from + limit - 1)
            var count: UInt32 = 0
            batchesAnswered += 1
            if let cutEvery, batchesAnswered % cutEvery == 0, let end {
                // Cut after half its messages: the rest and the end never leave the server.
                for sequence in request.from...(request.from + (end - request.from) / 2) {
                    let message = "m\(sequence)"
                    perform(
                        .received(streamIndex, sequence: sequence, message: message, live: false),
                        machine.received(
                            key(streamIndex), sequence: sequence, message: message, live: false, now: at))
                }
                return
            }
            if let end {
                for sequence in request.from...end where !damaged.contains(sequence) {
                    count += 1
                    let message = "m\(sequence)"
                    perform(
                        .received(streamIndex, sequence: sequence, message: message, live: false),
                        machine.received(
                            key(streamIndex), sequence: sequence, message: message, live: false, now: at))
                }
            }
            let next: UInt64 = Swift.min(
                end.map { $0 + 1 } ?? Swift.max(request.from, retainedFrom), last + 1)
            let batchEnd = ReplayBatchEnd(
                requestID: request.requestID, stream: requested, first: retainedFrom, last: last, next: next,
                count: count)
            perform(.ended(batchEnd), machine.replayEnded(batchEnd, now: at))
        }

        while now <= lastPublish + 20_000 {
            // Publish: each message reaches the machine late, twice, or never.
            if now >= 10, (now - 10) % 20 == 0, (now - 10) / 20 < messages {
                for streamIndex in 0..<streams {
                    let sequence = published[streamIndex]
                    published[streamIndex] += 1
                    if Int.random(in: 0..<100, using: &random) < dropPercent { continue }
                    order += 1
                    arrivals.append(
                        (now + Int.random(in: 0...15, using: &random), order, streamIndex, sequence))
                    if Int.random(in: 0..<100, using: &random) < duplicatePercent {
                        order += 1
                        arrivals.append(
                            (now + Int.random(in: 0...40, using: &random), order, streamIndex, sequence))
                    }
                }
            }
            arrivals.sort { ($0.at, $0.order) < ($1.at, $1.order) }
            while let first = arrivals.first, first.at <= now {
                arrivals.removeFirst()
                guard now >= joinAt else { continue }
                let message = "m\(first.sequence)"
                perform(
                    .received(first.stream, sequence: first.sequence, message: message, live: true),
                    machine.received(
                        key(first.stream), sequence: first.sequence, message: message, live: true,
                        now: .milliseconds(now)))
            }
            answers.sort { ($0.at, $0.order) < ($1.at, $1.order) }
            while let first = answers.first, first.at <= now {
                answers.removeFirst()
                answer(first.request)
            }
            if let moves, now >= moves.saidFrom, now < moves.takenOverAt, now % 500 == 0 {
                let moved = (0..<streams).map { MovingStream(topic: topic($0), stream: stream($0)) }
                machine.moving(moved, now: .milliseconds(now))
                trace.steps.append(.init(now: now, input: .moving(moved), actions: []))
            }
            let announcing = announces && (moves.map { now >= $0.takenOverAt } ?? true)
            if announcing, now >= joinAt, now % 500 == 0 {
                let infos = (0..<streams).filter { published[$0] > 0 }.map {
                    ReplayStreamInfo(
                        topic: topic($0), stream: stream($0), first: retainedFrom, last: published[$0] - 1)
                }
                if !infos.isEmpty {
                    let announcement = ReplayAnnouncement(endpoint: Self.endpoint, streams: infos)
                    perform(
                        .announced(announcement), machine.announced(announcement, now: .milliseconds(now)))
                }
            }
            if now >= joinAt, now % 250 == 0 { perform(.tick, machine.tick(now: .milliseconds(now))) }
            now += 5
        }
        trace.counters = machine.counters
        trace.published = published
        return trace
    }
}

/// What a scenario fed the machine and what it answered, step by step.
struct ExactlyOnceTrace {
    enum Input {
        case received(Int, sequence: UInt64, message: String, live: Bool)
        case ended(ReplayBatchEnd)
        case failed(ReplayFailure)
        case announced(ReplayAnnouncement)
        case moving([MovingStream])
        case tick
    }

    struct Step {
        var now: Int
        var input: Input
        var actions: [ExactlyOnceStateMachine<String>.Action]
    }

    var scenario: ExactlyOnceTraceScenario
    var steps: [Step] = []
    var counters: [String: Int] = [:]
    var published: [UInt64] = []

    /// Per stream index: every sequence number delivered or reported lost, in the order the
    /// machine said so (delivered as itself, lost as each number of its range).
    var outcomes: [Int: [(sequence: UInt64, delivered: Bool)]] {
        var result: [Int: [(UInt64, Bool)]] = [:]
        for step in steps {
            for action in step.actions {
                switch action {
                case .deliver(let key, let sequence, _):
                    result[index(key), default: []].append((sequence, true))
                case .lost(let key, let range):
                    for sequence in range { result[index(key), default: []].append((sequence, false)) }
                case .request: break
                }
            }
        }
        return result
    }

    private func index(_ key: ReplayStreamKey) -> Int {
        (0..<scenario.streams).first { scenario.key($0) == key }!
    }

    /// The trace as one JSON object on one line per step (what the fixture holds).
    var json: String {
        var lines: [String] = []
        var config = "{\"name\":\(Self.quoted(scenario.name)),\"start\":"
        switch scenario.start {
        case .beginning: config += "\"beginning\""
        case .now: config += "\"now\""
        case .sequence(let first): config += "\(first)"
        }
        config += ",\"cursor\":["
        config += scenario.cursor.keys.sorted().map { index in
            let key = scenario.key(index)
            return "[\(Self.quoted(key.topic.description)),\"\(key.stream)\",\(scenario.cursor[index]!)]"
        }.joined(separator: ",")
        config +=
            "],\"accepts\":[\"event/\"],\"maximumBuffered\":\(scenario.maximumBuffered)"
            + ",\"requestTimeout\":\(ExactlyOnceTraceScenario.requestTimeout)"
            + ",\"announcementTimeout\":\(ExactlyOnceTraceScenario.announcementTimeout)"
            + ",\"takeoverTimeout\":\(ExactlyOnceTraceScenario.takeoverTimeout)"
            + ",\"maximumRetries\":3,\"maximumInFlight\":\(scenario.maximumInFlight)"
            + ",\"counters\":{"
            + counters.keys.sorted().map { "\(Self.quoted($0)):\(counters[$0]!)" }.joined(separator: ",")
            + "},\"steps\":["
        lines.append(config)
        let body = steps.map { step in
            "[\(step.now),\(inputJSON(step.input)),["
                + step.actions.map(actionJSON).joined(separator: ",") + "]]"
        }
        lines.append(body.joined(separator: ",\n"))
        lines.append("]}")
        return lines.joined(separator: "\n")
    }

    private func inputJSON(_ input: Input) -> String {
        switch input {
        case .received(let index, let sequence, let message, let live):
            let key = scenario.key(index)
            return "[\"received\",\(Self.quoted(key.topic.description)),\"\(key.stream)\",\(sequence),"
                + "\(Self.quoted(message)),\(live)]"
        case .ended(let end):
            return "[\"ended\",\(end.requestID),\(end.first),\(end.last),\(end.next),\(end.count)]"
        case .failed(let failure):
            return "[\"failed\",\(failure.requestID),\"\(failure.code)\",\(failure.first),\(failure.last)]"
        case .announced(let announcement):
            return "[\"announced\",\(Self.quoted(announcement.endpoint)),["
                + announcement.streams.map {
                    "[\(Self.quoted($0.topic.description)),\"\($0.stream)\",\($0.first),\($0.last)]"
                }.joined(separator: ",") + "]]"
        case .moving(let streams):
            return "[\"moving\",["
                + streams.map { "[\(Self.quoted($0.topic.description)),\"\($0.stream)\"]" }.joined(
                    separator: ",")
                + "]]"
        case .tick:
            return "[\"tick\"]"
        }
    }

    private func actionJSON(_ action: ExactlyOnceStateMachine<String>.Action) -> String {
        switch action {
        case .deliver(let key, let sequence, let message):
            "[\"deliver\",\(Self.quoted(key.topic.description)),\"\(key.stream)\",\(sequence),\(Self.quoted(message))]"
        case .request(let endpoint, let request):
            "[\"request\",\(Self.quoted(endpoint)),\(request.requestID),\(Self.quoted(request.topic.description)),"
                + "\"\(request.stream.map(\.description) ?? "")\",\(request.from),\(request.limit)]"
        case .lost(let key, let range):
            "[\"lost\",\(Self.quoted(key.topic.description)),\"\(key.stream)\",\(range.lowerBound),\(range.upperBound)]"
        }
    }

    /// Every string here is ASCII without quotes or backslashes: the topic, the endpoint, `m7`.
    private static func quoted(_ text: String) -> String { "\"" + text + "\"" }
}
