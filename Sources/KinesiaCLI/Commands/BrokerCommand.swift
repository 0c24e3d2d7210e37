import Foundation
import Glibc
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
                help:
                    "Messages queued per connection before the broker drops (both sides); with frames "
                    + "of at most 16 KiB, a queue holds at most this x 16 KiB."),
            BusSecurityOptions.keyArgument(\.security),
            .option(
                "allowed", \.allowed, valueName: "dir",
                help: "The allowed public keys, DIR/<role>/*.pub, read again at every connection "
                    + "(default: $KINESIA_ALLOWED, else ~/.config/kinesia/keys/allowed)."),
            BusSecurityOptions.insecureArgument(\.security),
        ]
    }

    /// `--bus`.
    public var bus: String?
    /// `--name`.
    public var name: String?
    /// `--hwm`.
    public var highWaterMark = 10_000
    /// `--key`, `--insecure` (`--server-key` is the clients').
    var security = BusSecurityOptions()
    /// `--allowed`.
    public var allowed: String?

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
        let mode = try BrokerSecurity.resolve(
            bus: bus, options: security, allowed: allowed, environment: context.environment)
        switch mode {
        case .insecure: context.logger.warning(BusSecurityOptions.insecureWarning(bus))
        case .curve(let key, let directory):
            context.logger.info(
                "CURVE on every TCP endpoint: server key \(key.name), allowed keys in \(directory)")
        case .localUser: break
        }
        try await BusProcess.run(context: context) { stop in
            try Self.serve(
                bus: bus, security: mode, name: name, highWaterMark: highWaterMark, stop: stop,
                context: context)
        }
    }

    private static func serve(
        bus: BusAddress, security: BrokerSecurity, name: String, highWaterMark: Int32, stop: StopToken,
        context: CommandContext
    ) throws {
        let log = context.logger
        let lock = try bus.directory.map { (directory) throws(CLIError) in
            try BrokerLock(directory: directory)
        }
        let descriptorLimit = FileDescriptorLimit.raiseToHardLimit()
        log.info("file descriptors: at most \(descriptorLimit)")
        var connections = BrokerConnections(descriptorLimit: descriptorLimit)
        let zmq = try ZMQContext()
        let proxy: ZMQProxy
        let monitors: (SocketMonitor, SocketMonitor)
        do {
            (proxy, monitors) = try startProxy(
                context: zmq, bus: bus, security: security, highWaterMark: highWaterMark)
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
        // The broker's own health goes through its frontend like any publisher's, with its own
        // key over CURVE (admitted with the role broker).
        var ownBus = bus
        if case .curve(let key, _) = security {
            ownBus.credentials = BusCredentials(key: key, serverKey: key.publicKey)
        }
        let publisher = try BusPublisher(context: zmq, bus: ownBus, linger: .milliseconds(100))
        var health = try HealthPublisher(process: name, role: "broker", problems: { log.warning($0) })
        if security == .insecure { health.constantCounters["insecure"] = 1 }
        log.info(
            "serving \(bus) (publishers: \(bus.publisherEndpoint), subscribers: \(bus.subscriberEndpoint))")

        var failure: String?
        while !stop.isRequested {
            guard proxy.isRunning else {
                failure = "the proxy stopped: \(proxy.endingError?.description ?? "unknown reason")"
                break
            }
            for monitor in [monitors.0, monitors.1] {
                while let event = try? monitor.next(timeout: .zero) {
                    if let warning = connections.record(event.kind, openDescriptors: openDescriptorCount) {
                        log.warning(warning)
                    }
                }
            }
            health.publishIfDue(
                counters: { counters(proxy).merging(connections.counters) { own, _ in own } }, via: publisher)
            sleepThread(.milliseconds(50))
        }
        publisher.close()
        monitors.0.close()
        monitors.1.close()
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
    private static func startProxy(
        context: ZMQContext, bus: BusAddress, security: BrokerSecurity, highWaterMark: Int32
    )
        throws(CLIError)
        -> (ZMQProxy, (SocketMonitor, SocketMonitor))
    {
        var monitors: (SocketMonitor, SocketMonitor)?
        do {
            let frontend = try ZMQSocket(.xsub, context: context)
            let backend = try ZMQSocket(.xpub, context: context)
            try frontend.set(.sendHighWaterMark, highWaterMark)
            try frontend.set(.receiveHighWaterMark, highWaterMark)
            try backend.set(.sendHighWaterMark, highWaterMark)
            try backend.set(.receiveHighWaterMark, highWaterMark)
            // Frames larger than any valid message disconnect their sender before they are
            // stored: each queue holds at most highWaterMark x maximumFrameSize bytes.
            let frameLimit = Int64(WireFormat.maximumFrameSize)
            try frontend.set(.maximumMessageSize, frameLimit)
            try backend.set(.maximumMessageSize, frameLimit)
            // A connection that never completes its handshake (a flood of idle TCP
            // connections) is closed after 5 s instead of 30, giving its descriptor back.
            try frontend.set(.handshakeInterval, .seconds(5))
            try backend.set(.handshakeInterval, .seconds(5))
            if case .curve(let key, _) = security {
                try frontend.makeCurveServer(secretKey: key.keyPair.secretKey)
                try backend.makeCurveServer(secretKey: key.keyPair.secretKey)
            }
            // Connections counted on this thread while the proxy owns the sockets.
            let counted: SocketEventMask = [.accepted, .acceptFailed, .disconnected]
            monitors = (
                try SocketMonitor(endpoint: frontend.publishEvents(counted), context: context),
                try SocketMonitor(endpoint: backend.publishEvents(counted), context: context)
            )
            if bus.directory != nil {
                try frontend.bindRestricted(bus.publisherEndpoint)
                try backend.bindRestricted(bus.subscriberEndpoint)
            } else {
                try frontend.bind(bus.publisherEndpoint)
                try backend.bind(bus.subscriberEndpoint)
            }
            return (try ZMQProxy(frontend: frontend, backend: backend), monitors!)
        } catch .addressInUse {
            monitors?.0.close()
            monitors?.1.close()
            throw CLIError.failure(
                "cannot listen on \(bus): address already in use (is another broker running?)")
        } catch {
            monitors?.0.close()
            monitors?.1.close()
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

/// The connections of the broker, counted from its sockets' monitors: what `health/broker/`
/// reports (`connections`, `connectionsAccepted`, `acceptFailures`) and when to warn. A value
/// with no I/O.
struct BrokerConnections {
    /// The process's file descriptor limit.
    let descriptorLimit: Int
    /// Connections open now (both sides).
    private(set) var open = 0
    /// Connections accepted since the start.
    private(set) var accepted = 0
    /// Accepts that failed (`EMFILE`: out of file descriptors).
    private(set) var acceptFailures = 0
    private var warnedNearLimit = false
    private var warnedAcceptFailure = false

    init(descriptorLimit: Int) {
        self.descriptorLimit = descriptorLimit
    }

    /// Counts one monitor event.
    /// - Parameters:
    ///   - kind: The event.
    ///   - openDescriptors: The descriptors the process has open (connections, and the
    ///     context's own), asked for on an accepted connection until the warning was given.
    /// - Returns: A warning to log, at most once per kind: the open descriptors near the limit
    ///   (90%), or the first accept that failed.
    mutating func record(_ kind: SocketEvent.Kind, openDescriptors: () -> Int) -> String? {
        switch kind {
        case .accepted:
            accepted += 1
            open += 1
            if !warnedNearLimit, openDescriptors() >= descriptorLimit - descriptorLimit / 10 {
                warnedNearLimit = true
                return "\(open) connections open, near the limit of \(descriptorLimit) file descriptors: "
                    + "new connections will be refused (raise LimitNOFILE, or look for a connection flood)"
            }
        case .disconnected:
            open = max(0, open - 1)
        case .acceptFailed:
            acceptFailures += 1
            if !warnedAcceptFailure {
                warnedAcceptFailure = true
                return "a connection was refused: \(open) connections open, at most \(descriptorLimit) "
                    + "file descriptors (counted in acceptFailures)"
            }
        default: break
        }
        return nil
    }

    /// The counters of `health/broker/`.
    var counters: [String: Int] {
        ["connections": open, "connectionsAccepted": accepted, "acceptFailures": acceptFailures]
    }
}

/// The descriptors the process has open (the entries of `/proc/self/fd`); `Int.max` when the
/// directory cannot be read, which is what happens when no descriptor is left to read it.
func openDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? Int.max
}

/// The process's limit of open files (`RLIMIT_NOFILE`).
enum FileDescriptorLimit {
    /// Raises the soft limit to the hard limit (a broker holds one descriptor per connection)
    /// and returns the limit now in force.
    static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}
