import CZeroMQ

/// One event of a socket's life, as libzmq's socket monitor reports it.
///
/// Parsed from the stable (version 1) monitor format of libzmq 4.3: a first frame of six bytes,
/// the event number (16 bits) and a value (32 bits) in host byte order, and a second frame with
/// the endpoint.
public struct SocketEvent: Hashable, Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Hashable, Sendable {
        /// A connection to a remote peer was made (`value`: the file descriptor).
        case connected
        /// A connect did not complete at once and is in progress (`value`: an errno).
        case connectDelayed
        /// A connect is being retried (`value`: the wait before the retry in milliseconds, the
        /// reconnect interval plus libzmq's random jitter of up to one interval).
        case connectRetried
        /// The socket is listening on an endpoint (`value`: the file descriptor).
        case listening
        /// A bind failed (`value`: an errno).
        case bindFailed
        /// A connection from a remote peer was accepted (`value`: the file descriptor).
        case accepted
        /// Accepting a connection failed (`value`: an errno).
        case acceptFailed
        /// A connection's file descriptor was closed (`value`: the file descriptor).
        case closed
        /// Closing a file descriptor failed (`value`: an errno).
        case closeFailed
        /// A session was broken: the peer went away (`value`: the file descriptor).
        case disconnected
        /// The monitor was stopped (the monitored socket was closed or stopped monitoring).
        case monitorStopped
        /// A handshake failed before its mechanism reported why (`value`: an errno).
        case handshakeFailedNoDetail
        /// A handshake failed on a protocol error (`value`: libzmq's `ZMQ_PROTOCOL_ERROR_*`).
        case handshakeFailedProtocol
        /// A handshake failed on authentication (`value`: the ZAP status code, such as 400).
        case handshakeFailedAuth
        /// A handshake (including security) completed; messages can flow.
        case handshakeSucceeded
        /// An event number this module does not know.
        case unknown(UInt16)

        init(number: UInt16) {
            switch Int32(number) {
            case ZMQ_EVENT_CONNECTED: self = .connected
            case ZMQ_EVENT_CONNECT_DELAYED: self = .connectDelayed
            case ZMQ_EVENT_CONNECT_RETRIED: self = .connectRetried
            case ZMQ_EVENT_LISTENING: self = .listening
            case ZMQ_EVENT_BIND_FAILED: self = .bindFailed
            case ZMQ_EVENT_ACCEPTED: self = .accepted
            case ZMQ_EVENT_ACCEPT_FAILED: self = .acceptFailed
            case ZMQ_EVENT_CLOSED: self = .closed
            case ZMQ_EVENT_CLOSE_FAILED: self = .closeFailed
            case ZMQ_EVENT_DISCONNECTED: self = .disconnected
            case ZMQ_EVENT_MONITOR_STOPPED: self = .monitorStopped
            case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: self = .handshakeFailedNoDetail
            case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL: self = .handshakeFailedProtocol
            case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: self = .handshakeFailedAuth
            case ZMQ_EVENT_HANDSHAKE_SUCCEEDED: self = .handshakeSucceeded
            default: self = .unknown(number)
            }
        }

        /// Whether the kind is one of the three handshake failures.
        public var isHandshakeFailure: Bool {
            self == .handshakeFailedNoDetail || self == .handshakeFailedProtocol
                || self == .handshakeFailedAuth
        }
    }

    /// What happened.
    public let kind: Kind
    /// The event's value: a file descriptor, an errno, an interval or a status (see ``Kind``).
    public let value: UInt32
    /// The endpoint concerned (`tcp://127.0.0.1:5555`...); may be empty.
    public let endpoint: String

    /// Makes an event (for tests of code that consumes events).
    public init(kind: Kind, value: UInt32 = 0, endpoint: String = "") {
        self.kind = kind
        self.value = value
        self.endpoint = endpoint
    }

    /// Parses the two frames of one monitor message; `nil` if they are not in that format.
    init?(frames: [[UInt8]]) {
        guard frames.count == 2, frames[0].count == 6 else { return nil }
        let header = frames[0]
        let number = header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: UInt16.self) }
        let value = header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 2, as: UInt32.self) }
        self.init(
            kind: Kind(number: number), value: value,
            endpoint: String(decoding: frames[1], as: UTF8.self))
    }

    /// `connected(12) tcp://127.0.0.1:5555`.
    public var description: String {
        "\(kind)(\(value)) \(endpoint)"
    }
}

/// The set of event kinds a monitor reports (libzmq's `ZMQ_EVENT_*` bits).
public struct SocketEventMask: OptionSet, Hashable, Sendable {
    /// libzmq's bits (`ZMQ_EVENT_*`).
    public let rawValue: Int32

    /// Makes a mask from libzmq's bits.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// ``SocketEvent/Kind/connected``.
    public static let connected = Self(rawValue: ZMQ_EVENT_CONNECTED)
    /// ``SocketEvent/Kind/connectDelayed``.
    public static let connectDelayed = Self(rawValue: ZMQ_EVENT_CONNECT_DELAYED)
    /// ``SocketEvent/Kind/connectRetried``.
    public static let connectRetried = Self(rawValue: ZMQ_EVENT_CONNECT_RETRIED)
    /// ``SocketEvent/Kind/listening``.
    public static let listening = Self(rawValue: ZMQ_EVENT_LISTENING)
    /// ``SocketEvent/Kind/bindFailed``.
    public static let bindFailed = Self(rawValue: ZMQ_EVENT_BIND_FAILED)
    /// ``SocketEvent/Kind/accepted``.
    public static let accepted = Self(rawValue: ZMQ_EVENT_ACCEPTED)
    /// ``SocketEvent/Kind/acceptFailed``.
    public static let acceptFailed = Self(rawValue: ZMQ_EVENT_ACCEPT_FAILED)
    /// ``SocketEvent/Kind/closed``.
    public static let closed = Self(rawValue: ZMQ_EVENT_CLOSED)
    /// ``SocketEvent/Kind/closeFailed``.
    public static let closeFailed = Self(rawValue: ZMQ_EVENT_CLOSE_FAILED)
    /// ``SocketEvent/Kind/disconnected``.
    public static let disconnected = Self(rawValue: ZMQ_EVENT_DISCONNECTED)
    /// ``SocketEvent/Kind/monitorStopped``.
    public static let monitorStopped = Self(rawValue: ZMQ_EVENT_MONITOR_STOPPED)
    /// ``SocketEvent/Kind/handshakeFailedNoDetail``.
    public static let handshakeFailedNoDetail = Self(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
    /// ``SocketEvent/Kind/handshakeFailedProtocol``.
    public static let handshakeFailedProtocol = Self(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
    /// ``SocketEvent/Kind/handshakeFailedAuth``.
    public static let handshakeFailedAuth = Self(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
    /// ``SocketEvent/Kind/handshakeSucceeded``.
    public static let handshakeSucceeded = Self(rawValue: ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
    /// The three handshake failures.
    public static let handshakeFailed: Self = [
        .handshakeFailedNoDetail, .handshakeFailedProtocol, .handshakeFailedAuth,
    ]
    /// Every event of the stable monitor format (`ZMQ_EVENT_ALL`).
    public static let all = Self(rawValue: ZMQ_EVENT_ALL)
}
