import KinesiaWeb
import KinesiaWire
import Testing

struct EventStreamRequestTests {
    static func request(_ path: String, lastEventID: String? = nil) -> HTTPRequest {
        HTTPRequest(method: "GET", path: path, headers: lastEventID.map { ["Last-Event-ID": $0] } ?? [:])
    }

    @Test func aSessionsEventsPathIsParsedWithItsResumePoint() throws {
        let plain = try #require(EventStreamRequest.parse(Self.request("/api/v1/sessions/cam0/left/events")))
        #expect(plain == .success(EventStreamRequest(camera: "cam0", name: "left")))
        let resumed = try #require(
            EventStreamRequest.parse(
                Self.request("/api/v1/sessions/cam0/left/events", lastEventID: "5f3a9c0e11d2b7a4-17")))
        #expect(
            resumed
                == .success(
                    EventStreamRequest(
                        camera: "cam0", name: "left", resumeStream: StreamID(0x5f3a_9c0e_11d2_b7a4),
                        resumeSequence: 17)))
        #expect(
            EventStreamRequest.id(stream: StreamID(0x5f3a_9c0e_11d2_b7a4), sequence: 17)
                == "5f3a9c0e11d2b7a4-17")
    }

    @Test(arguments: [
        "42", "5f3a-17", "5f3a9c0e11d2b7a4-", "5f3a9c0e11d2b7a4-x", "0000000000000000-1",
        "zz3a9c0e11d2b7a4-1",
    ])
    func anIdThatIsNotOursIsABadRequest(id: String) throws {
        let parsed = try #require(
            EventStreamRequest.parse(Self.request("/api/v1/sessions/cam0/left/events", lastEventID: id)))
        #expect(parsed == .failure(.badLastEventID))
        let answer = WebAPI.respond(
            to: HTTPRequest(
                method: "GET", path: "/api/v1/sessions/cam0/left/events",
                headers: ["Authorization": "Bearer \(WebAPITests.token)", "Last-Event-ID": id]),
            model: WebModel(), tokens: WebAPITests.tokens, now: .zero)
        #expect(answer.response.status == 400 && answer.outcome == .badRequest)
    }

    @Test(arguments: [
        "/api/v1/sessions/cam0/events", "/api/v1/sessions/cam0/left/right/events",
        "/api/v1/sessions/cam 0/left/events",
        "/api/v1/sessions//left/events", "/api/v1/sessions/cam0/left/event",
    ])
    func otherPathsAreNotEventStreams(path: String) {
        #expect(EventStreamRequest.parse(Self.request(path)) == nil)
    }

    @Test func theHeadOfAnEventStreamIsTextEventStreamWithARetry() {
        let answer = WebAPI.respond(
            to: HTTPRequest(
                method: "GET", path: "/api/v1/sessions/cam0/left/events",
                headers: ["Authorization": "Bearer \(WebAPITests.token)"]),
            model: WebModel(), tokens: WebAPITests.tokens, now: .zero)
        #expect(answer.response.status == 200)
        #expect(answer.response.header("Content-Type") == "text/event-stream")
        #expect(answer.response.body == Array("retry: 2000\n\n".utf8))
        let unauthorized = WebAPI.respond(
            to: HTTPRequest(method: "GET", path: "/api/v1/sessions/cam0/left/events"), model: WebModel(),
            tokens: WebAPITests.tokens, now: .zero)
        #expect(unauthorized.response.status == 401)
    }
}

struct CameraEventStreamRequestTests {
    @Test func aCamerasIdNamesEverySessionsLastEventAndReadsBack() throws {
        let positions = [
            "right": EventStreamRequest.Position(stream: StreamID(0x9a), sequence: 4),
            "left": EventStreamRequest.Position(stream: StreamID(0x5f3a_9c0e_11d2_b7a4), sequence: 17),
        ]
        let id = EventStreamRequest.id(positions, session: nil)
        #expect(id == "left:5f3a9c0e11d2b7a4-17,right:000000000000009a-4")
        let parsed = try #require(
            EventStreamRequest.parse(
                HTTPRequest(
                    method: "GET", path: "/api/v1/cameras/cam0/events", headers: ["Last-Event-ID": id])))
        #expect(parsed == .success(EventStreamRequest(camera: "cam0", name: nil, resume: positions)))
        #expect(EventStreamRequest.id(positions, session: "left") == "5f3a9c0e11d2b7a4-17")
    }

    @Test(arguments: [
        "5f3a9c0e11d2b7a4-17", "left:5f3a9c0e11d2b7a4-17,left:5f3a9c0e11d2b7a4-18", "left:",
        ":5f3a9c0e11d2b7a4-1",
    ])
    func anIdThatDoesNotNameSessionsIsABadRequestForACamera(id: String) throws {
        let parsed = try #require(
            EventStreamRequest.parse(
                HTTPRequest(
                    method: "GET", path: "/api/v1/cameras/cam0/events", headers: ["Last-Event-ID": id])))
        #expect(parsed == .failure(.badLastEventID))
    }
}
