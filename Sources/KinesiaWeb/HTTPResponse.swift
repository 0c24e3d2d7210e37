import KinesiaJSON

/// One HTTP answer: a status, headers and a body.
public struct HTTPResponse: Sendable, Hashable {
    /// The name of the cookie that `/login` sets.
    public static let sessionCookie = "kinesia_token"

    /// The status code.
    public var status: Int
    /// The headers, in order.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: [UInt8]
    /// A body sent a piece at a time after ``body`` (server-sent events), or `nil`.
    public var stream: HTTPBodyStream?

    /// An answer; every one carries `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`.
    public init(
        status: Int, contentType: String? = nil, headers: [(name: String, value: String)] = [],
        body: [UInt8] = []
    ) {
        self.status = status
        var all: [(name: String, value: String)] = [
            ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
        ]
        if let contentType { all.append(("Content-Type", contentType)) }
        self.headers = all + headers
        self.body = body
    }

    /// A JSON body.
    public static func json(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: Array(text.utf8))
    }

    /// An error as JSON: `{"error":CODE,"message":TEXT}`.
    public static func problem(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
        var text = "{\"error\":"
        JSONWriter.appendString(code, to: &text)
        text += ",\"message\":"
        JSONWriter.appendString(message, to: &text)
        text += "}"
        var response = json(text, status: status)
        if status == 401 { response.headers.append(("WWW-Authenticate", "Bearer realm=\"kinesia\"")) }
        return response
    }

    public static func == (left: HTTPResponse, right: HTTPResponse) -> Bool {
        left.status == right.status && left.body == right.body && (left.stream === right.stream)
            && left.headers.map { [$0.name, $0.value] } == right.headers.map { [$0.name, $0.value] }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(body)
    }

    /// The value of header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// A body that goes on: each ``next()`` gives the next bytes, waiting for them as long as it
/// needs (it runs on its connection's own thread), or `nil` at its end; ``close()`` once the
/// connection is done with it, whatever the reason (the client went away, the server stops).
public final class HTTPBodyStream: Sendable {
    private let produce: @Sendable () -> [UInt8]?
    private let finish: @Sendable () -> Void

    /// A stream of `next`'s pieces, ended by `close`.
    public init(next: @escaping @Sendable () -> [UInt8]?, close: @escaping @Sendable () -> Void) {
        produce = next
        finish = close
    }

    /// The next bytes, or `nil` at the end.
    public func next() -> [UInt8]? { produce() }

    /// Lets go of what the stream holds.
    public func close() { finish() }
}
