import KinesiaJSON
import KinesiaMotion
import KinesiaVoice

/// The answers of `kinesia web`, with no I/O: a request, the model, the tokens and the time in;
/// the answer and what it counts as out.
///
/// | Request | Answer |
/// | --- | --- |
/// | `GET /api/v1/sessions` | the sessions (``WebModel/sessionsJSON(now:)``) |
/// | `GET /api/v1/processes` | the processes and their counters (``WebModel/processesJSON(now:)``) |
/// | `GET /api/v1/exercises` | the catalog's exercise ids |
/// | `GET /api/v1/cameras` | the cameras, their sessions and their publishers (``WebModel/camerasJSON()``) |
/// | `POST /api/v1/sessions/CAMERA/NAME/start\|stop\|reset\|baseline` | a therapist's command (``ControlCall``: the service sends it) |
/// | `GET /api/v1/me` | the token's name and role |
/// | `GET /api/v1/live` | every session's newest state and the processes as server-sent events (the dashboard's) |
/// | `GET /api/v1/runs[?patient=REF]`, `GET /api/v1/runs/RUN/report` | the recorded runs, a run's HTML report (``RunsWork``: the service reads them) |
/// | `GET /api/v1/sessions/CAMERA/NAME/events` | the head of a session's server-sent events (``EventStreamRequest``: the service streams them) |
/// | `GET /metrics` | ``PrometheusText`` |
/// | `GET /login?token=TOKEN[&lang=en\|pt-BR\|es]` | sets the `kinesia_token` cookie (HttpOnly, SameSite=Strict), 303 to the dashboard |
/// | `GET /` (`/dashboard.js`, `/dashboard.css`) | the dashboard: every session live, the processes |
/// | `GET /api/v1/texts/LANG` | the voice's texts of `en`, `pt-BR` or `es` (names of faults, setup issues, joints) |
///
/// Every request needs a token (`Authorization: Bearer TOKEN`, or the `kinesia_token`
/// cookie that `/login` sets; `/login` takes it from its query): none, or one not known, is 401. `HEAD` is answered as `GET` without the body.
/// Other methods: 405; other paths: 404. Errors are `{"error":CODE,"message":TEXT}`.
public enum WebAPI {
    /// What an answer counts as on `health/`.
    public enum Outcome: String, Sendable, CaseIterable {
        /// Answered.
        case served
        /// No token, or an unknown one.
        case unauthorized
        /// No such path.
        case notFound
        /// A method the path does not take.
        case methodNotAllowed
        /// A request that cannot be what it says (a `Last-Event-ID` not of ours, a command's
        /// body that is not valid, a body that is not JSON).
        case badRequest
        /// A viewer's token asking for a therapist's command.
        case forbidden
    }

    /// The answer to `request`.
    public static func respond(
        to request: HTTPRequest, model: WebModel, tokens: WebTokens.Snapshot, now: Duration
    ) -> (response: HTTPResponse, outcome: Outcome) {
        if request.path == "/login" {
            guard let token = request.query["token"], tokens.grant(for: token) != nil else {
                return (
                    .problem(401, "unauthorized", "/login needs ?token=TOKEN, a known token"), .unauthorized
                )
            }
            let cookie =
                "\(HTTPResponse.sessionCookie)=\(token); Path=/; HttpOnly; SameSite=Strict; Max-Age=43200"
                + (request.isSecure ? "; Secure" : "")
            // The dashboard in the language asked for (`&lang=pt-BR`), when it is one of the texts'.
            let location =
                request.query["lang"].flatMap(VoiceLanguage.init(rawValue:)).map { "/?lang=\($0.code)" }
                ?? "/"
            return (
                HTTPResponse(status: 303, headers: [("Location", location), ("Set-Cookie", cookie)]), .served
            )
        }
        guard let token = request.token, let grant = tokens.grant(for: token) else {
            return (
                .problem(401, "unauthorized", "a known token is needed: Authorization: Bearer TOKEN"),
                .unauthorized
            )
        }
        if let call = ControlCall.parse(request) {
            guard request.method == "POST" else {
                var response = HTTPResponse.problem(405, "methodNotAllowed", "\(request.path) takes POST")
                response.headers.append(("Allow", "POST"))
                return (response, .methodNotAllowed)
            }
            guard grant.role == .therapist else {
                return (
                    .problem(403, "forbidden", "only a therapist's token may command a session"), .forbidden
                )
            }
            // JSON only: a form of another site cannot send it without the browser asking first.
            guard request.headers["content-type"]?.lowercased().hasPrefix("application/json") == true else {
                return (
                    .problem(415, "notJSON", "a command's body is JSON: Content-Type: application/json"),
                    .badRequest
                )
            }
            if case .failure(let error) = call {
                return (.problem(400, "invalid", "\(error)"), .badRequest)
            }
            // The command itself is the service's (it waits for the coordinator's answer).
            return (.json("{\"pending\":true}", status: 202), .served)
        }
        if runsWork(request.path) != nil {
            guard request.method == "GET" || request.method == "HEAD" else {
                var response = HTTPResponse.problem(405, "methodNotAllowed", "\(request.path) takes GET")
                response.headers.append(("Allow", "GET, HEAD"))
                return (response, .methodNotAllowed)
            }
            // Read from the record database by the service.
            return (.json("{\"pending\":true}", status: 202), .served)
        }
        if request.path == "/api/v1/me" {
            var text = "{\"name\":"
            JSONWriter.appendString(grant.name, to: &text)
            return (.json(text + ",\"role\":\"\(grant.role.rawValue)\"}"), .served)
        }
        let body: () -> HTTPResponse
        switch request.path {
        case _ where EventStreamRequest.parse(request) != nil:
            guard case .success = EventStreamRequest.parse(request) else {
                return (
                    .problem(
                        400, "badLastEventID",
                        "Last-Event-ID must be an event's id: <16 hex digits>-<sequence>"),
                    .badRequest
                )
            }
            // The events themselves follow this head (the service streams them).
            body = {
                HTTPResponse(
                    status: 200, contentType: "text/event-stream", headers: [("X-Accel-Buffering", "no")],
                    body: Array("retry: 2000\n\n".utf8))
            }
        case "/api/v1/sessions": body = { .json(model.sessionsJSON(now: now)) }
        case "/api/v1/processes": body = { .json(model.processesJSON(now: now)) }
        case "/api/v1/cameras": body = { .json(model.camerasJSON()) }
        case "/api/v1/exercises": body = { .json(exercisesJSON) }
        case livePath:
            // The changes follow this head (the service streams them).
            body = {
                HTTPResponse(
                    status: 200, contentType: "text/event-stream", headers: [("X-Accel-Buffering", "no")],
                    body: Array("retry: 2000\n\n".utf8))
            }
        case "/metrics":
            body = {
                HTTPResponse(
                    status: 200, contentType: PrometheusText.contentType,
                    body: Array(PrometheusText.render(model, now: now).utf8))
            }
        case let path where asset(path) != nil: body = { asset(path)! }
        case let path where texts(path) != nil: body = { texts(path)! }
        default:
            return (.problem(404, "notFound", "no such resource: \(request.path.prefix(200))"), .notFound)
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPResponse.problem(405, "methodNotAllowed", "\(request.path) takes GET")
            response.headers.append(("Allow", "GET, HEAD"))
            return (response, .methodNotAllowed)
        }
        return (body(), .served)
    }

    /// What the service reads from the record database for a path: the runs, or a run's report.
    public enum RunsWork: Sendable, Hashable {
        /// `GET /api/v1/runs`.
        case runs
        /// `GET /api/v1/runs/RUN/report`.
        case report(run: UInt64)
    }

    /// `/api/v1/exercises`: the catalog's exercise ids, in the catalog's order.
    static let exercisesJSON =
        "{\"exercises\":[" + Exercise.catalog.map { "\"\($0.id)\"" }.joined(separator: ",") + "]}"

    /// The live state's path: every session's newest state and the processes, as server-sent
    /// events (`event: session`, `event: processes`), newest first to a slow client.
    public static let livePath = "/api/v1/live"

    /// The runs' paths.
    public static func runsWork(_ path: String) -> RunsWork? {
        if path == "/api/v1/runs" { return .runs }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 6, path.hasPrefix("/api/v1/runs/"), parts[5] == "report",
            let run = UInt64(parts[4])
        else { return nil }
        return .report(run: run)
    }

    /// A run's report page: inline SVG and style, nothing else.
    static let reportPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

    /// The dashboard's policy: its own script, style and requests, nothing inline, nothing from
    /// elsewhere, never in a frame.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// `/`, `/dashboard.js`, `/dashboard.css`: the dashboard (compiled into the binary).
    static func asset(_ path: String) -> HTTPResponse? {
        let (bytes, type): ([UInt8], String)
        switch path {
        case "/": (bytes, type) = (PackageResources.dashboard_html, "text/html; charset=utf-8")
        case "/dashboard.js":
            (bytes, type) = (PackageResources.dashboard_js, "text/javascript; charset=utf-8")
        case "/dashboard.css": (bytes, type) = (PackageResources.dashboard_css, "text/css; charset=utf-8")
        default: return nil
        }
        return HTTPResponse(
            status: 200, contentType: type,
            headers: [("Content-Security-Policy", contentSecurityPolicy), ("X-Frame-Options", "DENY")],
            body: bytes)
    }

    /// `/api/v1/texts/LANG`: the voice's texts of `LANG` (`en`, `pt-BR`, `es`): the names of
    /// faults, setup issues, joints and sides as the patient hears them.
    static func texts(_ path: String) -> HTTPResponse? {
        guard path.hasPrefix("/api/v1/texts/"),
            let language = VoiceLanguage(rawValue: String(path.dropFirst("/api/v1/texts/".count)))
        else { return nil }
        return HTTPResponse(status: 200, contentType: "application/json", body: language.builtInTextsFile)
    }
}
