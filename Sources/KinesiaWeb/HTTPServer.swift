import CMicroHTTPD
import Synchronization

/// An HTTP server on GNU libmicrohttpd (Debian's `libmicrohttpd12`): the owner of one daemon,
/// which accepts on a thread of its own, reads, parses and answers each connection on a thread
/// of the connection's (so a handler or a streamed body may wait), and calls `handler` for each
/// whole request. It stops (the daemon's connections closed, its thread joined) at ``close()`` or when
/// it is released.
///
/// The limits are the library's: at most ``Limits/connections`` connections
/// (``Limits/connectionsPerAddress`` from one address), each closed after ``Limits/idleTimeout``
/// without traffic (a client that never finishes its request), and ``Limits/requestMemory`` bytes
/// for a request's line and headers (beyond them: 431, before `handler` sees anything). A body
/// is given to `handler` with its request, at most ``Limits/maximumBody`` bytes; beyond that the
/// rest is read and thrown away and the request is answered 413.
///
/// ```swift
/// let server = try HTTPServer(host: "127.0.0.1", port: 8080) { request in
///     .json("{\"path\":\"\(request.path)\"}")
/// }
/// print(server.port)
/// server.close()
/// ```
public final class HTTPServer: Sendable {
    /// How much a client may take.
    public struct Limits: Sendable, Hashable {
        /// Connections open at once.
        public var connections: UInt32 = 256
        /// Connections open at once from one address.
        public var connectionsPerAddress: UInt32 = 256
        /// Seconds a connection may stay without traffic.
        public var idleTimeout: UInt32 = 30
        /// Bytes for a request's line and headers.
        public var requestMemory: Int = 32 << 10
        /// Bytes of a request's body.
        public var maximumBody: Int = 64 << 10

        /// The defaults.
        public init() {}
    }

    /// A certificate (chain) and its private key, PEM text: the server speaks only TLS.
    public struct TLS: Sendable, Hashable {
        /// The certificate, then the chain up to (not including) the root.
        public var certificate: String
        /// The certificate's private key.
        public var key: String

        /// A certificate and its key.
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// What the daemon's callbacks reach through their context pointer.
    private final class Context: Sendable {
        let handler: @Sendable (HTTPRequest) -> HTTPResponse
        let maximumBody: Int
        let isSecure: Bool
        /// Connections accepted.
        let connectionsOpened = Atomic<Int>(0)
        /// Connections closed without any answer of the handler's: requests never finished
        /// (closed after the idle timeout), headers too large (431), malformed requests (400), a
        /// TLS handshake that failed: the library's refusals.
        let connectionsUnanswered = Atomic<Int>(0)
        /// Requests that ended otherwise than completed: the client went away, a write failed,
        /// the idle timeout in the middle of an answer (a client that stopped reading).
        let requestsCutShort = Atomic<Int>(0)
        /// Bodies over the limit (413).
        let bodiesTooLarge = Atomic<Int>(0)
        init(handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, maximumBody: Int, isSecure: Bool) {
            self.handler = handler
            self.maximumBody = maximumBody
            self.isSecure = isSecure
        }
    }

    /// The port it listens on (the system's choice when 0 was asked).
    public let port: UInt16
    /// The daemon, while it runs. The library's handle is thread-safe for the calls made on it
    /// here (stop, info), and only used under the mutex.
    private struct Daemon: @unchecked Sendable {
        let pointer: OpaquePointer
    }
    private let daemon: Mutex<Daemon?>
    private let context: Unmanaged<Context>

    /// Starts listening on `host` (an IPv4 address) and `port` (0: any free port).
    /// - Throws: ``HTTPServerError``.
    public init(
        host: String, port: UInt16, limits: Limits = Limits(), tls: TLS? = nil,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(HTTPServerError) {
        if tls != nil, kinesia_mhd_has_tls() == 0 { throw .noTLS }
        let context = Unmanaged.passRetained(
            Context(handler: handler, maximumBody: limits.maximumBody, isSecure: tls != nil))
        var invalid: Int32 = 0
        let started = kinesia_mhd_start_ipv4(
            host, port, limits.connections, limits.connectionsPerAddress, limits.idleTimeout,
            limits.requestMemory, HTTPServer.access, context.toOpaque(), HTTPServer.completed,
            HTTPServer.connectionEvent, tls?.certificate, tls?.key, &invalid)
        guard let started else {
            context.release()
            throw invalid != 0 ? .invalidAddress(host) : .cannotListen(host: host, port: port)
        }
        self.context = context
        daemon = Mutex(Daemon(pointer: started))
        self.port = kinesia_mhd_bound_port(started)
    }

    /// The server's own counts, for `health/`: `connectionsOpened`, `connectionsUnanswered`
    /// (closed without an answer of the handler's: stalled, oversized or malformed requests,
    /// failed TLS handshakes), `requestsCutShort` (the client went away or stopped reading),
    /// `bodiesTooLarge`.
    public var counters: [String: Int] {
        let context = self.context.takeUnretainedValue()
        return [
            "connectionsOpened": context.connectionsOpened.load(ordering: .relaxed),
            "connectionsUnanswered": context.connectionsUnanswered.load(ordering: .relaxed),
            "requestsCutShort": context.requestsCutShort.load(ordering: .relaxed),
            "bodiesTooLarge": context.bodiesTooLarge.load(ordering: .relaxed),
        ]
    }

    /// The connections open now.
    public var connections: Int {
        daemon.withLock { daemon in daemon.map { Int(kinesia_mhd_connections($0.pointer)) } ?? 0 }
    }

    /// Stops: closes every connection and joins the daemon's thread. Idempotent.
    public func close() {
        let stopped = daemon.withLock { daemon -> Bool in
            guard let running = daemon else { return false }
            MHD_stop_daemon(running.pointer)
            daemon = nil
            return true
        }
        if stopped { context.release() }
    }

    deinit { close() }

    // MARK: - The daemon's callbacks

    /// A request's body as it comes, kept between the daemon's calls (released when the request
    /// completes).
    private final class Body {
        var bytes: [UInt8] = []
        var tooLarge = false
    }

    /// Per request, several calls: the first (the headers read) gives the request its body; the
    /// next ones bring the body in pieces (kept up to ``Limits/maximumBody``); the last one, with
    /// no more body, answers.
    private static let access: MHD_AccessHandlerCallback = {
        context, connection, url, method, _, upload, uploadSize, requestState in
        guard let context, let connection, let requestState, let uploadSize else { return kinesia_mhd_no() }
        let server = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue()
        guard let state = requestState.pointee else {
            requestState.pointee = Unmanaged.passRetained(Body()).toOpaque()
            return kinesia_mhd_yes()
        }
        let body = Unmanaged<Body>.fromOpaque(state).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if !body.tooLarge, let upload {
                if body.bytes.count + uploadSize.pointee > server.maximumBody {
                    body.tooLarge = true
                    body.bytes = []
                } else {
                    UnsafeRawBufferPointer(start: upload, count: uploadSize.pointee).withMemoryRebound(
                        to: UInt8.self
                    ) { body.bytes.append(contentsOf: $0) }
                }
            }
            uploadSize.pointee = 0
            return kinesia_mhd_yes()
        }
        if let connectionState = kinesia_mhd_socket_context(connection) {
            Unmanaged<ConnectionState>.fromOpaque(connectionState).takeUnretainedValue().answered += 1
        }
        let response: HTTPResponse
        if body.tooLarge {
            server.bodiesTooLarge.add(1, ordering: .relaxed)
            response = .problem(
                413, "bodyTooLarge", "a request's body may have at most \(server.maximumBody) bytes")
        } else {
            let request = HTTPRequest(
                method: method.map { String(cString: $0) } ?? "GET",
                path: url.map { String(cString: $0) } ?? "/",
                query: values(of: connection, kinesia_mhd_argument_kind()),
                headers: values(of: connection, kinesia_mhd_header_kind()),
                cookies: values(of: connection, kinesia_mhd_cookie_kind()), body: body.bytes,
                isSecure: server.isSecure)
            response = server.handler(request)
        }
        return queue(response, on: connection)
    }

    private static let completed: MHD_RequestCompletedCallback = { context, _, requestState, termination in
        if let context, kinesia_mhd_ended_well(termination) == 0 {
            Unmanaged<Context>.fromOpaque(context).takeUnretainedValue().requestsCutShort.add(
                1, ordering: .relaxed)
        }
        guard let requestState, let state = requestState.pointee else { return }
        Unmanaged<Body>.fromOpaque(state).release()
        requestState.pointee = nil
    }

    /// A connection's answers so far (its socket context in the library).
    private final class ConnectionState {
        var answered = 0
    }

    private static let connectionEvent: MHD_NotifyConnectionCallback = { context, _, socketContext, code in
        guard let context, let socketContext else { return }
        let server = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue()
        if kinesia_mhd_is_connection_start(code) != 0 {
            server.connectionsOpened.add(1, ordering: .relaxed)
            socketContext.pointee = Unmanaged.passRetained(ConnectionState()).toOpaque()
            return
        }
        guard let state = socketContext.pointee else { return }
        let connection = Unmanaged<ConnectionState>.fromOpaque(state).takeRetainedValue()
        socketContext.pointee = nil
        if connection.answered == 0 { server.connectionsUnanswered.add(1, ordering: .relaxed) }
    }

    private final class Values {
        var entries: [String: String] = [:]
    }

    private static func values(of connection: OpaquePointer, _ kind: MHD_ValueKind) -> [String: String] {
        let values = Values()
        _ = MHD_get_connection_values(
            connection, kind,
            { box, _, key, value in
                guard let box, let key else { return kinesia_mhd_yes() }
                let values = Unmanaged<Values>.fromOpaque(box).takeUnretainedValue()
                let name = String(cString: key)
                if values.entries[name] == nil {
                    values.entries[name] = value.map { String(cString: $0) } ?? ""
                }
                return kinesia_mhd_yes()
            }, Unmanaged.passUnretained(values).toOpaque())
        return values.entries
    }

    /// What a streamed body's callbacks reach: the stream and the bytes it gave that were not
    /// sent yet. Used by one connection's thread at a time.
    private final class Streaming: @unchecked Sendable {
        let stream: HTTPBodyStream
        var pending: [UInt8]
        var sent = 0
        init(_ stream: HTTPBodyStream, first: [UInt8]) {
            self.stream = stream
            pending = first
        }
    }

    private static let readStream: MHD_ContentReaderCallback = { context, _, buffer, maximum in
        guard let context, let buffer else { return kinesia_mhd_end_of_stream() }
        let streaming = Unmanaged<Streaming>.fromOpaque(context).takeUnretainedValue()
        while streaming.sent == streaming.pending.count {
            guard let next = streaming.stream.next() else { return kinesia_mhd_end_of_stream() }
            streaming.pending = next
            streaming.sent = 0
        }
        let count = min(maximum, streaming.pending.count - streaming.sent)
        streaming.pending.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(
                from: bytes.baseAddress! + streaming.sent, byteCount: count)
        }
        streaming.sent += count
        return count
    }

    private static let freeStream: MHD_ContentReaderFreeCallback = { context in
        guard let context else { return }
        let streaming = Unmanaged<Streaming>.fromOpaque(context).takeRetainedValue()
        streaming.stream.close()
    }

    private static func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let made: OpaquePointer?
        if let stream = response.stream {
            let streaming = Unmanaged.passRetained(Streaming(stream, first: response.body))
            made = MHD_create_response_from_callback(
                kinesia_mhd_size_unknown(), 4096, HTTPServer.readStream, streaming.toOpaque(),
                HTTPServer.freeStream)
            if made == nil {
                streaming.release()
                stream.close()
            }
        } else {
            made = response.body.withUnsafeBytes { body in
                MHD_create_response_from_buffer(
                    body.count, UnsafeMutableRawPointer(mutating: body.baseAddress), kinesia_mhd_must_copy())
            }
        }
        guard let made else { return kinesia_mhd_no() }
        defer { MHD_destroy_response(made) }
        for header in response.headers { _ = MHD_add_response_header(made, header.name, header.value) }
        return MHD_queue_response(connection, UInt32(response.status), made)
    }
}

/// Why a server could not start.
public enum HTTPServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not an IPv4 address.
    case invalidAddress(String)
    /// The address could not be bound (in use, not this host's, no permission), or the
    /// certificate and key could not be used.
    case cannotListen(host: String, port: UInt16)
    /// This libmicrohttpd was built without TLS.
    case noTLS

    /// What went wrong, for a person.
    public var description: String {
        switch self {
        case .invalidAddress(let host): "'\(host)' is not an IPv4 address (e.g. 127.0.0.1)"
        case .cannotListen(let host, let port):
            "cannot listen on \(host):\(port) (in use, not an address of this host, not permitted, "
                + "or a certificate and key that do not go together)"
        case .noTLS: "this libmicrohttpd was built without TLS"
        }
    }
}
