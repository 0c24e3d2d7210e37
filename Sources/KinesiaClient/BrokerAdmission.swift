package import KinesiaBus
package import KinesiaWire

/// Who the broker lets in (its ZAP handler's decisions) and what it forwards of theirs (its
/// forwarder's filter): pure functions of a request or a message, tested without sockets.
///
/// Every admitted connection gets a ZAP user id that its messages carry: `ROLE/NAME` for a
/// CURVE key (`worker/ward-3`), `local/UID` for the broker's own user over IPC, `insecure` over
/// a TCP bus run with `--insecure`. The filter reads the peer back from that id and applies
/// ``BusRights``.
package struct BrokerAdmission: Sendable {
    /// The ZAP domain of the sockets these decisions admit to: the broker's ports and the
    /// coordinator's control socket, behind the same keys.
    package static let zapDomain = "kinesia"

    /// Why a connection was refused: the counter `refused.<reason>` on `health/broker/`.
    package enum Refusal: String, CaseIterable, Hashable, Sendable {
        /// A CURVE key that is not in the allowed-keys directory.
        case unknownKey
        /// Another user id over IPC.
        case otherUser
        /// A security mechanism the broker does not accept there (NULL on a CURVE endpoint...).
        case mechanism
    }

    /// What to answer.
    package enum Decision: Hashable, Sendable {
        /// Admit, with this ZAP user id.
        case admit(userID: String)
        /// Refuse, and why (a sentence for the log).
        case refuse(Refusal, String)
    }

    /// How the broker runs.
    package let security: BrokerSecurity
    /// The broker's user id.
    package let ownUserID: UInt32

    /// Admits as `security` says, for a broker run by the user `ownUserID`.
    package init(security: BrokerSecurity, ownUserID: UInt32) {
        self.security = security
        self.ownUserID = ownUserID
    }

    /// The decision on one ZAP request, given the allowed keys read for it.
    package func decide(_ request: ZAPRequest, allowed: AllowedKeys) -> Decision {
        switch request.mechanism {
        case "CURVE":
            guard case .curve(let brokerKey, _) = security, let key = request.curvePublicKey else {
                return .refuse(.mechanism, "CURVE from \(request.address) where the broker has no key")
            }
            if key == brokerKey.keyPair.publicKey {
                return .admit(userID: "broker/\(brokerKey.name)")
            }
            guard let entry = allowed.entry(for: key) else {
                return .refuse(.unknownKey, "unknown key \(key) from \(request.address)")
            }
            return .admit(userID: "\(entry.role)/\(entry.name)")
        case "NULL":
            if let user = request.peerUserID {
                guard user == ownUserID else {
                    return .refuse(.otherUser, "user id \(user) over IPC (the broker's is \(ownUserID))")
                }
                return .admit(userID: "local/\(user)")
            }
            guard security == .insecure else {
                return .refuse(.mechanism, "a connection without keys from \(request.address)")
            }
            return .admit(userID: "insecure")
        default:
            return .refuse(.mechanism, "mechanism \(request.mechanism) from \(request.address)")
        }
    }

    // MARK: - Messages

    /// The senders the filter tells apart, in the order of its drop counters.
    package enum Sender: Int, CaseIterable, Sendable {
        case ingest, worker, consumer, broker, trusted, unknown, control

        /// The sender of a ZAP user id (`nil`: a peer without one, never admitted by this broker).
        package static func of(userID: UnsafePointer<CChar>?) -> Sender {
            guard let userID else { return .unknown }
            func starts(_ prefix: StaticString) -> Bool {
                // A shorter user id ends with its NUL, which no prefix byte equals: the loop
                // stops there and never reads past it.
                prefix.withUTF8Buffer { bytes in
                    bytes.indices.allSatisfy { UInt8(bitPattern: userID[$0]) == bytes[$0] }
                }
            }
            switch UInt8(bitPattern: userID[0]) {
            case UInt8(ascii: "i"):
                if starts("ingest/") { return .ingest }
                if starts("insecure") { return .trusted }
            case UInt8(ascii: "w") where starts("worker/"): return .worker
            case UInt8(ascii: "c"):
                if starts("consumer/") { return .consumer }
                if starts("control/") { return .control }
            case UInt8(ascii: "b") where starts("broker/"): return .broker
            case UInt8(ascii: "l") where starts("local/"): return .trusted
            default: break
            }
            return .unknown
        }

        /// The peer for ``BusRights``, `nil` for an unknown sender (whose messages are all dropped).
        package var peer: BusPeer? {
            switch self {
            case .ingest: .role(.ingest)
            case .worker: .role(.worker)
            case .consumer: .role(.consumer)
            case .broker: .role(.broker)
            case .control: .role(.control)
            case .trusted: .trusted
            case .unknown: nil
            }
        }

        package var name: String { self == .trusted ? "trusted" : String(describing: self) }
    }

    /// The forwarder's verdict on one message: `0` forwards it, otherwise its drop counter
    /// (``dropSlot(_:_:)``).
    @inline(__always)
    package static func verdict(topic: UnsafeRawBufferPointer, userID: UnsafePointer<CChar>?) -> Int {
        let sender = Sender.of(userID: userID)
        let kind = BusRights.TopicKind(topic: topic)
        if let peer = sender.peer, BusRights.mayPublish(peer, kind) { return 0 }
        return dropSlot(sender, kind)
    }

    /// The drop counter of a sender and a topic kind (1 and up).
    package static func dropSlot(_ sender: Sender, _ kind: BusRights.TopicKind) -> Int {
        1 + sender.rawValue * BusRights.TopicKind.allCases.count + Int(kind.rawValue)
    }

    /// The named drop counters of `health/broker/` (`dropped.consumer.event`...): only those
    /// that counted something.
    package static func droppedCounters(_ slots: [Int]) -> [String: Int] {
        var counters: [String: Int] = [:]
        for sender in Sender.allCases {
            for kind in BusRights.TopicKind.allCases {
                let slot = dropSlot(sender, kind)
                if slot < slots.count, slots[slot] > 0 {
                    counters["dropped.\(sender.name).\(kind)"] = slots[slot]
                }
            }
        }
        return counters
    }
}
