import KinesiaControl
import KinesiaMotion
import KinesiaWeb
import Testing

struct ControlCallTests {
    static let therapist = "kw1_" + String(repeating: "cd", count: 32)
    static let tokens = WebTokens.Snapshot(
        grants: [
            SHA256.hex(Array(WebAPITests.token.utf8)): WebTokens.Grant(name: "desk", role: .viewer),
            SHA256.hex(Array(therapist.utf8)): WebTokens.Grant(name: "ana", role: .therapist),
        ], problems: [])

    static func post(_ path: String, _ body: String, token: String = therapist, json: Bool = true)
        -> (response: HTTPResponse, outcome: WebAPI.Outcome)
    {
        var headers = ["Authorization": "Bearer \(token)"]
        if json { headers["Content-Type"] = "application/json; charset=utf-8" }
        return WebAPI.respond(
            to: HTTPRequest(method: "POST", path: path, headers: headers, body: Array(body.utf8)),
            model: WebModel(),
            tokens: tokens, now: .zero)
    }

    @Test func eachActionIsTheControlPlanesCommand() throws {
        func call(_ path: String, _ body: String, headers: [String: String] = [:]) throws -> ControlCall {
            try #require(
                ControlCall.parse(
                    HTTPRequest(method: "POST", path: path, headers: headers, body: Array(body.utf8)))
            )
            .get()
        }
        let key = try SessionKey(parsing: "cam0/left")
        let start = try call(
            "/api/v1/sessions/cam0/left/start", #"{"exercise":"squat","side":"left","patient":"p-7"}"#)
        guard case .start(let plan) = start.command else { Issue.record("\(start)"); return }
        #expect(
            plan.key == key && plan.exercise.id == "squat" && plan.analysis == .left && plan.patient == "p-7")
        #expect(plan.pool == SessionPlan.defaultPool)
        #expect(try call("/api/v1/sessions/cam0/left/stop", "{}").command == .stop(key))
        #expect(try call("/api/v1/sessions/cam0/left/reset", "").command == .reset(key))
        #expect(
            try call("/api/v1/sessions/cam0/left/baseline", #"{"reps":3}"#).command == .baseline(key, reps: 3)
        )
        #expect(try call("/api/v1/sessions/cam0/left/baseline", "{}").command == .baseline(key, reps: nil))
        let keyed = try call(
            "/api/v1/sessions/cam0/left/stop", "{}", headers: ["Idempotency-Key": "retry-0001"])
        #expect(keyed.requestID == "retry-0001")
    }

    @Test(arguments: [
        ("/api/v1/sessions/cam0/left/start", #"{"exercise":"nope","side":"left"}"#),
        ("/api/v1/sessions/cam0/left/start", #"{"exercise":"squat"}"#),
        ("/api/v1/sessions/cam0/left/start", #"{"exercise":"squat","side":"up"}"#),
        ("/api/v1/sessions/cam0/left/stop", #"{"force":true}"#),
        ("/api/v1/sessions/cam0/left/baseline", #"{"reps":0}"#),
        ("/api/v1/sessions/cam0/left/baseline", #"{"reps":"3"}"#),
        ("/api/v1/sessions/cam0/left/stop", "[1,"),
        ("/api/v1/sessions/cam0/left/stop", "nan"),
    ])
    func anInvalidCommandIs400(path: String, body: String) {
        let (response, outcome) = Self.post(path, body)
        #expect(
            response.status == 400 && outcome == .badRequest,
            "\(String(decoding: response.body, as: UTF8.self))")
    }

    @Test func aViewerAFormOrAGetIsRefusedAndATherapistsCommandGoesToTheService() {
        let (viewer, viewerOutcome) = Self.post(
            "/api/v1/sessions/cam0/left/stop", "{}", token: WebAPITests.token)
        #expect(viewer.status == 403 && viewerOutcome == .forbidden)
        #expect(Self.post("/api/v1/sessions/cam0/left/stop", "{}", json: false).response.status == 415)
        let get = WebAPI.respond(
            to: HTTPRequest(
                method: "GET", path: "/api/v1/sessions/cam0/left/stop",
                headers: ["Authorization": "Bearer \(Self.therapist)"]), model: WebModel(),
            tokens: Self.tokens, now: .zero)
        #expect(get.response.status == 405 && get.response.header("Allow") == "POST")
        #expect(Self.post("/api/v1/sessions/cam0/left/stop", "{}").response.status == 202)
    }

    @Test func theCoordinatorsAnswersBecomeHTTPStatuses() throws {
        let cases: [(ControlAnswer.Outcome, Int)] = [
            (.stopped, 200), (.notRunning, 409), (.alreadyRunning, 409), (.noLiveWorker, 503),
            (.invalid, 400),
            (.notAllowed, 403),
        ]
        for (outcome, status) in cases {
            let answer = ControlAnswer(id: "r1", outcome: outcome, message: "m \"q\"", worker: "w1", run: 4)
            let response = ControlCall.response(to: answer)
            #expect(response.status == status)
            #expect(
                String(decoding: response.body, as: UTF8.self)
                    == #"{"outcome":"\#(outcome.rawValue)","message":"m \"q\"","worker":"w1","run":"4"}"#)
        }
    }

    @Test func meSaysTheTokensNameAndRole() {
        let me = WebAPI.respond(
            to: HTTPRequest(
                method: "GET", path: "/api/v1/me", headers: ["Authorization": "Bearer \(Self.therapist)"]),
            model: WebModel(), tokens: Self.tokens, now: .zero)
        #expect(String(decoding: me.response.body, as: UTF8.self) == #"{"name":"ana","role":"therapist"}"#)
    }
}
