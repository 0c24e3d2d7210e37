import KinesiaBus
public import KinesiaControl
import KinesiaSystem

/// Sends commands to the coordinator (`kinesia coordinator`) and waits for their answers:
/// what `kinesia session` does, for an application in Swift.
///
/// A request is sent again every second with the same id until its answer comes
/// (``ControlRetry``; the
/// coordinator answers an id once, and the same answer again after: a start sent twice
/// starts once), so a coordinator restarted meanwhile still answers. No answer within the
/// timeout is an error that says so.
///
/// ```swift
/// let client = ControlClient(bus: bus)
/// let plan = try SessionPlan(key: SessionKey(parsing: "cam0/left"),
///                            exerciseFile: SessionPlan.catalogExercise("squat"), analysis: .left)
/// let answer = try client.send(ControlRequest(id: ControlClient.newRequestID(), command: .start(plan)))
/// print(answer.message)   // "cam0/left started on worker w1 (run 3)"
/// ```
public struct ControlClient: Sendable {
    /// The bus whose coordinator it talks to.
    public let bus: BusAddress
    /// How long it waits for an answer.
    public let timeout: Duration

    /// A client of `bus`'s coordinator.
    public init(bus: BusAddress, timeout: Duration = .seconds(5)) {
        self.bus = bus
        self.timeout = timeout
    }

    /// A new request id: 16 random hexadecimal digits.
    public static func newRequestID() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Sends `request` and returns its answer, sending it again as ``ControlRetry`` says.
    ///
    /// - Parameter clock: What the retries and the timeout are timed on.
    /// - Throws: ``ControlClientError``: no answer in time, or the socket's error.
    public func send(_ request: ControlRequest, clock: some Clock<Duration> = ContinuousClock())
        throws(ControlClientError)
        -> ControlAnswer
    {
        do {
            let zmq = try ZMQContext()
            defer { zmq.terminate() }
            let socket = try ZMQSocket(.dealer, context: zmq, linger: .zero)
            defer { socket.close() }
            // Over TCP with keys: a CURVE client of the coordinator (the broker's key), whose
            // key needs the control role to command sessions.
            try socket.secure(for: bus)
            try socket.connect(bus.controlEndpoint)
            let bytes = ControlMessage.request(request).encoded()
            let elapsed = ElapsedClock(clock)
            var retry = ControlRetry(timeout: timeout)
            while true {
                let wait: Duration
                switch retry.next(now: elapsed.now) {
                case .giveUp:
                    throw ControlClientError.noAnswer(endpoint: bus.controlEndpoint, timeout: timeout)
                case .send:
                    _ = try socket.trySend([bytes])
                    continue
                case .wait(let duration):
                    wait = duration
                }
                guard let frames = try socket.receive(timeout: wait) else { continue }
                guard frames.count == 1, case .answer(let answer)? = try? ControlMessage(decoding: frames[0]),
                    answer.id == request.id
                else { continue }
                return answer
            }
        } catch let error as ControlClientError {
            throw error
        } catch {
            throw .socket("\(error)")
        }
    }
}

/// A command that got no answer.
public enum ControlClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing answered within the timeout.
    case noAnswer(endpoint: String, timeout: Duration)
    /// The control socket failed.
    case socket(String)

    public var description: String {
        switch self {
        case .noAnswer(let endpoint, let timeout):
            "no answer from the coordinator at \(endpoint) within \(timeout) (is kinesia coordinator running?)"
        case .socket(let message): "the control socket: \(message)"
        }
    }
}
