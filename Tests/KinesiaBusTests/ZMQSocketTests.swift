import Foundation
import KinesiaBus
import Testing

struct ZMQSocketTests {
    @Test func errorsCarryTheErrnoAndLibzmqsMessage() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(.push, context: context)
        defer { socket.close() }
        #expect(throws: ZMQError.protocolNotSupported) { try socket.connect("bogus://nowhere") }
        do {
            try socket.bind("tcp://127.0.0.1:not-a-port")
            Issue.record("a bind to a malformed endpoint succeeded")
        } catch {
            #expect(error == .invalidArgument)
            #expect(error.code == ZMQError.invalidArgument.code)
            #expect(error.message == "Invalid argument")
            #expect(error.description == "Invalid argument (errno \(error.code))")
        }
        #expect(ZMQError.terminated.message == "Context was terminated")
        #expect(ZMQError.wouldBlock.message == "Resource temporarily unavailable")
    }

    @Test func receivingOnAPublisherIsNotSupported() throws {
        let context = try ZMQContext()
        let publisher = try ZMQSocket(.pub, context: context)
        defer { publisher.close() }
        #expect(throws: ZMQError.notSupported) { try publisher.tryReceive() }
    }

    @Test func nonBlockingReceiveReturnsNilInsteadOfWouldBlock() throws {
        let context = try ZMQContext()
        let pull = try ZMQSocket(.pull, context: context)
        defer { pull.close() }
        try pull.bind("tcp://127.0.0.1:*")
        #expect(try pull.tryReceive() == nil)
        var frames: [[UInt8]] = [bytes("untouched")]
        #expect(try pull.tryReceive(into: &frames) == false)
        #expect(frames == [bytes("untouched")])
        #expect(try pull.receive(timeout: .milliseconds(5)) == nil)
    }

    @Test func blockingReceiveThrowsWouldBlockWhenItsTimeoutExpires() throws {
        let context = try ZMQContext()
        let pull = try ZMQSocket(.pull, context: context)
        defer { pull.close() }
        try pull.set(.receiveTimeout, .milliseconds(10))
        try pull.bind("tcp://127.0.0.1:*")
        #expect(throws: ZMQError.wouldBlock) { try pull.receive() }
    }

    @Test func nonBlockingSendReturnsFalseWhenNoPeerCanTakeTheMessage() throws {
        let context = try ZMQContext()
        let push = try ZMQSocket(.push, context: context)
        defer { push.close() }
        try push.bind("tcp://127.0.0.1:*")  // no peer: a PUSH has nowhere to queue
        #expect(try push.trySend([bytes("lost")]) == false)
        try push.set(.sendTimeout, .milliseconds(10))
        #expect(throws: ZMQError.wouldBlock) { try push.send([bytes("lost")]) }
    }

    @Test func closingTwiceIsSafeAndAClosedSocketRefusesWork() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(.pair, context: context)
        #expect(!socket.isClosed)
        socket.close()
        socket.close()
        #expect(socket.isClosed)
        #expect(throws: ZMQError.closed) { try socket.send([bytes("x")]) }
        #expect(throws: ZMQError.closed) { try socket.tryReceive() }
        #expect(throws: ZMQError.closed) { try socket.bind("inproc://closed") }
        #expect(throws: ZMQError.closed) { try socket.get(.linger) }
    }

    @Test func anEmptyMessageIsRejected() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(.pair, context: context)
        defer { socket.close() }
        #expect(throws: ZMQError.invalidArgument) { try socket.send([]) }
    }

    @Test func socketsGetAFiniteLingerWhenMade() throws {
        let context = try ZMQContext()
        let standard = try ZMQSocket(.pub, context: context)
        defer { standard.close() }
        let draining = try ZMQSocket(.pub, context: context, linger: .milliseconds(250))
        defer { draining.close() }
        #expect(try standard.get(.linger) == .zero)
        #expect(try draining.get(.linger) == .milliseconds(250))
    }

    @Test func terminatingAContextWithUnsentMessagesDoesNotHang() throws {
        let context = try ZMQContext()
        let push = try ZMQSocket(.push, context: context)
        // A peer that never answers: the messages stay queued in the socket.
        try push.connect("tcp://127.0.0.1:9")
        for _ in 0..<10 { try push.send([bytes("never delivered")]) }
        push.close()
        let terminated = onThread { context.terminate() }
        #expect(terminated.wait(timeout: .now() + 5) == .success)
    }

    @Test func terminatingAContextWakesSocketsBlockedInOtherThreads() throws {
        let context = try ZMQContext()
        let outcome = OSAllocatedError()
        let receiverReady = DispatchSemaphore(value: 0)
        let receiverDone = onThread {
            do {
                let pull = try ZMQSocket(.pull, context: context)
                defer { pull.close() }
                try pull.bind("inproc://blocked")
                receiverReady.signal()
                _ = try pull.receive()
            } catch {
                outcome.set(error)
            }
        }
        #expect(receiverReady.wait(timeout: .now() + 5) == .success)
        let terminated = onThread { context.terminate() }
        #expect(terminated.wait(timeout: .now() + 5) == .success)
        #expect(receiverDone.wait(timeout: .now() + 5) == .success)
        #expect(outcome.get() == .terminated)
        #expect(throws: ZMQError.terminated) { try ZMQSocket(.pull, context: context) }
    }

    @Test func shutdownRefusesNewSocketsAndTerminateIsIdempotent() throws {
        let context = try ZMQContext()
        context.shutdown()
        #expect(context.isShutDown)
        #expect(throws: ZMQError.terminated) { try ZMQSocket(.pub, context: context) }
        context.terminate()
        context.terminate()
    }

    @Test func bindToAWildcardPortReturnsTheChosenPort() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(.rep, context: context)
        defer { socket.close() }
        let endpoint = try socket.bind("tcp://127.0.0.1:*")
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        let port = Int(endpoint.split(separator: ":").last ?? "")
        #expect((port ?? 0) > 0)
        #expect(try socket.get(.lastEndpoint) == endpoint)
        try socket.unbind(endpoint)
        #expect(throws: ZMQError.notFound) { try socket.unbind(endpoint) }
    }
}

/// A ZMQError written by one thread and read by another.
final class OSAllocatedError: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var value: ZMQError?

    func set(_ error: any Error) {
        lock.withLock { value = error as? ZMQError ?? .invalidArgument }
    }

    func get() -> ZMQError? {
        lock.withLock { value }
    }
}
