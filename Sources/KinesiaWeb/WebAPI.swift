/// The answers of `kinesia web`, with no I/O: a request, the model, the tokens and the time in;
/// the answer and what it counts as out.
///
/// | Request | Answer |
/// | --- | --- |
/// | `GET /api/v1/sessions` | the sessions (``WebModel/sessionsJSON(now:)``) |
/// | `GET /api/v1/processes` | the processes and their counters (``WebModel/processesJSON(now:)``) |
/// | `GET /metrics` | ``PrometheusText`` |
/// | `GET /login?token=TOKEN` | sets the `kinesia_token` cookie (HttpOnly, SameSite=Strict), 303 to `/` |
/// | `GET /` | the index of the API (HTML) |
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
            return (HTTPResponse(status: 303, headers: [("Location", "/"), ("Set-Cookie", cookie)]), .served)
        }
        guard let token = request.token, tokens.grant(for: token) != nil else {
            return (
                .problem(401, "unauthorized", "a known token is needed: Authorization: Bearer TOKEN"),
                .unauthorized
            )
        }
        let body: () -> HTTPResponse
        switch request.path {
        case "/api/v1/sessions": body = { .json(model.sessionsJSON(now: now)) }
        case "/api/v1/processes": body = { .json(model.processesJSON(now: now)) }
        case "/": body = { index }
        case "/metrics":
            body = {
                HTTPResponse(
                    status: 200, contentType: PrometheusText.contentType,
                    body: Array(PrometheusText.render(model, now: now).utf8))
            }
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

    /// `/`: what the gateway serves, as links (nothing but this page's own text: no script,
    /// no style, no outside URL).
    static let index = HTTPResponse(
        status: 200, contentType: "text/html; charset=utf-8",
        headers: [
            (
                "Content-Security-Policy",
                "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
            )
        ],
        body: Array(
            """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>Kinesia</title></head><body>
            <h1>Kinesia</h1>
            <ul>
            <li><a href="/api/v1/sessions">Sessions</a>: each session's latest snapshot (JSON)</li>
            <li><a href="/api/v1/processes">Processes</a>: each process's counters (JSON)</li>
            <li><a href="/metrics">Metrics</a>: Prometheus text</li>
            </ul>
            </body></html>

            """.utf8))
}
