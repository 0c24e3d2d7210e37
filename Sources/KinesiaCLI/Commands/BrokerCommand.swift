import Foundation
import Glibc
import KinesiaBroker
import KinesiaBus
import KinesiaClient
import KinesiaService
import KinesiaSystem
import KinesiaWire
import Synchronization

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
        // The ZAP handler answers before anything binds: every connection (CURVE over TCP, NULL
        // with the ZAP domain over IPC and --insecure TCP) waits for its decision.
        let admissions = AdmissionRecord(log: log)
        let admission = BrokerAdmission(security: security, ownUserID: UInt32(geteuid()))
        let zap: ZAPHandler
        do {
            zap = try ZAPHandler(context: zmq) { request in
                var allowed = AllowedKeys()
                var read = false
                if case .curve(_, let directory) = security, request.mechanism == "CURVE" {
                    allowed = AllowedKeys.load(directory: directory)
                    read = true
                }
                let decision = admission.decide(request, allowed: allowed)
                admissions.record(decision, problems: read ? allowed.problems : nil)
                switch decision {
                case .admit(let userID): return .admit(userID: userID)
                case .refuse(let reason, _): return .refuse(reason.rawValue)
                }
            }
        } catch {
            zmq.terminate()
            lock?.release()
            throw CLIError.failure("cannot start the broker's authentication: \(error.message)")
        }
        let forwarder: ZMQForwarder
        let monitors: (SocketMonitor, SocketMonitor)
        do {
            (forwarder, monitors) = try startForwarder(
                context: zmq, bus: bus, security: security, highWaterMark: highWaterMark)
        } catch {
            zap.stop()
            zmq.terminate()
            lock?.release()
            throw error
        }
        do {
            try lock?.recordSockets([BusAddress.publisherFileName, BusAddress.subscriberFileName])
        } catch {
            forwarder.stop()
            zap.stop()
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
        var health = try BusProcess.healthPublisher(
            process: name, role: "broker", insecure: security == .insecure, log: log)
        log.info(
            "serving \(bus) (publishers: \(bus.publisherEndpoint), subscribers: \(bus.subscriberEndpoint))")

        var failure: String?
        var handshakeFailures = 0
        var droppedSeen = [Int](repeating: 0, count: ZMQForwarder.dropSlotCount)
        while !stop.isRequested {
            guard forwarder.isRunning else {
                failure = "forwarding stopped: \(forwarder.endingError?.description ?? "unknown reason")"
                break
            }
            for monitor in [monitors.0, monitors.1] {
                while let event = try? monitor.next(timeout: .zero) {
                    if event.kind == .handshakeFailedProtocol || event.kind == .handshakeFailedNoDetail {
                        handshakeFailures += 1
                    }
                    if let warning = connections.record(
                        event.kind, openDescriptors: FileDescriptorLimit.openCount)
                    {
                        log.warning(warning)
                    }
                }
            }
            let statistics = forwarder.statistics()
            for warning in Self.firstDrops(statistics.dropped, seen: &droppedSeen) { log.warning(warning) }
            health.publishIfDue(
                counters: {
                    var counters = Self.counters(statistics).merging(connections.counters) { own, _ in own }
                    counters.merge(admissions.counters) { own, _ in own }
                    counters["refused.handshake"] = handshakeFailures
                    return counters
                }, via: publisher)
            ThreadSleep.sleep(.milliseconds(50))
        }
        publisher.close()
        // The forwarder closes its sockets (which stops their monitors) before their monitors'
        // readers go: an event sent to a closed reader blocks libzmq's I/O thread for good.
        forwarder.stop()
        monitors.0.close()
        monitors.1.close()
        zap.stop()
        zmq.terminate()
        // Only the socket files this broker bound (same inode), never one put there since.
        lock?.removeSockets()
        lock?.release()
        if let failure { throw CLIError.failure(failure) }
        log.info("stopped")
    }

    /// Binds the XSUB frontend and the XPUB backend (socket files private to the user; CURVE
    /// servers over TCP with a key; the ZAP domain set so that IPC and insecure TCP connections
    /// are authenticated too) and starts forwarding with the rights of ``BusRights``.
    private static func startForwarder(
        context: ZMQContext, bus: BusAddress, security: BrokerSecurity, highWaterMark: Int32
    )
        throws(CLIError)
        -> (ZMQForwarder, (SocketMonitor, SocketMonitor))
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
            // Without a domain libzmq skips ZAP for the NULL mechanism (IPC, --insecure TCP).
            try frontend.set(.zapDomain, Self.zapDomain)
            try backend.set(.zapDomain, Self.zapDomain)
            if case .curve(let key, _) = security {
                try frontend.makeCurveServer(secretKey: key.keyPair.secretKey)
                try backend.makeCurveServer(secretKey: key.keyPair.secretKey)
            }
            // Connections counted on this thread while the forwarder owns the sockets.
            let counted: SocketEventMask = [
                .accepted, .acceptFailed, .disconnected, .handshakeFailedProtocol, .handshakeFailedNoDetail,
            ]
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
            let forwarder = try ZMQForwarder(frontend: frontend, backend: backend) { topic, userID in
                BrokerAdmission.verdict(topic: topic, userID: userID)
            }
            return (forwarder, monitors!)
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

    /// The ZAP domain of the broker's sockets.
    static let zapDomain = "kinesia"

    /// Warnings for the drop counters that counted for the first time (one per sender and kind).
    private static func firstDrops(_ dropped: [Int], seen: inout [Int]) -> [String] {
        var warnings: [String] = []
        for sender in BrokerAdmission.Sender.allCases {
            for kind in BusRights.TopicKind.allCases {
                let slot = BrokerAdmission.dropSlot(sender, kind)
                guard slot < dropped.count, dropped[slot] > 0, seen[slot] == 0 else { continue }
                seen[slot] = dropped[slot]
                warnings.append(
                    "dropped a message on \(kind)/ from a \(sender.name) connection: its role may not publish "
                        + "there (counted in dropped.\(sender.name).\(kind))")
            }
        }
        return warnings
    }

    private static func counters(_ statistics: ForwarderStatistics) -> [String: Int] {
        var counters = [
            "published": statistics.published,
            "publishedBytes": statistics.publishedBytes,
            "delivered": statistics.delivered,
            "deliveredBytes": statistics.deliveredBytes,
            "subscriptions": statistics.subscriptions,
            "subscriptionsForwarded": statistics.subscriptionsForwarded,
        ]
        if statistics.upstreamDropped > 0 {
            counters["dropped.subscriber.upstream"] = statistics.upstreamDropped
        }
        counters.merge(BrokerAdmission.droppedCounters(statistics.dropped)) { own, _ in own }
        return counters
    }
}

/// The broker's admission decisions, counted for `health/broker/` and logged (the first ten of
/// each reason, then every hundredth). Shared between the ZAP thread and the broker's loop.
final class AdmissionRecord: Sendable {
    private let state = Mutex<(counters: [String: Int], problems: Set<String>)>(([:], []))
    private let log: Logger

    init(log: Logger) {
        self.log = log
    }

    /// Counts one decision; logs refusals and allowed-key files that were skipped (once each).
    /// - Parameter problems: The skipped files of the allowed-keys directory read for this
    ///   decision (``AllowedKeys/problems``), `nil` when it was not read: their number is the
    ///   counter `allowed.skipped` until the next read.
    func record(_ decision: BrokerAdmission.Decision, problems: [String]?) {
        let (message, newProblems): (String?, [String]) = state.withLock { state in
            let fresh = (problems ?? []).filter { state.problems.insert($0).inserted }
            if let problems { state.counters["allowed.skipped"] = problems.count }
            switch decision {
            case .admit(let userID):
                let role = userID.split(separator: "/").first.map(String.init) ?? userID
                state.counters["admitted.\(role)", default: 0] += 1
                return (nil, fresh)
            case .refuse(let reason, let detail):
                let count = state.counters["refused.\(reason.rawValue)", default: 0] + 1
                state.counters["refused.\(reason.rawValue)"] = count
                let shown = count <= 10 || count % 100 == 0
                return (
                    shown ? "refused a connection: \(detail) (\(count) refused for this reason)" : nil, fresh
                )
            }
        }
        for problem in newProblems { log.warning("allowed keys: \(problem)") }
        if let message { log.warning(message) }
    }

    /// `admitted.<role>`, `refused.<reason>` and `allowed.skipped`.
    var counters: [String: Int] { state.withLock { $0.counters } }
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
