/// One HTTP request as `kinesia web` answers it: no I/O, so that every answer is tested
/// without a socket.
public struct HTTPRequest: Sendable, Hashable {
    /// `GET`, `POST`...
    public var method: String
    /// The path, without the query (`/api/v1/sessions`).
    public var path: String
    /// The query's arguments, decoded.
    public var query: [String: String]
    /// The headers, names in lowercase.
    public var headers: [String: String]
    /// The cookies.
    public var cookies: [String: String]
    /// The body (empty for none).
    public var body: [UInt8]
    /// Whether it came over TLS.
    public var isSecure: Bool

    /// A request.
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        cookies: [String: String] = [:], body: [UInt8] = [], isSecure: Bool = false
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
        self.cookies = cookies
        self.body = body
        self.isSecure = isSecure
    }

    /// The bearer token of the `Authorization` header, else of the session cookie.
    public var token: String? {
        if let authorization = headers["authorization"] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]) }
            return nil
        }
        return cookies[HTTPResponse.sessionCookie]
    }
}
