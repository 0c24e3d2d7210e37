import KinesiaClient
import KinesiaWire
import Testing

/// A process with many streams announces every one of them (issue 19, item 4: a worker with
/// 200 sessions announced the same 64 snapshot streams and no event stream).
struct ReplayAnnouncementPagingTests {
    /// 200 sessions: 200 event streams and 150 snapshot streams, as the worker announces them.
    static let streams: [ReplayStreamInfo] = (0..<200).flatMap { index -> [ReplayStreamInfo] in
        let event = ReplayStreamInfo(
            topic: try! .event(camera: "cam\(index)", session: "left"), stream: StreamID(UInt64(index + 1)),
            first: 0, last: 41)
        guard index < 150 else { return [event] }
        let snapshot = ReplayStreamInfo(
            topic: try! .snapshot(camera: "cam\(index)", session: "left"),
            stream: StreamID(UInt64(index + 1)),
            first: 0, last: 99_999)
        return [event, snapshot]
    }

    static let endpoint = "ipc:///run/kinesia/replay/worker-1.sock"

    @Test func everyStreamOfA200SessionWorkerIsAnnouncedInOneIntervalAndEveryReportFits() throws {
        var health = try HealthPublisher(process: "worker-1", role: "worker")
        health.replay = { ReplayAnnouncement(endpoint: Self.endpoint, streams: Self.streams) }
        let reports = health.reports(counters: ["poses": 1])
        var announced: [ReplayStreamInfo] = []
        for report in reports {
            let json = try report.json()
            #expect(json.count <= HealthReport.maximumJSONSize)
            let read = try HealthReport(json: String(decoding: json, as: UTF8.self))
            #expect(read.counters["poses"] == 1, "every page carries the counters")
            #expect(read.replay?.endpoint == Self.endpoint)
            announced += read.replay?.streams ?? []
        }
        #expect(announced.count == Self.streams.count)
        #expect(Set(Self.streams).subtracting(announced).isEmpty)
    }

    /// What `listen --from beginning` does with the heartbeats: no event stream is reported lost.
    @Test func anExactlyOnceConsumerAsksForEveryEventStreamOfA200SessionWorker() throws {
        var health = try HealthPublisher(process: "worker-1", role: "worker")
        health.replay = { ReplayAnnouncement(endpoint: Self.endpoint, streams: Self.streams) }
        var machine = ExactlyOnceStateMachine<String>(start: .beginning, accepts: [.kind(.event)])
        var asked: Set<ReplayStreamKey> = []
        var lost: Set<ReplayStreamKey> = []
        func perform(_ actions: [ExactlyOnceStateMachine<String>.Action]) {
            for action in actions {
                switch action {
                case .request(_, let request):
                    asked.insert(ReplayStreamKey(topic: request.topic, stream: request.stream!))
                case .lost(let key, _): lost.insert(key)
                case .deliver: break
                }
            }
        }
        for second in 0..<6 {
            let now = Duration.seconds(second)
            for report in health.reports(counters: [:]) {
                let read = try HealthReport(json: String(decoding: try report.json(), as: UTF8.self))
                perform(machine.announced(read.replay!, now: now))
            }
            perform(machine.tick(now: now))
        }
        #expect(asked.count == 200)
        #expect(lost.isEmpty)
    }

    @Test func pagesSplitByCountAndBySizeAndKeepEveryStreamOnce() throws {
        let announcement = ReplayAnnouncement(endpoint: Self.endpoint, streams: Self.streams)
        let pages = announcement.pages()
        #expect(pages.count >= 350 / ReplayAnnouncement.maximumStreams)
        #expect(pages.flatMap(\.streams) == Self.streams)
        for page in pages { #expect(page.streams.count <= ReplayAnnouncement.maximumStreams) }
        #expect(ReplayAnnouncement(endpoint: Self.endpoint, streams: []).pages().count == 1)
        let long = try Topic.event(
            camera: String(repeating: "c", count: 64), session: String(repeating: "s", count: 64))
        let wide = ReplayAnnouncement(
            endpoint: Self.endpoint,
            streams: (1...64).map {
                ReplayStreamInfo(topic: long, stream: StreamID(UInt64($0)), first: 0, last: .max)
            })
        for page in wide.pages() {
            let report = HealthReport(
                process: "w", role: "worker", pid: 1, uptime: 0, counters: [:], replay: page)
            #expect(try report.json().count <= HealthReport.maximumJSONSize)
        }
        #expect(wide.pages().count > 1)
    }

    /// More pages than one interval sends: they rotate, so every stream comes round.
    @Test func pagesBeyondOneIntervalRotate() throws {
        let many = (1...(64 * (HealthPublisher.maximumPagesPerInterval + 3))).map {
            ReplayStreamInfo(
                topic: try! .event(camera: "c\($0)", session: "s"), stream: StreamID(UInt64($0)), first: 0,
                last: 1)
        }
        var health = try HealthPublisher(process: "worker-1", role: "worker")
        health.replay = { ReplayAnnouncement(endpoint: Self.endpoint, streams: many) }
        var seen: Set<ReplayStreamInfo> = []
        for _ in 0..<2 {
            let reports = health.reports(counters: [:])
            #expect(reports.count == HealthPublisher.maximumPagesPerInterval)
            for report in reports { seen.formUnion(report.replay!.streams) }
        }
        #expect(seen.count == many.count)
    }
}
