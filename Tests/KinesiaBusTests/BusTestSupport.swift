import Foundation
import KinesiaBus
import Testing

/// Bytes of a UTF-8 string.
func bytes(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// A deterministic pattern of `count` bytes (so a truncation, a shift or an over-read shows):
/// a pseudo-random block of a prime length, repeated.
func pattern(count: Int, seed: UInt8 = 7) -> [UInt8] {
    var state = UInt32(seed) &* 2_654_435_761
    let block = (0..<min(count, 4099)).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
    var result: [UInt8] = []
    result.reserveCapacity(count)
    while result.count < count {
        result.append(contentsOf: block.prefix(count - result.count))
    }
    return result
}

/// Publishes `frames` every few milliseconds until `subscriber` receives a message (the slow
/// joiner of a plain PUB), then returns what it received. Gives up after two seconds.
func publishUntilReceived(
    _ frames: [[UInt8]], publisher: ZMQSocket, subscriber: ZMQSocket
) throws -> [[UInt8]]? {
    for _ in 0..<200 {
        try publisher.send(frames)
        if let received = try subscriber.receive(timeout: .milliseconds(10)) { return received }
    }
    return nil
}

/// Runs `body` on a new thread and returns a semaphore signalled when it ends.
func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.start()
    return done
}

/// Two sockets of a fresh context: the first bound to `endpoint`, the second connected to the
/// endpoint the bind returned (the real port for `tcp://127.0.0.1:*`). Each socket retains the
/// context and closes when the test releases it.
func connectedSockets(
    _ boundType: SocketType, _ connectedType: SocketType, at endpoint: String
) throws -> (bound: ZMQSocket, connected: ZMQSocket) {
    let context = try ZMQContext()
    let bound = try ZMQSocket(boundType, context: context)
    let connected = try ZMQSocket(connectedType, context: context)
    try connected.connect(try bound.bind(endpoint))
    return (bound, connected)
}
