import Foundation
import KinesiaTestSupport
import Testing

/// `kinesia web` on a running topology of real processes, asked by curl as an application
/// would: the sessions' counts equal `kinesia analyze`'s, the metrics name every process, and
/// nothing is answered without a token.
@Suite(.serialized, .tags(.process))
struct WebIntegrationTests {
    static let source = "sim:shoulderAbduction,seed=11,reps=4"

    /// Reads a metrics text with `prometheus_client`'s parser and prints, per sample, its
    /// family, type, sample name and (the value for session gauges, the role and process for
    /// the others).
    static let readMetrics = """
        import sys
        from prometheus_client.parser import text_string_to_metric_families
        for family in text_string_to_metric_families(open(sys.argv[1]).read()):
            for sample in family.samples:
                if 'camera' in sample.labels:
                    print(family.name, family.type, sample.name, sample.value, sample.labels['camera'], sample.labels['session'])
                else:
                    print(family.name, family.type, sample.name, sample.labels['role'], sample.labels['process'])
        """

    /// curl's status line, headers and body.
    static func curl(_ arguments: [String]) async throws -> String {
        try await Offload.run(
            "/usr/bin/curl", ["-s", "-S", "-i", "--max-time", "20"] + arguments, environment: [:]
        )
        .output
    }

    /// The body of a curl output (after the blank line).
    static func body(_ output: String) -> String {
        output.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
    }

    @Test func anApplicationReadsTheSessionsCountsAndTheMetricsWithItsToken() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = directory.appendingPathComponent("bus").path
        let tokens = directory.appendingPathComponent("tokens").path
        let made = try await ConsumerTestPaths.run([
            "web", "token", "new", "app", "--role", "viewer", "--tokens", tokens,
        ])
        #expect(made.status == 0, "\(made.error)")
        let token = try #require(made.output.split(separator: "\n").last.map(String.init))
        #expect(token.hasPrefix("kw1_"))

        let broker = try KinesiaProcess(
            "broker", ["broker", "--bus", bus], directory: directory.path, logLevel: "warning")
        try await Task.sleep(for: .milliseconds(300))
        let worker = try KinesiaProcess(
            "worker",
            [
                "worker", "--bus", bus, "--name", "worker-1", "--camera", "cam0", "--session",
                "left=shoulderAbduction:left",
            ],
            directory: directory.path, logLevel: "warning")
        let web = try KinesiaProcess(
            "web", ["web", "--bus", bus, "--name", "web", "--listen", "127.0.0.1:0", "--tokens", tokens],
            directory: directory.path)
        let processes = [broker, worker, web]
        defer { for process in processes where process.isRunning { process.signal(SIGKILL) } }
        let port = try #require(await web.webPort(), "\(web.diagnostics)")
        let base = "http://127.0.0.1:\(port)"

        let ingest = try KinesiaProcess(
            "ingest", ["ingest", "--bus", bus, "--camera", "cam0", "--source", Self.source, "--pace", "max"],
            directory: directory.path, logLevel: "warning")
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        let expected = try await ConsumerTestPaths.analyze(
            Self.source, exercise: "shoulderAbduction", side: "left")
        #expect(expected.clean + expected.rejected >= 3)

        // The session's counts, as the worker's last snapshot has them, equal analyze's.
        var sessions = ""
        let counted = await eventually(timeout: .seconds(30)) {
            sessions =
                (try? await Self.curl(["-H", "Authorization: Bearer \(token)", base + "/api/v1/sessions"]))
                ?? ""
            return Self.body(sessions).contains(
                "\"repCount\":\(expected.clean),\"rejectedCount\":\(expected.rejected)")
        }
        #expect(counted, "\(sessions)\n\(web.diagnostics)")
        #expect(sessions.hasPrefix("HTTP/1.1 200 OK"))
        #expect(Self.body(sessions).hasPrefix("{\"sessions\":[{\"camera\":\"cam0\",\"name\":\"left\","))

        // Without a token, or with another: 401, and nothing of the sessions.
        for arguments in [
            [base + "/api/v1/sessions"], ["-H", "Authorization: Bearer kw1_0", base + "/metrics"],
        ] {
            let refused = try await Self.curl(arguments)
            #expect(refused.hasPrefix("HTTP/1.1 401"), "\(refused)")
            #expect(!refused.contains("repCount"))
        }

        // The metrics: the session's reps, and every process of the site by name and role.
        var metrics = ""
        let reported = await eventually(timeout: .seconds(60)) {
            metrics = Self.body(
                (try? await Self.curl(["-H", "Authorization: Bearer \(token)", base + "/metrics"])) ?? "")
            return metrics.contains("{process=\"broker\",role=\"broker\"}")
                && metrics.contains("{process=\"worker-1\",role=\"worker\"}")
                && metrics.contains("kinesia_unauthorized_total{process=\"web\",role=\"web\"} 2")
        }
        #expect(reported, "\(metrics)")
        #expect(
            metrics.contains("kinesia_session_reps{camera=\"cam0\",session=\"left\"} \(expected.clean)\n"))
        #expect(metrics.contains("# TYPE kinesia_poses_total counter"))
        // As a parser no one here wrote reads it: Prometheus's own Python client.
        let scratch = try ScratchDirectory("web-metrics")
        try Data(metrics.utf8).write(to: URL(fileURLWithPath: scratch.path("metrics.txt")))
        let (parsed, families) = try await Offload.run(
            try PackagePaths.python(), ["-c", Self.readMetrics, scratch.path("metrics.txt")], environment: [:]
        )
        #expect(parsed == 0, "\(families)")
        let lines = Set(families.split(separator: "\n").map(String.init))
        #expect(lines.contains("kinesia_poses counter kinesia_poses_total worker worker-1"), "\(families)")
        #expect(
            lines.contains("kinesia_session_reps gauge kinesia_session_reps \(expected.clean).0 cam0 left"))

        // A revoked token is refused within a second or two.
        #expect(
            try await ConsumerTestPaths.run(["web", "token", "revoke", "app", "--tokens", tokens]).status == 0
        )
        let revoked = await eventually(timeout: .seconds(10)) {
            ((try? await Self.curl(["-H", "Authorization: Bearer \(token)", base + "/api/v1/sessions"])) ?? "")
                .hasPrefix("HTTP/1.1 401")
        }
        #expect(revoked)

        // SIGTERM: a graceful stop.
        #expect(await web.stop() == 0, "\(web.diagnostics)")
        for process in [worker, broker] { await process.stop() }
    }

    @Test func aNonLoopbackAddressOrAMalformedOneIsAUsageError() async throws {
        for listen in ["10.1.2.3:8080", "127.0.0.1", "localhost:80", "127.0.0.1:99999"] {
            let run = try await ConsumerTestPaths.run(["web", "--listen", listen])
            #expect(run.status == 64, "\(listen): \(run.error)")
            #expect(run.error.contains("--listen"), "\(run.error)")
        }
        let half = try await ConsumerTestPaths.run([
            "web", "--listen", "127.0.0.1:0", "--tls-cert", "/nonexistent.pem",
        ])
        #expect(
            half.status == 64 && half.error.contains("--tls-cert and --tls-key go together"), "\(half.error)")
    }
}

/// The dashboard in headless Chromium on a real deployment, as a clinician opens it.
@Suite(.serialized, .tags(.process))
struct WebDashboardTests {
    static let source = "sim:shoulderAbduction,seed=5,reps=4"

    /// The text of the element of `session` with `data-field="field"` in a dumped DOM.
    static func field(_ dom: String, session: String, _ field: String) -> String? {
        guard
            let card = dom.components(separatedBy: "data-session=\"\(session)\"").dropFirst().first?
                .components(separatedBy: "</article>").first,
            let start = card.range(of: "data-field=\"\(field)\">")
        else { return nil }
        return String(card[start.upperBound...].prefix { $0 != "<" })
    }

    @Test func theDashboardShowsEachSessionsCountsAsTheyChangeAndAsAnalyzeFindsThem() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = directory.appendingPathComponent("bus").path
        let tokens = directory.appendingPathComponent("tokens").path
        let made = try await ConsumerTestPaths.run([
            "web", "token", "new", "desk", "--role", "viewer", "--tokens", tokens,
        ])
        let token = try #require(made.output.split(separator: "\n").last.map(String.init))

        let broker = try KinesiaProcess(
            "broker", ["broker", "--bus", bus], directory: directory.path, logLevel: "warning")
        try await Task.sleep(for: .milliseconds(300))
        let worker = try KinesiaProcess(
            "worker",
            [
                "worker", "--bus", bus, "--camera", "cam0", "--session", "left=shoulderAbduction:left",
                "--session", "right=shoulderAbduction:right",
            ], directory: directory.path, logLevel: "warning")
        let web = try KinesiaProcess(
            "web", ["web", "--bus", bus, "--listen", "127.0.0.1:0", "--tokens", tokens],
            directory: directory.path)
        let processes = [broker, worker, web]
        defer { for process in processes where process.isRunning { process.signal(SIGKILL) } }
        let port = try #require(await web.webPort(), "\(web.diagnostics)")
        let login = "http://127.0.0.1:\(port)/login?token=\(token)"

        // The patient exercises at three times the recording's pace: the page is opened during
        // the set and again after it.
        let ingest = try KinesiaProcess(
            "ingest",
            ["ingest", "--bus", bus, "--camera", "cam0", "--source", Self.source, "--speed", "3"],
            directory: directory.path, logLevel: "warning")
        let expected = try await ConsumerTestPaths.analyze(
            Self.source, exercise: "shoulderAbduction", side: "left")
        let repCount = #"document.querySelector('[data-session="cam0/left"] [data-field=repCount]')"#
        let during = try await BrowserSession.run(
            login, steps: [BrowserSession.whenever("\(repCount) !== null", then: "\(repCount).textContent")])
        let shownDuring = BrowserSession.string(during.first).flatMap(Int.init)
        #expect(shownDuring != nil, "the page never showed cam0/left: \(during)\n\(web.diagnostics)")
        #expect(await ingest.waitForExit(timeout: .seconds(90)) == 0, "\(ingest.diagnostics)")

        // After the set: the counts of kinesia analyze, drawn as they came (no reload).
        let rejected = #"document.querySelector('[data-session="cam0/left"] [data-field=rejectedCount]')"#
        let png = directory.appendingPathComponent("dashboard.png").path
        let after = try await BrowserSession.run(
            login,
            steps: [
                BrowserSession.whenever(
                    "\(repCount).textContent === '\(expected.clean)' && \(rejected).textContent === '\(expected.rejected)'",
                    then: "document.documentElement.outerHTML"),
                "shot:\(png)",
            ], width: 820, height: 1180)
        let dom = BrowserSession.string(after.first) ?? ""
        #expect(Self.field(dom, session: "cam0/left", "repCount") == "\(expected.clean)", "\(dom)")
        #expect(Self.field(dom, session: "cam0/left", "rejectedCount") == "\(expected.rejected)")
        #expect((shownDuring ?? .max) <= expected.clean)
        #expect(dom.contains("id=\"connection\" data-state=\"live\""))
        #expect(dom.contains("data-session=\"cam0/right\""))
        #expect(dom.contains("data-process=\"web-"), "\(dom)")
        #expect(Self.field(dom, session: "cam0/left", "value")?.hasSuffix("°") == true)
        // The page as a tablet shows it: drawn, not blank.
        let (measured, colours) = try await Offload.run(
            "/usr/bin/python3", ["-c", Browser.pngColours, png], environment: Browser.environment)
        #expect(measured == 0, "\(colours)")
        let figures = colours.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        #expect(figures.count == 2 && figures[0] > 20 && figures[1] > 0.05, "colours: \(colours)")

        // In Portuguese: the labels.
        let portuguese = try await BrowserSession.run(
            login + "&lang=pt-BR",
            steps: [
                BrowserSession.whenever(
                    "document.querySelector('.clean .label') !== null",
                    then: "document.documentElement.outerHTML")
            ])
        let text = BrowserSession.string(portuguese.first) ?? ""
        #expect(text.contains("<html lang=\"pt-BR\">"), "\(text.prefix(300))")
        #expect(text.contains(">corretas<") && text.contains(">rejeitadas<"))

        // Without the token: the gateway's refusal, nothing of the sessions.
        let refused = try await BrowserSession.run(
            "http://127.0.0.1:\(port)/",
            steps: [
                BrowserSession.whenever(
                    "document.body !== null && document.body.textContent !== ''",
                    then: "document.documentElement.outerHTML", seconds: 10)
            ])
        let page = BrowserSession.string(refused.first) ?? ""
        #expect(!page.contains("data-session=") && page.contains("unauthorized"), "\(page)")

        for process in [web, worker, broker] { await process.stop() }
    }
}

/// A session's server-sent events, resumed by `Last-Event-ID` across the gateway's own
/// `kill -9`: every event once, in order, as `kinesia analyze` finds them.
@Suite(.serialized, .tags(.process))
struct WebEventStreamTests {
    static let source = "sim:shoulderAbduction,seed=3,reps=5,side=both"

    /// The events of a server-sent events text: each id with the event as the wire format has
    /// it (the `topic`, `stream` and `seq` in front taken off).
    static func events(_ text: String) -> [(id: String, json: String, session: String)] {
        var result: [(String, String, String)] = []
        var id: String?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
            if line.hasPrefix("data: "), let current = id, let seq = line.range(of: ",\"seq\":") {
                let rest = line[seq.upperBound...].drop { $0 != "," }.dropFirst()
                // data: {"topic":"event/cam0/left/",...
                let session = line.split(separator: "/").dropFirst(2).first.map(String.init) ?? ""
                result.append((current, "{" + rest, session))
                id = nil
            }
        }
        return result
    }

    static func start(_ name: String, _ arguments: [String], in directory: String) throws -> KinesiaProcess {
        try KinesiaProcess(name, arguments, directory: directory)
    }

    /// A session's stream, or its camera's (both sessions, one id for both).
    @Test(arguments: ["session", "camera"])
    func aClientResumedAfterTheGatewaysKillGetsEveryEventOnceAndInOrder(scope: String) async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.path
        let bus = path + "/bus"
        let tokens = path + "/tokens"
        let made = try await ConsumerTestPaths.run([
            "web", "token", "new", "app", "--role", "viewer", "--tokens", tokens,
        ])
        let token = try #require(made.output.split(separator: "\n").last.map(String.init))
        let broker = try Self.start("broker", ["broker", "--bus", bus], in: path)
        try await Task.sleep(for: .milliseconds(300))
        let worker = try Self.start(
            "worker",
            [
                "worker", "--bus", bus, "--camera", "cam0", "--session", "left=shoulderAbduction:left",
                "--session",
                "right=shoulderAbduction:right",
            ], in: path)
        var web = try Self.start(
            "web", ["web", "--bus", bus, "--listen", "127.0.0.1:0", "--tokens", tokens], in: path)
        var processes = [broker, worker, web]
        defer { for process in processes where process.isRunning { process.signal(SIGKILL) } }
        let firstPort = try #require(await web.webPort(), "\(web.diagnostics)")
        let url = scope == "session" ? "/api/v1/sessions/cam0/left/events" : "/api/v1/cameras/cam0/events"

        // The first client listens from the start of the set.
        let first = path + "/first.txt"
        let listening = try TestProcess(
            executable: "/usr/bin/curl",
            arguments: [
                "-s", "-N", "--max-time", "90", "-H", "Authorization: Bearer \(token)",
                "http://127.0.0.1:\(firstPort)\(url)",
            ], environment: [:], standardOutput: first, standardError: path + "/first.err")
        try await Task.sleep(for: .milliseconds(500))
        // At the source's own pace: the first client stops with the set under way, however
        // loaded the machine (a CI run at three times the pace had every event before the kill,
        // leaving nothing to resume).
        let ingest = try Self.start(
            "ingest", ["ingest", "--bus", bus, "--camera", "cam0", "--source", Self.source, "--speed", "1"],
            in: path)
        // Until it has a few events (of both sessions, for a camera), however slow the start.
        let enough = await eventually(timeout: .seconds(60)) {
            let events = Self.events(TestProcess.readFile(first))
            return events.count >= 3 && (scope == "session" || Set(events.map(\.session)).count == 2)
        }
        _ = listening.send(SIGTERM)
        _ = await listening.waitForExit(timeout: .seconds(60))
        let before = Self.events(TestProcess.readFile(first))
        #expect(enough, "\(TestProcess.readFile(first))")
        let last = try #require(before.last, "no event:\n\(TestProcess.readFile(first))")

        // The gateway dies and comes back (another port); the client resumes after its last id.
        web.signal(SIGKILL)
        _ = await web.waitForExit(timeout: .seconds(60))
        web = try Self.start(
            "web2", ["web", "--bus", bus, "--listen", "127.0.0.1:0", "--tokens", tokens], in: path)
        processes.append(web)
        let secondPort = try #require(await web.webPort(), "\(web.diagnostics)")
        #expect(await ingest.waitForExit(timeout: .seconds(90)) == 0, "\(ingest.diagnostics)")
        let sides = scope == "session" ? ["left"] : ["left", "right"]
        var oracles: [String: [String]] = [:]
        for side in sides {
            oracles[side] = try await Oracle.events(
                source: Self.source, exercise: "shoulderAbduction", side: side)
        }
        let second = path + "/second.txt"
        let resumed = try TestProcess(
            executable: "/usr/bin/curl",
            arguments: [
                "-s", "-N", "--max-time", "90", "-H", "Authorization: Bearer \(token)", "-H",
                "Last-Event-ID: \(last.id)",
                "http://127.0.0.1:\(secondPort)\(url)",
            ], environment: [:], standardOutput: second, standardError: path + "/second.err")
        // Until each session's last event of the set came (however slow the replay), then 1 s
        // more for anything it should not send.
        _ = await eventually(timeout: .seconds(60)) {
            let events = Self.events(TestProcess.readFile(second))
            return sides.allSatisfy { side in
                events.last(where: { $0.session == side })?.json == oracles[side]?.last
            }
        }
        try await Task.sleep(for: .seconds(1))
        _ = resumed.send(SIGTERM)
        _ = await resumed.waitForExit(timeout: .seconds(60))
        let after = Self.events(TestProcess.readFile(second))

        // Together, per session: a run of analyze's events from the first one the client saw
        // to the last one of the set, each once, in order.
        for side in sides {
            let oracle = oracles[side] ?? []
            let seen = (before + after).filter { $0.session == side }.map(\.json)
            let start = try #require(
                oracle.firstIndex(of: seen.first ?? ""), "\(side): \(seen.first ?? "nothing")")
            #expect(seen == Array(oracle[start...]), "\(side): before \(before.count), after \(after.count)")
        }
        if scope == "camera" {
            // The last id names both sessions.
            #expect(last.id.hasPrefix("left:") && last.id.contains(",right:"), "\(last.id)")
        }
        #expect(!after.isEmpty, "nothing after \(last.id):\n\(TestProcess.readFile(second))")
        let ids = (before + after).map(\.id)
        #expect(Set(ids).count == ids.count)

        // A Last-Event-ID that is not one of ours: 400.
        let bad = try await Offload.run(
            "/usr/bin/curl",
            [
                "-s", "-i", "--max-time", "5", "-H", "Authorization: Bearer \(token)", "-H",
                "Last-Event-ID: 42",
                "http://127.0.0.1:\(secondPort)\(url)",
            ], environment: [:]
        ).output
        #expect(bad.hasPrefix("HTTP/1.1 400"), "\(bad)")
        for process in [web, worker, broker] { await process.stop() }
    }
}

/// A therapist's commands over HTTP on a running control plane: by an application (curl), and by
/// a click in the dashboard in headless Chromium (driven through its DevTools protocol).
@Suite(.serialized, .tags(.process))
struct WebControlTests {
    static func post(_ base: String, _ token: String, _ path: String, _ body: String, json: Bool = true)
        async throws -> String
    {
        try await Offload.run(
            "/usr/bin/curl",
            ["-s", "-i", "--max-time", "20", "-X", "POST", "-H", "Authorization: Bearer \(token)"]
                + (json ? ["-H", "Content-Type: application/json"] : []) + ["-d", body, base + path],
            environment: [:]
        ).output
    }

    @Test func aTherapistStartsASessionOverHTTPAndStopsItWithAClickInTheDashboard() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        let (coordinator, _) = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        let tokens = topology.directory + "/tokens"
        var made: [String: String] = [:]
        for (name, role) in [("therapist", "therapist"), ("reception", "viewer")] {
            let run = try await ConsumerTestPaths.run([
                "web", "token", "new", name, "--role", role, "--tokens", tokens,
            ])
            made[name] = String(run.output.split(separator: "\n").last ?? "")
        }
        let database = topology.directory + "/record.sqlite"
        _ = try topology.start("record", ["record", "--db", database])
        let web = try topology.start(
            "web", ["web", "--listen", "127.0.0.1:0", "--tokens", tokens, "--db", database])
        let port = try #require(await web.webPort(), "\(web.diagnostics)")
        let base = "http://127.0.0.1:\(port)"
        let therapist = made["therapist"]!

        // An application starts a run, with its patient.
        let started = try await Self.post(
            base, therapist, "/api/v1/sessions/cam0/left/start",
            #"{"exercise":"squat","side":"left","patient":"p-7"}"#)
        #expect(started.hasPrefix("HTTP/1.1 200"), "\(started)\n\(coordinator.diagnostics)")
        #expect(started.contains(#""outcome":"started","#) && started.contains(#""run":"1""#), "\(started)")
        // Again: the session runs already.
        let again = try await Self.post(
            base, therapist, "/api/v1/sessions/cam0/left/start", #"{"exercise":"squat","side":"left"}"#)
        #expect(again.hasPrefix("HTTP/1.1 409") && again.contains("alreadyRunning"), "\(again)")
        // A viewer may not; a form (not JSON) may not; a body that is not a command is refused.
        let viewer = try await Self.post(base, made["reception"]!, "/api/v1/sessions/cam0/left/stop", "{}")
        #expect(viewer.hasPrefix("HTTP/1.1 403"), "\(viewer)")
        let form = try await Self.post(base, therapist, "/api/v1/sessions/cam0/left/stop", "a=1", json: false)
        #expect(form.hasPrefix("HTTP/1.1 415"), "\(form)")
        let bad = try await Self.post(
            base, therapist, "/api/v1/sessions/cam0/left/start", #"{"exercise":"nope","side":"left"}"#)
        #expect(bad.hasPrefix("HTTP/1.1 400") && bad.contains("unknown exercise"), "\(bad)")

        // The camera plays; the therapist opens the dashboard and clicks Stop on cam0/left.
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", "sim:squat,seed=3,reps=2", "--pace", "max"])
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        let button = #"document.querySelector('button[data-action=stop][data-session="cam0/left"]')"#
        let answer = #"document.querySelector('[data-session="cam0/left"] [data-field=answer]')"#
        let lines = try await BrowserSession.run(
            "\(base)/login?token=\(therapist)",
            steps: [
                BrowserSession.whenever("\(button) !== null", then: "(\(button).click(), 'clicked')"),
                BrowserSession.whenever(
                    "\(answer).textContent !== '' && \(answer).textContent !== 'Sent…'",
                    then: "\(answer).textContent"),
            ])
        #expect(BrowserSession.string(lines.first) == "clicked", "\(lines)")
        #expect(
            BrowserSession.string(lines.dropFirst().first) == "cam0/left stopped (run 1 on worker w1)",
            "\(lines)")

        // The run is over: stopping it again says so.
        let stoppedAgain = try await Self.post(base, therapist, "/api/v1/sessions/cam0/left/stop", "{}")
        #expect(
            stoppedAgain.hasPrefix("HTTP/1.1 409") && stoppedAgain.contains("notRunning"), "\(stoppedAgain)")

        // The recorded run, and its report, as the recorder kept them.
        let expected = try await ConsumerTestPaths.analyze(
            "sim:squat,seed=3,reps=2", exercise: "squat", side: "left")
        var runs = ""
        let recorded = await eventually(timeout: .seconds(60)) {
            runs =
                (try? await Offload.run(
                    "/usr/bin/curl",
                    ["-s", "-H", "Authorization: Bearer \(therapist)", base + "/api/v1/runs?patient=p-7"],
                    environment: [:]
                ).output) ?? ""
            return runs.contains(#""reason":"stopped""#)
        }
        #expect(recorded, "\(runs)")
        #expect(
            runs.contains(
                #"{"run":"1","camera":"cam0","session":"left","exercise":"squat","side":"left","patient":"p-7","startedAt":""#
            ), "\(runs)")
        #expect(
            runs.contains(#""repCount":\#(expected.clean),"rejectedCount":\#(expected.rejected)}"#), "\(runs)"
        )
        let report = try await Offload.run(
            "/usr/bin/curl",
            [
                "-s", "-i", "-H", "Authorization: Bearer \(made["reception"]!)",
                base + "/api/v1/runs/1/report",
            ],
            environment: [:]
        ).output
        #expect(report.hasPrefix("HTTP/1.1 200"), "\(report.prefix(300))")
        #expect(report.contains("Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'"))
        #expect(report.contains("Run 1 (") && report.contains("patient p-7"), "\(report.prefix(2000))")
        // The therapist starts cam0/right from the dashboard's form, for patient p-8; the runs
        // table shows it, with its report's link.
        let startForm = "document.getElementById('start')"
        let fromTheForm = try await BrowserSession.run(
            "\(base)/login?token=\(therapist)",
            steps: [
                BrowserSession.whenever(
                    "!document.getElementById('start-section').hidden && \(startForm).elements.exercise.options.length > 0",
                    then: """
                        (\(startForm).elements.session.value = 'right', \(startForm).elements.exercise.value = 'squat', \
                        \(startForm).elements.side.value = 'right', \(startForm).elements.patient.value = 'p-8', \
                        \(startForm).querySelector('button').click(), 'submitted')
                        """),
                BrowserSession.whenever(
                    "document.getElementById('start-answer').textContent.includes('started')",
                    then: "document.getElementById('start-answer').textContent"),
                BrowserSession.whenever(
                    "document.querySelector('#runs tr[data-run=\"2\"] a') !== null",
                    then: "document.querySelector('#runs tr[data-run=\"2\"]').textContent + ' ' + "
                        + "document.querySelector('#runs tr[data-run=\"2\"] a').getAttribute('href')"),
            ])
        #expect(BrowserSession.string(fromTheForm.first) == "submitted", "\(fromTheForm)")
        #expect(
            BrowserSession.string(fromTheForm.dropFirst().first)?.hasPrefix(
                "cam0/right started on worker w1 (run 2)") == true,
            "\(fromTheForm)")
        let row = BrowserSession.string(fromTheForm.dropFirst(2).first) ?? ""
        #expect(
            row.hasPrefix("2cam0/rightsquat rightp-8running") && row.hasSuffix(" /api/v1/runs/2/report"),
            "\(row)")

        let missing = try await Offload.run(
            "/usr/bin/curl",
            ["-s", "-i", "-H", "Authorization: Bearer \(therapist)", base + "/api/v1/runs/99/report"],
            environment: [:]
        ).output
        #expect(missing.hasPrefix("HTTP/1.1 404"), "\(missing)")
    }
}

/// `kinesia web` under load and bad clients: 200 event streams at once (one of them never
/// reads), clients that never finish their request, one stream too many; nobody else is slowed,
/// memory stays bounded, every refusal is counted.
@Suite(.serialized, .tags(.process))
struct WebLoadTests {
    /// Opens STREAMS event streams and SLOW requests that never end, and one more stream that
    /// never reads; prints "opened", then holds them all for at least SECONDS and until the file
    /// DONE exists (at most 120 s: the test's checks while they are held take what a loaded box
    /// makes them take), and prints what the clients got as JSON.
    static let loadScript = """
        import json, os, select, socket, sys, time

        host, port, token, path, streams, slow, seconds, done = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7]), sys.argv[8]
        request = (f"GET {path} HTTP/1.1\\r\\nHost: {host}\\r\\nAuthorization: Bearer {token}\\r\\n"
                   "Accept: text/event-stream\\r\\n\\r\\n").encode()
        clients = []
        for _ in range(streams):
            s = socket.create_connection((host, port), timeout=10)
            s.sendall(request)
            s.setblocking(False)
            clients.append({"socket": s, "data": b"", "closed": False})
        # Clients that never finish their request.
        stalled = []
        for _ in range(slow):
            s = socket.create_connection((host, port), timeout=10)
            s.sendall(b"GET /api/v1/sessions HTTP/1.1\\r\\nHost: x\\r\\n")
            s.setblocking(False)
            stalled.append({"socket": s, "closed_at": None})
        # One that asks for events and never reads them.
        deaf = socket.socket()
        deaf.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        deaf.connect((host, port))
        deaf.sendall(request)
        print("opened", flush=True)
        start = time.time()
        while (time.time() - start < seconds or not os.path.exists(done)) and time.time() - start < 120:
            sockets = [c["socket"] for c in clients if not c["closed"]] + [c["socket"] for c in stalled if c["closed_at"] is None]
            readable, _, _ = select.select(sockets, [], [], 0.25)
            for s in readable:
                for c in clients:
                    if c["socket"] is s:
                        chunk = s.recv(65536)
                        if chunk:
                            c["data"] += chunk[:4096] if len(c["data"]) < 65536 else b""
                        else:
                            c["closed"] = True
                for c in stalled:
                    if c["socket"] is s:
                        try:
                            chunk = s.recv(65536)
                        except OSError:
                            chunk = b""
                        if not chunk:
                            c["closed_at"] = time.time() - start
        heads = sum(1 for c in clients if c["data"].startswith(b"HTTP/1.1 200"))
        answered = sum(1 for c in clients if b"event: snapshot" in c["data"])
        closed = [c["closed_at"] for c in stalled if c["closed_at"] is not None]
        print(json.dumps({"streams": streams, "heads": heads, "withSnapshots": answered, "stalledClosed": len(closed),
                          "stalledClosedAfter": max(closed) if closed else None}), flush=True)
        """

    @Test func twoHundredStreamsAndStalledClientsLeaveTheGatewayAnsweringWithBoundedMemory() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let tokens = topology.directory + "/tokens"
        let made = try await ConsumerTestPaths.run([
            "web", "token", "new", "load", "--role", "viewer", "--tokens", tokens,
        ])
        let token = String(made.output.split(separator: "\n").last ?? "")
        _ = try await topology.startBroker()
        _ = try topology.start(
            "worker", ["worker", "--camera", "cam0", "--session", "left=shoulderAbduction:left"])
        let web = try topology.start(
            "web",
            ["web", "--name", "web", "--listen", "127.0.0.1:0", "--tokens", tokens, "--client-timeout", "3"])
        let port = try #require(await web.webPort(), "\(web.diagnostics)")
        _ = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", "sim:shoulderAbduction", "--loop"])
        try await Task.sleep(for: .seconds(1))

        // 199 streams that read, 1 that never does, 20 requests that never end, for at least
        // 15 s and until the checks made while they are all held are done.
        let output = topology.directory + "/load.out"
        let done = topology.directory + "/load.done"
        let load = try TestProcess(
            executable: try PackagePaths.python(),
            arguments: [
                "-c", Self.loadScript, "127.0.0.1", port, token, "/api/v1/sessions/cam0/left/events", "199",
                "20", "15", done,
            ], environment: [:], standardOutput: output, standardError: output)
        let opened = await eventually(timeout: .seconds(30)) {
            TestProcess.readFile(output).hasPrefix("opened")
        }
        #expect(opened, "\(TestProcess.readFile(output))")
        // Until the gateway holds all 200 (its gauge on health/, every second).
        var held = ""
        let full = await eventually(timeout: .seconds(30)) {
            held =
                (try? await Offload.run(
                    "/usr/bin/curl",
                    ["-s", "-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)/metrics"],
                    environment: [:]
                ).output) ?? ""
            return held.contains(#"kinesia_eventStreams{process="web",role="web"} 200"#)
        }
        #expect(full, "\(held)")

        // Meanwhile: one stream too many is refused, and a plain request is answered at once.
        let refused = try await Offload.run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", "-H",
                "Authorization: Bearer \(token)",
                "http://127.0.0.1:\(port)/api/v1/sessions/cam0/left/events",
            ], environment: [:]
        ).output
        #expect(refused == "503", "\(refused)")
        let sessions = try await Offload.run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "--max-time", "5",
                "-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)/api/v1/sessions",
            ], environment: [:]
        ).output
        #expect(sessions.hasPrefix("200 "), "\(sessions)")
        // Memory: 200 streams, each a thread and a subscriber, in well under 300 MB.
        let status = TestProcess.readFile("/proc/\(web.pid)/status")
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap {
                Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            }
        #expect((rss ?? .max) < 300_000, "\(status)")
        #expect(FileManager.default.createFile(atPath: done, contents: nil), "\(done)")

        #expect(await load.waitForExit(timeout: .seconds(30)) == 0, "\(TestProcess.readFile(output))")
        let report = TestProcess.readFile(output).split(separator: "\n").last.map(String.init) ?? ""
        #expect(report.contains(#""heads": 199, "withSnapshots": 199"#), "\(report)")
        // Requests never finished were closed after the client timeout (3 s), all 20.
        #expect(report.contains(#""stalledClosed": 20"#), "\(report)")

        // Counted on health/: the streams opened, the one refused, the 20 stalled requests.
        var metrics = ""
        let counted = await eventually(timeout: .seconds(60)) {
            metrics =
                (try? await Offload.run(
                    "/usr/bin/curl",
                    ["-s", "-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)/metrics"],
                    environment: [:]
                ).output) ?? ""
            return metrics.contains(#"kinesia_eventStreamsRefused_total{process="web",role="web"} 1"#)
                && metrics.contains(#"kinesia_connectionsUnanswered_total{process="web",role="web"} 20"#)
                && metrics.contains(#"kinesia_eventStreamsOpened_total{process="web",role="web"} 200"#)
        }
        #expect(counted, "\(metrics)")
    }
}

extension KinesiaProcess {
    /// The port a `kinesia web` listening on port 0 chose, from its log line `serving
    /// http://127.0.0.1:PORT/` (`nil` when it said none within 30 s).
    func webPort() async -> String? {
        var port: String?
        _ = await eventually(timeout: .seconds(30)) {
            port =
                errorText.components(separatedBy: "serving http://127.0.0.1:").dropFirst().first?
                .prefix { $0 != "/" }.description
            return port != nil
        }
        return port
    }
}
