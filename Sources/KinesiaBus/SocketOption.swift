import CZeroMQ
import KinesiaSystem

/// A socket option that can be read and written, typed by its value.
///
/// ```swift
/// try socket.set(.sendHighWaterMark, 10_000)
/// try socket.set(.receiveTimeout, .milliseconds(500))
/// try socket.set(.curveServerKey, serverKeys.publicKey)
/// let linger = try socket.get(.linger)           // Duration? (nil: forever)
/// ```
///
/// Durations are passed to libzmq in whole milliseconds, rounded up, capped at `Int32.max`.
/// Write-only options are ``WriteOnlySocketOption``s; read-only ones are
/// ``ReadOnlySocketOption``s.
public struct SocketOption<Value>: Sendable {
    let name: Int32
    let codec: OptionCodec<Value>
}

/// A socket option that libzmq only lets you write (subscriptions, XPUB modes).
public struct WriteOnlySocketOption<Value>: Sendable {
    let name: Int32
    let codec: OptionCodec<Value>
}

/// A socket option that libzmq only lets you read (the last bound endpoint, readiness...).
public struct ReadOnlySocketOption<Value>: Sendable {
    let name: Int32
    let codec: OptionCodec<Value>
}

/// How an option's value travels through `zmq_setsockopt` and `zmq_getsockopt`.
struct OptionCodec<Value>: Sendable {
    let kind: RawOptionKind
    let encode: @Sendable (Value) throws(ZMQError) -> RawOptionValue
    let decode: @Sendable (RawOptionValue) -> Value
}

/// An option value as libzmq sees it.
enum RawOptionValue {
    case int32(Int32)
    case int64(Int64)
    case bytes([UInt8])
}

/// The C type of an option.
enum RawOptionKind {
    case int32
    case int64
    /// Read through a buffer of this many bytes.
    case bytes(capacity: Int)
}

extension OptionCodec where Value == Int32 {
    static var int32: Self {
        Self(kind: .int32, encode: { .int32($0) }, decode: { $0.int32 })
    }
}

extension OptionCodec where Value == Int64 {
    static var int64: Self {
        Self(kind: .int64, encode: { .int64($0) }, decode: { $0.int64 })
    }
}

extension OptionCodec where Value == Bool {
    static var bool: Self {
        Self(kind: .int32, encode: { .int32($0 ? 1 : 0) }, decode: { $0.int32 != 0 })
    }
}

extension OptionCodec where Value == Duration {
    /// Milliseconds, zero or more.
    static var milliseconds: Self {
        Self(
            kind: .int32, encode: { .int32(millisecondsClamped($0)) },
            decode: { .milliseconds(max($0.int32, 0)) })
    }
}

extension OptionCodec where Value == Duration? {
    /// Milliseconds, `-1` (infinite) as `nil`.
    static var timeout: Self {
        Self(
            kind: .int32, encode: { .int32($0.map(millisecondsClamped) ?? -1) },
            decode: { $0.int32 < 0 ? nil : .milliseconds($0.int32) })
    }
}

extension OptionCodec where Value == [UInt8] {
    static func bytes(capacity: Int) -> Self {
        Self(kind: .bytes(capacity: capacity), encode: { .bytes($0) }, decode: { $0.bytes })
    }
}

extension OptionCodec where Value == String {
    /// UTF-8 text; reads drop the terminating NUL.
    static func string(capacity: Int) -> Self {
        Self(
            kind: .bytes(capacity: capacity), encode: { .bytes(Array($0.utf8)) },
            decode: { String(decoding: $0.bytes.prefix { $0 != 0 }, as: UTF8.self) })
    }

    /// A CURVE key as 40 Z85 characters. Anything else is ``ZMQError/invalidArgument`` (libzmq
    /// would read 32 bytes as a raw binary key).
    static var z85Key: Self {
        Self(
            kind: .bytes(capacity: 41),
            encode: { (key) throws(ZMQError) -> RawOptionValue in
                let bytes = Array(key.utf8)
                guard bytes.count == 40 else { throw ZMQError.invalidArgument }
                return .bytes(bytes)
            },
            decode: { String(decoding: $0.bytes.prefix { $0 != 0 }, as: UTF8.self) })
    }
}

extension RawOptionValue {
    var int32: Int32 {
        if case .int32(let value) = self { return value }
        return 0
    }

    var int64: Int64 {
        if case .int64(let value) = self { return value }
        return 0
    }

    var bytes: [UInt8] {
        if case .bytes(let value) = self { return value }
        return []
    }
}

/// Whole milliseconds, rounded up, clamped to `0...Int32.max`.
func millisecondsClamped(_ duration: Duration) -> Int32 { duration.millisecondsRoundedUp }

extension SocketOption where Value == Int32 {
    /// `ZMQ_SNDHWM`: outgoing messages queued per peer before the socket drops (PUB, ROUTER)
    /// or blocks (the others). Zero means no limit. Set it before bind or connect.
    public static var sendHighWaterMark: Self { Self(name: ZMQ_SNDHWM, codec: .int32) }
    /// `ZMQ_RCVHWM`: incoming messages queued per peer. Zero means no limit. Set it before bind
    /// or connect.
    public static var receiveHighWaterMark: Self { Self(name: ZMQ_RCVHWM, codec: .int32) }
}

extension SocketOption where Value == Int64 {
    /// `ZMQ_MAXMSGSIZE`: the largest frame this socket accepts from a peer, in bytes; `-1` (the
    /// default) is no limit. A peer that sends a larger frame is disconnected before the frame
    /// is stored, so a hostile peer cannot make the socket allocate it. Set it before bind or
    /// connect.
    ///
    /// Together with the high-water marks it bounds a socket's queues in bytes: at most
    /// HWM x this size per peer.
    public static var maximumMessageSize: Self { Self(name: ZMQ_MAXMSGSIZE, codec: .int64) }
}

extension SocketOption where Value == Duration? {
    /// `ZMQ_LINGER`: how long ``ZMQSocket/close()`` keeps unsent messages; `nil` is forever.
    /// Every ``ZMQSocket`` sets it when made (``ZMQSocket/defaultLinger``).
    public static var linger: Self { Self(name: ZMQ_LINGER, codec: .timeout) }
    /// `ZMQ_SNDTIMEO`: how long a blocking send waits before throwing ``ZMQError/wouldBlock``;
    /// `nil` (the default) waits forever.
    public static var sendTimeout: Self { Self(name: ZMQ_SNDTIMEO, codec: .timeout) }
    /// `ZMQ_RCVTIMEO`: how long a blocking receive waits before throwing
    /// ``ZMQError/wouldBlock``; `nil` (the default) waits forever.
    public static var receiveTimeout: Self { Self(name: ZMQ_RCVTIMEO, codec: .timeout) }
}

extension SocketOption where Value == Duration {
    /// `ZMQ_HEARTBEAT_IVL`: send a ZMTP PING this often on an idle connection; zero disables.
    public static var heartbeatInterval: Self { Self(name: ZMQ_HEARTBEAT_IVL, codec: .milliseconds) }
    /// `ZMQ_HEARTBEAT_TIMEOUT`: close the connection when no traffic arrives this long after a
    /// PING (defaults to the interval).
    public static var heartbeatTimeout: Self { Self(name: ZMQ_HEARTBEAT_TIMEOUT, codec: .milliseconds) }
    /// `ZMQ_HEARTBEAT_TTL`: asks the peer to close the connection when it hears nothing from
    /// this socket for this long (libzmq keeps tenths of a second).
    public static var heartbeatTTL: Self { Self(name: ZMQ_HEARTBEAT_TTL, codec: .milliseconds) }
    /// `ZMQ_HANDSHAKE_IVL`: close a connection whose ZMTP handshake has not completed this
    /// long after it was made (default 30 s; zero: never), so idle connections that never
    /// speak do not hold a file descriptor for long.
    public static var handshakeInterval: Self { Self(name: ZMQ_HANDSHAKE_IVL, codec: .milliseconds) }
    /// `ZMQ_RECONNECT_IVL`: wait before reconnecting a lost connection (default 100 ms).
    public static var reconnectInterval: Self { Self(name: ZMQ_RECONNECT_IVL, codec: .milliseconds) }
    /// `ZMQ_RECONNECT_IVL_MAX`: the cap of the exponential back-off of reconnections; zero keeps
    /// the interval constant.
    public static var reconnectIntervalMax: Self {
        Self(name: ZMQ_RECONNECT_IVL_MAX, codec: .milliseconds)
    }
}

extension SocketOption where Value == Bool {
    /// `ZMQ_CURVE_SERVER`: this socket is the CURVE server of its connections (it needs
    /// ``curveSecretKey``). See ``ZMQSocket/makeCurveServer(secretKey:)``.
    public static var curveServer: Self { Self(name: ZMQ_CURVE_SERVER, codec: .bool) }
    /// `ZMQ_IMMEDIATE`: queue messages only to completed connections (a connecting socket does
    /// not buffer for peers that are not there yet).
    public static var immediate: Self { Self(name: ZMQ_IMMEDIATE, codec: .bool) }
}

extension SocketOption where Value == String {
    /// `ZMQ_CURVE_PUBLICKEY`: this socket's long-term public key (Z85, 40 characters).
    public static var curvePublicKey: Self { Self(name: ZMQ_CURVE_PUBLICKEY, codec: .z85Key) }
    /// `ZMQ_CURVE_SECRETKEY`: this socket's long-term secret key (Z85, 40 characters).
    public static var curveSecretKey: Self { Self(name: ZMQ_CURVE_SECRETKEY, codec: .z85Key) }
    /// `ZMQ_CURVE_SERVERKEY`: a client's copy of the server's public key (Z85, 40 characters).
    public static var curveServerKey: Self { Self(name: ZMQ_CURVE_SERVERKEY, codec: .z85Key) }
    /// `ZMQ_ZAP_DOMAIN`: the authentication domain passed to the ZAP handler.
    public static var zapDomain: Self { Self(name: ZMQ_ZAP_DOMAIN, codec: .string(capacity: 256)) }
}

extension SocketOption where Value == [UInt8] {
    /// `ZMQ_ROUTING_ID`: the identity a ROUTER peer sees for this socket (1 to 255 bytes, not
    /// starting with a zero byte). Set it before connecting.
    public static var routingID: Self { Self(name: ZMQ_ROUTING_ID, codec: .bytes(capacity: 256)) }
}

extension WriteOnlySocketOption where Value == [UInt8] {
    /// `ZMQ_SUBSCRIBE`: a SUB socket receives the messages whose first frame starts with this
    /// prefix (empty: everything). See ``ZMQSocket/subscribe(_:)-(String)``.
    public static var subscribe: Self { Self(name: ZMQ_SUBSCRIBE, codec: .bytes(capacity: 0)) }
    /// `ZMQ_UNSUBSCRIBE`: removes one subscription made with the same prefix.
    public static var unsubscribe: Self { Self(name: ZMQ_UNSUBSCRIBE, codec: .bytes(capacity: 0)) }
}

extension WriteOnlySocketOption where Value == Bool {
    /// ROUTER: a message to a peer whose queue is full (or that is not connected) is refused
    /// (`EAGAIN` with a non-blocking send, `EHOSTUNREACH`) instead of dropped silently
    /// (`ZMQ_ROUTER_MANDATORY`).
    public static var routerMandatory: Self { Self(name: ZMQ_ROUTER_MANDATORY, codec: .bool) }
    /// `ZMQ_XPUB_NODROP`: an XPUB blocks (or returns would-block) at the high-water mark instead
    /// of dropping. One slow subscriber then stalls all of them.
    public static var xpubNoDrop: Self { Self(name: ZMQ_XPUB_NODROP, codec: .bool) }
    /// `ZMQ_XPUB_VERBOSE`: an XPUB passes every subscription message up, not only the first of
    /// each prefix.
    public static var xpubVerbose: Self { Self(name: ZMQ_XPUB_VERBOSE, codec: .bool) }
}

extension ReadOnlySocketOption where Value == String {
    /// `ZMQ_LAST_ENDPOINT`: the endpoint of the last bind or connect, with the port chosen for a
    /// wildcard bind.
    public static var lastEndpoint: Self { Self(name: ZMQ_LAST_ENDPOINT, codec: .string(capacity: 1024)) }
}

extension ReadOnlySocketOption where Value == PollEvents {
    /// `ZMQ_EVENTS`: whether a message can be received or sent now without blocking. Read it
    /// again after every send and receive: the file descriptor (``fileDescriptor``) is
    /// edge-triggered.
    public static var readiness: Self {
        Self(
            name: ZMQ_EVENTS,
            codec: OptionCodec(
                kind: .int32, encode: { .int32(Int32($0.rawValue)) },
                decode: { PollEvents(rawValue: Int16(truncatingIfNeeded: $0.int32)) }))
    }
}

extension ReadOnlySocketOption where Value == Int32 {
    /// `ZMQ_FD`: a file descriptor that becomes readable when ``readiness`` may have changed
    /// (edge-triggered, for integration with an event loop).
    public static var fileDescriptor: Self { Self(name: ZMQ_FD, codec: .int32) }
}

extension ReadOnlySocketOption where Value == Bool {
    /// `ZMQ_RCVMORE`: whether the last frame received has more frames after it. The message
    /// calls of ``ZMQSocket`` always receive whole messages, so this is for diagnostics.
    public static var hasMoreFrames: Self { Self(name: ZMQ_RCVMORE, codec: .bool) }
}

extension ZMQSocket {
    /// Writes a socket option.
    ///
    /// - Throws: ``ZMQError/invalidArgument`` for a value libzmq refuses (or an option that
    ///   does not apply to this socket type), ``ZMQError/closed``, ``ZMQError/terminated``.
    public func set<Value>(_ option: SocketOption<Value>, _ value: Value) throws(ZMQError) {
        try write(name: option.name, try option.codec.encode(value))
    }

    /// Writes a write-only socket option.
    ///
    /// - Throws: ``ZMQError/invalidArgument``, ``ZMQError/closed``, ``ZMQError/terminated``.
    public func set<Value>(_ option: WriteOnlySocketOption<Value>, _ value: Value) throws(ZMQError) {
        try write(name: option.name, try option.codec.encode(value))
    }

    /// Reads a socket option.
    ///
    /// - Throws: ``ZMQError/invalidArgument`` if it does not apply to this socket type,
    ///   ``ZMQError/closed``, ``ZMQError/terminated``.
    public func get<Value>(_ option: SocketOption<Value>) throws(ZMQError) -> Value {
        option.codec.decode(try read(name: option.name, kind: option.codec.kind))
    }

    /// Reads a read-only socket option.
    ///
    /// - Throws: ``ZMQError/closed``, ``ZMQError/terminated``.
    public func get<Value>(_ option: ReadOnlySocketOption<Value>) throws(ZMQError) -> Value {
        option.codec.decode(try read(name: option.name, kind: option.codec.kind))
    }

    /// Subscribes a SUB socket to messages whose first frame starts with `prefix` (empty:
    /// all). Topics of this project end with `/` so that prefixes never match a longer name.
    public func subscribe(_ prefix: [UInt8]) throws(ZMQError) {
        try set(.subscribe, prefix)
    }

    /// Subscribes a SUB socket to messages whose first frame starts with the UTF-8 `prefix`.
    public func subscribe(_ prefix: String) throws(ZMQError) {
        try set(.subscribe, Array(prefix.utf8))
    }

    /// Removes a subscription made with the same prefix.
    public func unsubscribe(_ prefix: [UInt8]) throws(ZMQError) {
        try set(.unsubscribe, prefix)
    }

    /// Removes a subscription made with the same UTF-8 prefix.
    public func unsubscribe(_ prefix: String) throws(ZMQError) {
        try set(.unsubscribe, Array(prefix.utf8))
    }

    private func write(name: Int32, _ raw: RawOptionValue) throws(ZMQError) {
        try withHandle { (socket) throws(ZMQError) in
            switch raw {
            case .int32(let value):
                var value = value
                _ = try zmqCall { zmq_setsockopt(socket, name, &value, MemoryLayout<Int32>.size) }
            case .int64(let value):
                var value = value
                _ = try zmqCall { zmq_setsockopt(socket, name, &value, MemoryLayout<Int64>.size) }
            case .bytes(let bytes):
                _ = try bytes.withUnsafeBytes { buffer in
                    Result { () throws(ZMQError) in
                        try zmqCall { zmq_setsockopt(socket, name, buffer.baseAddress, buffer.count) }
                    }
                }.get()
            }
        }
    }

    private func read(name: Int32, kind: RawOptionKind) throws(ZMQError) -> RawOptionValue {
        try withHandle { (socket) throws(ZMQError) -> RawOptionValue in
            switch kind {
            case .int32:
                var value: Int32 = 0
                var size = MemoryLayout<Int32>.size
                _ = try zmqCall { zmq_getsockopt(socket, name, &value, &size) }
                return .int32(value)
            case .int64:
                var value: Int64 = 0
                var size = MemoryLayout<Int64>.size
                _ = try zmqCall { zmq_getsockopt(socket, name, &value, &size) }
                return .int64(value)
            case .bytes(let capacity):
                var size = capacity
                var bytes = [UInt8](repeating: 0, count: capacity)
                _ = try bytes.withUnsafeMutableBytes { buffer in
                    Result { () throws(ZMQError) in
                        try zmqCall { zmq_getsockopt(socket, name, buffer.baseAddress, &size) }
                    }
                }.get()
                bytes.removeLast(capacity - min(size, capacity))
                return .bytes(bytes)
            }
        }
    }
}
