import Foundation
import KinesiaClient
import KinesiaControl
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWeb
import KinesiaWire
import Testing

struct WebAPITests {
    static let token = "kw1_" + String(repeating: "ab", count: 32)
    static let tokens = WebTokens.Snapshot(
        grants: [SHA256.hex(Array(token.utf8)): WebTokens.Grant(name: "desk", role: .viewer)], problems: [])

    /// A model with one worker's report and one session's snapshot (2 clean reps, 1 rejected).
    static func model() throws -> WebModel {
        var model = WebModel()
        var snapshot = MotionSnapshot()
        snapshot.value = 42.5
        snapshot.repCount = 2
        snapshot.rejectedCount = 1
        let topic = try Topic.snapshot(camera: "cam0", session: "left")
        model.apply(
            .snapshot(
                BusSnapshot(
                    snapshot: snapshot, t: 3.5, topic: topic,
                    header: WireHeader(kind: .snapshot, streamID: StreamID(9), sequence: 4, sentAt: 0))),
            now: .seconds(10))
        let report = HealthReport(
            process: "worker \"a\"", role: "worker", pid: 77, uptime: 12.5,
            counters: ["poses": 300, "sessions": 2, "replay.requests": 1])
        model.apply(
            .health(
                BusHealth(
                    report: report, topic: try Topic.health(process: "worker-a"),
                    header: WireHeader(kind: .health, streamID: StreamID(3), sequence: 1, sentAt: 0))),
            now: .seconds(11))
        return model
    }

    static func get(_ path: String, headers: [String: String] = [:], cookies: [String: String] = [:]) throws
        -> (response: HTTPResponse, outcome: WebAPI.Outcome)
    {
        WebAPI.respond(
            to: HTTPRequest(method: "GET", path: path, headers: headers, cookies: cookies),
            model: try model(),
            tokens: tokens, now: .seconds(12))
    }

    @Test(arguments: [[:], ["Authorization": "Bearer nope"], ["Authorization": "Basic " + token]])
    func aRequestWithoutAKnownTokenIs401(headers: [String: String]) throws {
        let (response, outcome) = try Self.get("/api/v1/sessions", headers: headers)
        #expect(response.status == 401)
        #expect(outcome == .unauthorized)
        #expect(response.header("WWW-Authenticate") == "Bearer realm=\"kinesia\"")
        #expect(String(decoding: response.body, as: UTF8.self).hasPrefix("{\"error\":\"unauthorized\""))
    }

    @Test func theSessionsCarryTheirLatestSnapshotAsTheWireFormatHasIt() throws {
        let (response, outcome) = try Self.get(
            "/api/v1/sessions", headers: ["authorization": "Bearer \(Self.token)"])
        #expect(response.status == 200 && outcome == .served)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Cache-Control") == "no-store")
        var snapshot = MotionSnapshot()
        snapshot.value = 42.5
        snapshot.repCount = 2
        snapshot.rejectedCount = 1
        #expect(
            String(decoding: response.body, as: UTF8.self)
                == "{\"sessions\":[{\"camera\":\"cam0\",\"name\":\"left\",\"exercise\":null,\"side\":null,"
                + "\"patient\":null,\"run\":null,\"ageSeconds\":2.0,\"snapshot\":"
                + MotionJSON.encode(snapshot, at: 3.5) + "}]}")
    }

    @Test func loginSetsAnHttpOnlyCookieThatIsATokenToo() throws {
        let (login, _) = WebAPI.respond(
            to: HTTPRequest(method: "GET", path: "/login", query: ["token": Self.token]), model: WebModel(),
            tokens: Self.tokens, now: .zero)
        #expect(login.status == 303)
        #expect(login.header("Location") == "/")
        #expect(
            login.header("Set-Cookie")
                == "kinesia_token=\(Self.token); Path=/; HttpOnly; SameSite=Strict; Max-Age=43200")
        let (secure, _) = WebAPI.respond(
            to: HTTPRequest(method: "GET", path: "/login", query: ["token": Self.token], isSecure: true),
            model: WebModel(), tokens: Self.tokens, now: .zero)
        #expect(secure.header("Set-Cookie")?.hasSuffix("; Max-Age=43200; Secure") == true)
        let (refused, outcome) = WebAPI.respond(
            to: HTTPRequest(method: "GET", path: "/login", query: ["token": "kw1_nope"]), model: WebModel(),
            tokens: Self.tokens, now: .zero)
        #expect(refused.status == 401 && outcome == .unauthorized && refused.header("Set-Cookie") == nil)

        let (response, _) = try Self.get(
            "/api/v1/processes", cookies: [HTTPResponse.sessionCookie: Self.token])
        #expect(response.status == 200)
        #expect(
            String(decoding: response.body, as: UTF8.self)
                == "{\"processes\":[{\"name\":\"worker \\\"a\\\"\",\"role\":\"worker\",\"pid\":77,\"uptime\":12.5,"
                + "\"ageSeconds\":1.0,\"counters\":{\"poses\":300,\"replay.requests\":1,\"sessions\":2}}]}")
    }

    @Test func theCamerasAreThoseOfTheSessionsAndOfThePosePublishers() throws {
        var model = try Self.model()
        let announcement = ReplayAnnouncement(
            endpoint: "ipc:///x",
            streams: [
                ReplayStreamInfo(
                    topic: try Topic.pose(camera: "cam1"), stream: StreamID(5), first: 0, last: 9)
            ])
        model.apply(
            .health(
                BusHealth(
                    report: HealthReport(
                        process: "ingest-cam1", role: "ingest", pid: 3, uptime: 1, counters: [:],
                        replay: announcement),
                    topic: try Topic.health(process: "ingest-cam1"),
                    header: WireHeader(kind: .health, streamID: StreamID(4), sequence: 1, sentAt: 0))),
            now: .seconds(11))
        let answer = WebAPI.respond(
            to: HTTPRequest(
                method: "GET", path: "/api/v1/cameras", headers: ["Authorization": "Bearer \(Self.token)"]),
            model: model, tokens: Self.tokens, now: .seconds(12))
        #expect(
            String(decoding: answer.response.body, as: UTF8.self)
                == #"{"cameras":[{"camera":"cam0","sessions":["left"],"publishers":[]},{"camera":"cam1","sessions":[],"publishers":["ingest-cam1"]}]}"#
        )
    }

    @Test func unknownPathsAre404AndOtherMethods405() throws {
        let headers = ["Authorization": "Bearer \(Self.token)"]
        let (missing, missingOutcome) = try Self.get("/api/v2/sessions", headers: headers)
        #expect(missing.status == 404 && missingOutcome == .notFound)
        let (post, postOutcome) = WebAPI.respond(
            to: HTTPRequest(method: "POST", path: "/metrics", headers: headers), model: try Self.model(),
            tokens: Self.tokens, now: .seconds(12))
        #expect(post.status == 405 && postOutcome == .methodNotAllowed)
        #expect(post.header("Allow") == "GET, HEAD")
    }

    @Test func theMetricsAreTypedAndLabelledInThePrometheusFormat() throws {
        let (response, _) = try Self.get("/metrics", headers: ["Authorization": "Bearer \(Self.token)"])
        #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        let lines = String(decoding: response.body, as: UTF8.self).split(separator: "\n").map(String.init)
        let labels = "{process=\"worker \\\"a\\\"\",role=\"worker\"}"
        #expect(lines.contains("# TYPE kinesia_poses_total counter"))
        #expect(lines.contains("kinesia_poses_total\(labels) 300"))
        #expect(lines.contains("# TYPE kinesia_sessions gauge"))
        #expect(lines.contains("kinesia_sessions\(labels) 2"))
        #expect(lines.contains("kinesia_replay_requests_total\(labels) 1"))
        #expect(lines.contains("kinesia_process_uptime_seconds\(labels) 12.5"))
        #expect(lines.contains("kinesia_process_report_age_seconds\(labels) 1.0"))
        #expect(lines.contains("kinesia_session_reps{camera=\"cam0\",session=\"left\"} 2"))
        #expect(lines.contains("kinesia_session_rejected_reps{camera=\"cam0\",session=\"left\"} 1"))
        #expect(lines.contains("kinesia_session_value_degrees{camera=\"cam0\",session=\"left\"} 42.5"))
        // Every sample's family is declared once, before it.
        var declared: Set<String> = []
        for line in lines {
            if line.hasPrefix("# TYPE ") {
                let name = line.split(separator: " ")[2]
                #expect(declared.insert(String(name)).inserted, "\(name) declared twice")
            } else if !line.hasPrefix("#") {
                let name = String(line.prefix { $0 != "{" })
                #expect(declared.contains(name), "\(name) has no TYPE line before it")
            }
        }
    }
}

struct WebDashboardAssetTests {
    static func get(_ path: String, query: [String: String] = [:]) -> HTTPResponse {
        WebAPI.respond(
            to: HTTPRequest(
                method: "GET", path: path, query: query,
                headers: ["Authorization": "Bearer \(WebAPITests.token)"]),
            model: WebModel(), tokens: WebAPITests.tokens, now: .zero
        ).response
    }

    @Test func theDashboardIsServedUnderAStrictPolicyWithNothingInlineOrFromElsewhere() throws {
        let page = Self.get("/")
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        let policy = try #require(page.header("Content-Security-Policy"))
        #expect(
            policy.hasPrefix("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'"))
        #expect(!policy.contains("unsafe"))
        #expect(page.header("X-Frame-Options") == "DENY")
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("<script src=\"/dashboard.js\"></script>"))
        #expect(!html.contains("<script>") && !html.contains("<style") && !html.contains(" style="))
        for asset in ["/", "/dashboard.js", "/dashboard.css"] {
            // No outside URL: the only one is SVG's namespace, a name, never fetched.
            let text = String(decoding: Self.get(asset).body, as: UTF8.self)
                .replacingOccurrences(of: "\"http://www.w3.org/2000/svg\"", with: "")
            #expect(
                !text.contains("http://") && !text.contains("https://") && !text.contains("//cdn"), "\(asset)"
            )
        }
        #expect(Self.get("/dashboard.js").header("Content-Type") == "text/javascript; charset=utf-8")
        #expect(Self.get("/dashboard.css").header("Content-Type") == "text/css; charset=utf-8")
    }

    @Test(arguments: ["en", "pt-BR", "es"])
    func theVoicesTextsAreServedForEachLanguage(language: String) throws {
        let response = Self.get("/api/v1/texts/\(language)")
        #expect(response.status == 200)
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(
            text.contains("\"language\": \"\(language)\"") || text.contains("\"language\":\"\(language)\""))
        #expect(text.contains("\"formFeedback\""))
        #expect(Self.get("/api/v1/texts/fr").status == 404)
    }

    @Test func loginOpensTheDashboardInTheLanguageAskedFor() {
        let login = WebAPI.respond(
            to: HTTPRequest(
                method: "GET", path: "/login", query: ["token": WebAPITests.token, "lang": "es"]),
            model: WebModel(), tokens: WebAPITests.tokens, now: .zero
        ).response
        #expect(login.header("Location") == "/?lang=es")
        let unknown = WebAPI.respond(
            to: HTTPRequest(
                method: "GET", path: "/login", query: ["token": WebAPITests.token, "lang": "/evil"]),
            model: WebModel(), tokens: WebAPITests.tokens, now: .zero
        ).response
        #expect(unknown.header("Location") == "/")
    }
}
