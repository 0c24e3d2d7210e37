import Foundation
import KinesiaBus
package import KinesiaClient
package import KinesiaService
import KinesiaSystem
import KinesiaWire
import Synchronization

/// The broker process (`kinesia broker`): serves a bus, forwarding every publisher's messages
/// to every subscriber (XSUB to XPUB) with the rights of each connection's role
/// (``BrokerAdmission``: who may publish which topics), authenticating every connection (CURVE
/// over TCP with keys, the local user over IPC) and reporting on `health/<name>/`: messages and
/// bytes forwarded, connections, admissions and refusals, drops.
///
/// On an IPC bus it holds the bus directory's lock for as long as it runs (``BrokerLock``): a
/// second broker on the same directory is refused.
///
/// ```swift
/// let service = BrokerService(configuration, log: log)
/// try await ServiceRunner(logger: log).run(BlockingService { stop in try service.run(until: stop) })
/// ```
package struct BrokerService: Sendable {
    /// What a broker is given to run.
    package struct Configuration: Sendable {
        /// The bus, made ready.
        package var bus: BusAddress
        /// How connections are authenticated.
        package var security: BrokerSecurity
        /// The process name on `health/<name>/`.
        package var name: String
        /// The queue of each connection, in messages.
        package var highWaterMark: Int32

        /// A configuration.
        package init(bus: BusAddress, security: BrokerSecurity, name: String = "broker", highWaterMark: Int32)
        {
            self.bus = bus
            self.security = security
            self.name = name
            self.highWaterMark = highWaterMark
        }
    }

    /// What it runs with.
    package let configuration: Configuration
    private let log: Logger

    /// A broker that logs on `log`.
    package init(_ configuration: Configuration, log: Logger) {
        self.configuration = configuration
        self.log = log
    }

    /// Serves the bus until `stop` is requested, then closes its sockets and removes the socket
    /// files it bound (only those: never one put there since).
    ///
    /// - Throws: ``BrokerError/unservable(_:)`` when the bus cannot be served (another broker
    ///   holds it, its address is in use, the forwarding stopped);
    ///   ``BrokerError/ownSockets(_:_:)`` when the sockets of its own health cannot be made.
    package func run(until stop: StopToken) throws(BrokerError) {
        let bus = configuration.bus
        let security = configuration.security
        let log = self.log
        let lock = try bus.directory.map { (directory) throws(BrokerError) in
            try BrokerLock(directory: directory)
        }
        // Only the socket files this broker bound (same inode), never one put there since; the
        // last thing done, after every socket is closed.
        defer {
            lock?.removeSockets()
            lock?.release()
        }
        let descriptorLimit = FileDescriptorLimit.raiseToHardLimit()
        log.info("file descriptors: at most \(descriptorLimit)")
        var connections = BrokerConnections(descriptorLimit: descriptorLimit)
        func ownSockets<Value: ~Copyable>(_ body: () throws(ZMQError) -> Value) throws(BrokerError) -> Value {
            try BrokerError.catching({ (error: ZMQError) in .ownSockets(bus.description, error) }, body)
        }
        let zmq = try ownSockets { () throws(ZMQError) in try ZMQContext() }
        defer { zmq.terminate() }
        // The ZAP handler answers before anything binds: every connection (CURVE over TCP, NULL
        // with the ZAP domain over IPC and --insecure TCP) waits for its decision.
        let admissions = AdmissionRecord(log: log)
        let admission = BrokerAdmission(security: security, ownUserID: ProcessIdentity.effectiveUserID)
        let zap: ZAPHandler
        do throws(ZMQError) {
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
            throw BrokerError("cannot start the broker's authentication: \(error.message)")
        }
        defer { zap.stop() }
        let (forwarder, monitors) = try Self.startForwarder(
            context: zmq, bus: bus, security: security, highWaterMark: configuration.highWaterMark)
        // The forwarder closes its sockets (which stops their monitors) before their monitors'
        // readers go: an event sent to a closed reader blocks libzmq's I/O thread for good.
        defer {
            forwarder.stop()
            monitors.0.close()
            monitors.1.close()
        }
        try lock?.recordSockets([BusAddress.publisherFileName, BusAddress.subscriberFileName])
        let replay = try Self.startReplayPort(context: zmq, bus: bus, security: security, log: log)
        defer { replay?.close() }
        // The broker's own health goes through its frontend like any publisher's, with its own
        // key over CURVE (admitted with the role broker).
        var ownBus = bus
        if case .curve(let key, _) = security {
            ownBus.credentials = BusCredentials(key: key, serverKey: key.publicKey)
        }
        let publisher = try ownSockets { () throws(ZMQError) in
            try BusPublisher(context: zmq, bus: ownBus, linger: .milliseconds(100))
        }
        defer { publisher.close() }
        var health = try BrokerError.catching(BrokerError.processName) { () throws(TopicError) in
            try HealthPublisher(
                process: configuration.name, role: "broker", insecure: security == .insecure,
                problems: { log.warning($0) })
        }
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
                    if let replay { counters.merge(replay.counters) { own, _ in own } }
                    return counters
                }, via: publisher)
            if let replay {
                replay.serve(waiting: .milliseconds(50))
            } else {
                ThreadSleep.sleep(.milliseconds(50))
            }
        }
        if let failure { throw BrokerError(failure) }
        log.info("stopped")
    }

    /// Binds the XSUB frontend and the XPUB backend (socket files private to the user; CURVE
    /// servers over TCP with a key; the ZAP domain set so that IPC and insecure TCP connections
    /// are authenticated too) and starts forwarding with the rights of ``BusRights``.
    private static func startForwarder(
        context: ZMQContext, bus: BusAddress, security: BrokerSecurity, highWaterMark: Int32
    )
        throws(BrokerError)
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
            // Pool workers' sessions send the epoch of their assignment after each message: one
            // below what a stream already had comes from a fenced holder and is refused; the
            // others go on without it, so subscribers get [topic, payload] (wire format, 16).
            let forwarder = try ZMQForwarder(
                frontend: frontend, backend: backend,
                filter: { topic, userID in BrokerAdmission.verdict(topic: topic, userID: userID) },
                fencesEpochs: true)
            return (forwarder, monitors!)
        } catch .addressInUse {
            monitors?.0.close()
            monitors?.1.close()
            throw BrokerError(
                "cannot listen on \(bus): address already in use (is another broker running?)")
        } catch {
            monitors?.0.close()
            monitors?.1.close()
            throw BrokerError("cannot listen on \(bus): \(error.message)")
        }
    }

    /// The replay port of a TCP bus with keys (``BrokerReplayPort``), `nil` on any other bus:
    /// there replay stays direct (each journaling process serves its own endpoint).
    private static func startReplayPort(
        context: ZMQContext, bus: BusAddress, security: BrokerSecurity, log: Logger
    ) throws(BrokerError) -> BrokerReplayPort? {
        guard case .curve(let key, _) = security else { return nil }
        guard let endpoint = bus.replayEndpoint else {
            log.warning("no replay port: \(bus) leaves no port + 3 for it; replay across boxes is not served")
            return nil
        }
        do {
            let port = try BrokerReplayPort(
                endpoint: endpoint, key: key, context: context, log: log,
                clock: ElapsedClock(ContinuousClock()))
            log.info("serving replay through the broker on \(port.endpoint)")
            return port
        } catch .addressInUse {
            throw BrokerError("cannot listen for replay on \(endpoint): address already in use")
        } catch {
            throw BrokerError("cannot listen for replay on \(endpoint): \(error.message)")
        }
    }

    /// The ZAP domain of the broker's sockets.
    package static let zapDomain = BrokerAdmission.zapDomain

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
        counters["epochs"] = statistics.epochsForwarded
        counters["refused.staleEpoch"] = statistics.staleEpochs
        if statistics.epochStreamsForgotten > 0 {
            counters["epochs.forgotten"] = statistics.epochStreamsForgotten
        }
        if statistics.upstreamDropped > 0 {
            counters["dropped.subscriber.upstream"] = statistics.upstreamDropped
        }
        counters.merge(BrokerAdmission.droppedCounters(statistics.dropped)) { own, _ in own }
        return counters
    }
}
