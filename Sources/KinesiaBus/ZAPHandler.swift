import CZeroMQ
import Dispatch
import Foundation
import KinesiaSystem
import Synchronization

/// One authentication request from libzmq (ZAP, RFC 27): who is connecting, over what, with
/// which credentials.
public struct ZAPRequest: Hashable, Sendable {
    /// The request id (echoed in the reply).
    public var requestID: [UInt8]
    /// The socket's `ZMQ_ZAP_DOMAIN`.
    public var domain: String
    /// The peer's address: its IP for TCP; over IPC, `:UID:GID:PID` from the kernel
    /// (`SO_PEERCRED`) appended to the (empty) path.
    public var address: String
    /// The peer's routing id, if it set one.
    public var routingID: [UInt8]
    /// `NULL`, `PLAIN` or `CURVE`.
    public var mechanism: String
    /// The mechanism's credentials: for CURVE, the client's 32-byte public key.
    public var credentials: [[UInt8]]

    /// Makes a request.
    public init(
        requestID: [UInt8] = [], domain: String = "", address: String = "", routingID: [UInt8] = [],
        mechanism: String, credentials: [[UInt8]] = []
    ) {
        self.requestID = requestID
        self.domain = domain
        self.address = address
        self.routingID = routingID
        self.mechanism = mechanism
        self.credentials = credentials
    }

    /// The client's CURVE public key in Z85 (40 characters), for a CURVE request.
    public var curvePublicKey: String? {
        guard mechanism == "CURVE", let key = credentials.first, key.count == 32 else { return nil }
        var text = [CChar](repeating: 0, count: 41)
        guard key.withUnsafeBufferPointer({ zmq_z85_encode(&text, $0.baseAddress, 32) }) != nil else {
            return nil
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The peer's user id over IPC (the `:UID:GID:PID` end of ``address``), `nil` otherwise.
    public var peerUserID: UInt32? {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 4 else { return nil }
        return UInt32(parts[parts.count - 3])
    }
}

/// The answer to a ``ZAPRequest``.
public struct ZAPReply: Hashable, Sendable {
    /// `200` admits; `400` refuses; `300` is a temporary failure; `500` an internal error.
    public var statusCode: Int
    /// A few words for the peer's logs.
    public var statusText: String
    /// For an admitted peer: the id every message it sends carries (`zmq_msg_gets(msg,
    /// "User-Id")`).
    public var userID: String

    /// Admits the peer with a user id.
    public static func admit(userID: String) -> ZAPReply {
        ZAPReply(statusCode: 200, statusText: "OK", userID: userID)
    }

    /// Refuses the peer.
    public static func refuse(_ text: String) -> ZAPReply {
        ZAPReply(statusCode: 400, statusText: text, userID: "")
    }

    /// Makes a reply.
    public init(statusCode: Int, statusText: String, userID: String) {
        self.statusCode = statusCode
        self.statusText = statusText
        self.userID = userID
    }
}

/// The ZAP handler of a context: a REP socket bound at `inproc://zeromq.zap.01` answered on a
/// thread of its own by `authenticate`.
///
/// Start it before any socket of the context binds: from then on every connection to a CURVE
/// server socket, and every connection to a socket with a ``SocketOption/zapDomain`` (also
/// NULL, over TCP or IPC), waits for its answer. One handler per context.
///
/// ```swift
/// let zap = try ZAPHandler(context: context) { request in
///     request.peerUserID == getuid() ? .admit(userID: "local") : .refuse("another user")
/// }
/// defer { zap.stop() }
/// ```
public final class ZAPHandler: Sendable {
    /// The endpoint libzmq sends its requests to.
    public static let endpoint = "inproc://zeromq.zap.01"

    private let stopping = StopFlag()
    private let finished = DispatchGroup()

    /// Binds the handler's socket and starts answering.
    /// - Parameter authenticate: Called on the handler's thread for each request.
    /// - Throws: ``ZMQError/addressInUse`` when the context has a handler already.
    public init(context: ZMQContext, authenticate: @escaping @Sendable (ZAPRequest) -> ZAPReply)
        throws(ZMQError)
    {
        let socket = try ZMQSocket(.rep, context: context)
        try socket.set(.receiveTimeout, .milliseconds(100))
        try socket.bind(Self.endpoint)
        let work = Transfer(socket)
        let group = finished
        let stopping = stopping
        group.enter()
        let thread = Thread.named("kinesia.zap") {
            let socket = work.take()
            var frames: [[UInt8]] = []
            while !stopping.isSet {
                do throws(ZMQError) {
                    frames = try socket.receive()
                } catch .wouldBlock {
                    continue
                } catch {
                    break
                }
                let reply = Self.answer(frames, authenticate: authenticate)
                do {
                    try socket.send(reply)
                } catch {
                    break
                }
            }
            socket.close()
            group.leave()
        }
        thread.start()
    }

    deinit {
        stop()
    }

    /// Stops answering and waits for the thread (within about 100 ms). Safe more than once.
    public func stop() {
        stopping.set()
        finished.wait()
    }

    /// The reply frames for request frames (a malformed request is answered 500), for a
    /// handler that answers on a socket of its own.
    public static func answer(_ frames: [[UInt8]], authenticate: (ZAPRequest) -> ZAPReply) -> [[UInt8]] {
        guard let request = ZAPRequest(frames: frames) else {
            return ZAPReply(statusCode: 500, statusText: "malformed request", userID: "")
                .frames(answering: frames.count > 1 ? frames[1] : [])
        }
        return authenticate(request).frames(answering: request.requestID)
    }
}

extension ZAPRequest {
    /// Parses the frames libzmq sends a ZAP handler's REP socket (RFC 27: version `1.0`,
    /// request id, domain, address, routing id, mechanism, credentials).
    /// - Returns: `nil` when they are not a version 1.0 request.
    public init?(frames: [[UInt8]]) {
        guard frames.count >= 6, frames[0] == Array("1.0".utf8) else { return nil }
        func text(_ index: Int) -> String { String(decoding: frames[index], as: UTF8.self) }
        self.init(
            requestID: frames[1], domain: text(2), address: text(3), routingID: frames[4], mechanism: text(5),
            credentials: Array(frames.dropFirst(6)))
    }
}

extension ZAPReply {
    /// The frames of this reply to the request `requestID`, as a ZAP handler's REP socket sends
    /// them (RFC 27: version, request id, status code, status text, user id, metadata).
    public func frames(answering requestID: [UInt8]) -> [[UInt8]] {
        [
            Array("1.0".utf8), requestID, Array(String(statusCode).utf8), Array(statusText.utf8),
            Array(userID.utf8), [],
        ]
    }
}

/// A flag set once, read from another thread.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)

    /// Sets the flag.
    func set() { value.store(true, ordering: .releasing) }

    /// Whether the flag is set.
    var isSet: Bool { value.load(ordering: .acquiring) }
}
