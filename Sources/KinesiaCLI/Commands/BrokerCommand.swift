import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaWire

/// `kinesia broker`: the XSUB/XPUB proxy every other process connects to.
///
/// Publishers connect to its frontend, subscribers to its backend (see ``BusAddress``); it
/// forwards messages down and subscriptions up. It publishes its statistics on
/// `health/broker/` about once a second, refuses to start when another broker serves the same
/// directory, and stops on SIGINT or SIGTERM with status 0, removing the socket files it bound
/// (never one put there since).
public struct BrokerCommand: ParsableCommand {
    /// `broker`, with its help.
    public static let configuration = CommandConfiguration(
        name: "broker", summary: "Run the bus: the proxy between publishers and subscribers.",
        discussion: """
            Binds the frontend (publishers) and the backend (subscribers) of the bus: \
            DIR/pub.sock and DIR/sub.sock, or tcp://HOST:PORT and PORT+1. Only one broker may \
            serve a directory (DIR/broker.lock). Publishes its counters on health/<name>/ \
            every second. Stops on SIGINT or SIGTERM.
            """)

    /// The options.
    public static var arguments: [Argument<BrokerCommand>] {
        [
            BusProcess.busArgument(\.bus),
            BusProcess.nameArgument(\.name, example: "broker"),
            .option(
                "hwm", \.highWaterMark, valueName: "n",
                help: "Messages queued per connection before the broker drops (both sides)."),
        ]
    }

    /// `--bus`.
    public var bus: String?
    /// `--name`.
    public var name: String?
    /// `--hwm`.
    public var highWaterMark = 10_000

    /// A command with every default.
    public init() {}

    /// Checks `--hwm`.
    public func validate() throws(CLIError) {
        guard (1...10_000_000).contains(highWaterMark) else {
            throw CLIError.usage("--hwm must be 1...10000000, got \(highWaterMark)")
        }
    }

    /// Serves the bus until a signal.
    public func run(context: CommandContext) async throws {
        let bus = try BusProcess.bus(bus, environment: context.environment)
        let name = try BusProcess.processName(name, environment: context.environment, fallback: "broker")
        let highWaterMark = Int32(highWaterMark)
        try await BusProcess.run(context: context) { stop in
            try Self.serve(bus: bus, name: name, highWaterMark: highWaterMark, stop: stop, context: context)
        }
    }

    private static func serve(
        bus: BusAddress, name: String, highWaterMark: Int32, stop: StopToken, context: CommandContext
    ) throws {
        let log = context.logger
        let lock = try bus.directory.map { (directory) throws(CLIError) in
            try BrokerLock(directory: directory)
        }
        let zmq = try ZMQContext()
        let proxy: ZMQProxy
        do {
            proxy = try startProxy(context: zmq, bus: bus, highWaterMark: highWaterMark)
        } catch {
            zmq.terminate()
            lock?.release()
            throw error
        }
        do {
            try lock?.recordSockets([BusAddress.publisherFileName, BusAddress.subscriberFileName])
        } catch {
            proxy.stop()
            zmq.terminate()
            lock?.release()
            throw error
        }
        let publisher = try BusPublisher(context: zmq, bus: bus, linger: .milliseconds(100))
        var health = try HealthPublisher(process: name, role: "broker")
        log.info(
            "serving \(bus) (publishers: \(bus.publisherEndpoint), subscribers: \(bus.subscriberEndpoint))")

        var failure: String?
        while !stop.isRequested {
            guard proxy.isRunning else {
                failure = "the proxy stopped: \(proxy.endingError?.description ?? "unknown reason")"
                break
            }
            health.publishIfDue(counters: { counters(proxy) }, via: publisher)
            sleepThread(.milliseconds(50))
        }
        publisher.close()
        proxy.stop()
        zmq.terminate()
        // Only the socket files this broker bound (same inode), never one put there since.
        lock?.removeSockets()
        lock?.release()
        if let failure { throw CLIError.failure(failure) }
        log.info("stopped")
    }

    /// Binds the XSUB frontend and the XPUB backend (socket files private to the user) and
    /// starts the proxy.
    private static func startProxy(context: ZMQContext, bus: BusAddress, highWaterMark: Int32)
        throws(CLIError)
        -> ZMQProxy
    {
        do {
            let frontend = try ZMQSocket(.xsub, context: context)
            let backend = try ZMQSocket(.xpub, context: context)
            try frontend.set(.sendHighWaterMark, highWaterMark)
            try frontend.set(.receiveHighWaterMark, highWaterMark)
            try backend.set(.sendHighWaterMark, highWaterMark)
            try backend.set(.receiveHighWaterMark, highWaterMark)
            if bus.directory != nil {
                try frontend.bindRestricted(bus.publisherEndpoint)
                try backend.bindRestricted(bus.subscriberEndpoint)
            } else {
                try frontend.bind(bus.publisherEndpoint)
                try backend.bind(bus.subscriberEndpoint)
            }
            return try ZMQProxy(frontend: frontend, backend: backend)
        } catch .addressInUse {
            throw CLIError.failure(
                "cannot listen on \(bus): address already in use (is another broker running?)")
        } catch {
            throw CLIError.failure("cannot listen on \(bus): \(error.message)")
        }
    }

    private static func counters(_ proxy: ZMQProxy) -> [String: Int] {
        guard let statistics = try? proxy.statistics() else { return [:] }
        return [
            "published": Int(clamping: statistics.frontend.messagesReceived),
            "publishedBytes": Int(clamping: statistics.frontend.bytesReceived),
            "delivered": Int(clamping: statistics.backend.messagesSent),
            "deliveredBytes": Int(clamping: statistics.backend.bytesSent),
            "subscriptions": Int(clamping: statistics.backend.messagesReceived),
            "subscriptionsForwarded": Int(clamping: statistics.frontend.messagesSent),
        ]
    }
}
