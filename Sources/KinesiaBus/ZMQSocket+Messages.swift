import CZeroMQ

/// Multipart messages: a message is one or more frames of bytes, delivered whole or not at all.
///
/// Sending copies each frame once into a libzmq message (`zmq_send`, the copy libzmq needs to
/// own the bytes); receiving reads each frame as a `zmq_msg_t` of whatever size arrived and
/// copies it once into Swift memory, so nothing is truncated and there is no size limit other
/// than memory (and `ZMQ_MAXMSGSIZE` if a peer sets it). Every frame of a message is received
/// before the call returns (`ZMQ_RCVMORE`).
///
/// The blocking calls wait without limit unless ``SocketOption/sendTimeout`` or
/// ``SocketOption/receiveTimeout`` is set, in which case they throw ``ZMQError/wouldBlock``
/// when it expires. The `try` calls never wait and return `nil` or `false` instead of blocking.
extension ZMQSocket {
    /// Sends a multipart message, waiting while the socket cannot queue it (PUSH, DEALER... at
    /// their high-water mark; PUB and ROUTER drop instead of waiting).
    ///
    /// ```swift
    /// try publisher.send([Array("pose/cam0/".utf8), payload])
    /// ```
    ///
    /// - Parameter frames: One or more frames; an empty array is ``ZMQError/invalidArgument``.
    /// - Throws: ``ZMQError/wouldBlock`` if the send timeout expired, ``ZMQError/notSupported``
    ///   on a socket type that cannot send, ``ZMQError/wrongState`` (REQ/REP out of turn),
    ///   ``ZMQError/hostUnreachable``, ``ZMQError/terminated``, ``ZMQError/closed``.
    public func send(_ frames: [[UInt8]]) throws(ZMQError) {
        guard try sendMessage(frames, dontWait: false) else { throw ZMQError.wouldBlock }
    }

    /// Sends a multipart message if it can be queued now.
    ///
    /// - Returns: `true` if the whole message was queued, `false` if the socket would have had
    ///   to wait (nothing was sent).
    /// - Throws: As ``send(_:)``, except for would-block.
    public func trySend(_ frames: [[UInt8]]) throws(ZMQError) -> Bool {
        try sendMessage(frames, dontWait: true)
    }

    /// Receives one whole multipart message, waiting for it.
    ///
    /// - Returns: The frames, at least one.
    /// - Throws: ``ZMQError/wouldBlock`` if the receive timeout expired,
    ///   ``ZMQError/notSupported`` on a socket type that cannot receive, ``ZMQError/wrongState``,
    ///   ``ZMQError/terminated``, ``ZMQError/closed``.
    public func receive() throws(ZMQError) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        guard try receiveMessage(into: &frames, dontWait: false) else { throw ZMQError.wouldBlock }
        return frames
    }

    /// Receives one whole multipart message if one is waiting.
    ///
    /// - Returns: The frames, or `nil` if no message is there now.
    /// - Throws: As ``receive()``, except for would-block.
    public func tryReceive() throws(ZMQError) -> [[UInt8]]? {
        var frames: [[UInt8]] = []
        guard try receiveMessage(into: &frames, dontWait: true) else { return nil }
        return frames
    }

    /// Receives one whole multipart message, waiting at most `timeout`.
    ///
    /// - Returns: The frames, or `nil` if none arrived in time.
    /// - Throws: As ``receive()``, except for would-block.
    public func receive(timeout: Duration) throws(ZMQError) -> [[UInt8]]? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if let frames = try tryReceive() { return frames }
            let remaining = clock.now.duration(to: deadline)
            if remaining <= .zero { return nil }
            var poller = Poller()
            poller.add(self, for: .readable)
            _ = try poller.poll(timeout: remaining)
        }
    }

    /// Receives one whole multipart message into `frames`, reusing the storage of its arrays:
    /// in a steady stream of similar messages this allocates nothing.
    ///
    /// - Parameter frames: Replaced by the frames received (unspecified if it throws).
    /// - Throws: As ``receive()``.
    public func receive(into frames: inout [[UInt8]]) throws(ZMQError) {
        guard try receiveMessage(into: &frames, dontWait: false) else { throw ZMQError.wouldBlock }
    }

    /// Receives one whole multipart message into `frames` if one is waiting, reusing storage.
    ///
    /// - Returns: `true` if a message was received, `false` (and `frames` untouched) if none
    ///   was there.
    /// - Throws: As ``receive()``, except for would-block.
    public func tryReceive(into frames: inout [[UInt8]]) throws(ZMQError) -> Bool {
        try receiveMessage(into: &frames, dontWait: true)
    }

    /// Receives one whole multipart message into `frames` if one is waiting, with the ZAP user
    /// id of the connection it came on (`zmq_msg_gets(msg, "User-Id")`: what the ZAP handler
    /// admitted it as; `nil` on a connection ZAP did not look at).
    ///
    /// - Returns: `true` if a message was received, `false` if none was there.
    /// - Throws: As ``receive()``, except for would-block.
    public func tryReceive(into frames: inout [[UInt8]], userID: inout String?) throws(ZMQError) -> Bool {
        try receiveMessage(into: &frames, dontWait: true, userID: &userID, wantsUserID: true)
    }

    /// Sends frame by frame. Only the first frame may be refused as would-block: libzmq accepts
    /// the rest of a message once its first frame is queued, so a message is never half sent.
    private func sendMessage(_ frames: [[UInt8]], dontWait: Bool) throws(ZMQError) -> Bool {
        guard !frames.isEmpty else { throw ZMQError.invalidArgument }
        return try withHandle { (socket) throws(ZMQError) -> Bool in
            let last = frames.count - 1
            for index in frames.indices {
                var flags: Int32 = index < last ? ZMQ_SNDMORE : 0
                if dontWait && index == 0 { flags |= ZMQ_DONTWAIT }
                let result = try frames[index].withUnsafeBytes { buffer in
                    Result { () throws(ZMQError) in
                        try zmqNonBlockingCall { zmq_send(socket, buffer.baseAddress, buffer.count, flags) }
                    }
                }.get()
                if case .wouldBlock = result {
                    if index == 0 { return false }
                    throw ZMQError.wouldBlock
                }
            }
            return true
        }
    }

    /// Receives every frame of one message into `frames` through one `zmq_msg_t`.
    private func receiveMessage(into frames: inout [[UInt8]], dontWait: Bool) throws(ZMQError) -> Bool {
        var ignored: String?
        return try receiveMessage(into: &frames, dontWait: dontWait, userID: &ignored, wantsUserID: false)
    }

    private func receiveMessage(
        into frames: inout [[UInt8]], dontWait: Bool, userID: inout String?, wantsUserID: Bool
    ) throws(ZMQError) -> Bool {
        try withHandle { (socket) throws(ZMQError) -> Bool in
            try withUnsafeTemporaryAllocation(of: zmq_msg_t.self, capacity: 1) { buffer in
                Result { () throws(ZMQError) in
                    try receiveFrames(
                        into: &frames, from: socket, message: buffer.baseAddress!, dontWait: dontWait,
                        userID: &userID, wantsUserID: wantsUserID)
                }
            }.get()
        }
    }

    private func receiveFrames(
        into frames: inout [[UInt8]], from socket: UnsafeMutableRawPointer,
        message: UnsafeMutablePointer<zmq_msg_t>, dontWait: Bool, userID: inout String?, wantsUserID: Bool
    ) throws(ZMQError) -> Bool {
        _ = zmq_msg_init(message)
        defer { _ = zmq_msg_close(message) }
        var count = 0
        var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
        while true {
            let result = try zmqNonBlockingCall { zmq_msg_recv(message, socket, flags) }
            if case .wouldBlock = result {
                // Later frames of a message are already there: only the first can be missing.
                if count == 0 { return false }
                throw ZMQError.wouldBlock
            }
            // A ROUTER's first frame (the routing id it adds) carries no properties: the
            // connection's come with the frames received from it.
            if wantsUserID, count == 0 { userID = nil }
            if wantsUserID, userID == nil, let value = zmq_msg_gets(message, "User-Id") {
                userID = String(cString: value)
            }
            let bytes = UnsafeRawBufferPointer(start: zmq_msg_data(message), count: zmq_msg_size(message))
            if count < frames.count {
                Self.replaceContents(of: &frames[count], with: bytes)
            } else {
                frames.append(Array(bytes))
            }
            count += 1
            if zmq_msg_more(message) == 0 { break }
            flags = 0
        }
        frames.removeLast(frames.count - count)
        return true
    }

    /// Overwrites `frame` with `bytes`, in place when the sizes match (the steady state of a
    /// stream of similar messages), else reusing the array's capacity.
    @inline(__always)
    private static func replaceContents(of frame: inout [UInt8], with bytes: UnsafeRawBufferPointer) {
        if frame.count == bytes.count {
            frame.withUnsafeMutableBytes { target in
                if let base = target.baseAddress, let source = bytes.baseAddress {
                    base.copyMemory(from: source, byteCount: bytes.count)
                }
            }
        } else {
            frame.removeAll(keepingCapacity: true)
            frame.append(contentsOf: bytes)
        }
    }
}
