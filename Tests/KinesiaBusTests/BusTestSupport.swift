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
