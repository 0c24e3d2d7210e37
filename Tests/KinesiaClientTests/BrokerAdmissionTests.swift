import Foundation
import KinesiaBus
import KinesiaWire
import Testing

@testable import KinesiaClient

struct BrokerAdmissionTests {
    static let brokerKey = BusKey(name: "broker", role: .broker, keyPair: try! CurveKeyPair.generate())
    static let worker = BusPublicKey(
        name: "ward-3", role: .worker, key: try! CurveKeyPair.generate().publicKey)
    static let allowed = AllowedKeys(files: [(.worker, "allowed/worker/ward-3.pub", worker.fileText)])

    static func curveRequest(_ z85: String, address: String = "10.0.0.7") -> ZAPRequest {
        var binary = [UInt8](repeating: 0, count: 32)
        _ = zmq_z85_decodeHelper(z85, into: &binary)
        return ZAPRequest(domain: "kinesia", address: address, mechanism: "CURVE", credentials: [binary])
    }

    let curve = BrokerAdmission(
        security: .curve(Self.brokerKey, allowedDirectory: "/unused"), ownUserID: 1000)

    @Test func anAllowedKeyIsAdmittedWithItsRoleAndName() {
        #expect(
            curve.decide(Self.curveRequest(Self.worker.key), allowed: Self.allowed)
                == .admit(userID: "worker/ward-3"))
    }

    @Test func anUnknownKeyIsRefused() throws {
        let stranger = try CurveKeyPair.generate().publicKey
        guard
            case .refuse(.unknownKey, let detail) = curve.decide(
                Self.curveRequest(stranger), allowed: Self.allowed)
        else {
            Issue.record("admitted an unknown key")
            return
        }
        #expect(detail.contains(stranger) && detail.contains("10.0.0.7"))
    }

    @Test func theBrokersOwnKeyIsAdmittedAsTheBroker() {
        #expect(
            curve.decide(Self.curveRequest(Self.brokerKey.keyPair.publicKey), allowed: AllowedKeys())
                == .admit(userID: "broker/broker"))
    }

    @Test func overIPCOnlyTheBrokersUserIsAdmitted() {
        let own = ZAPRequest(address: ":1000:1000:4242", mechanism: "NULL")
        let other = ZAPRequest(address: ":1001:1001:4243", mechanism: "NULL")
        let local = BrokerAdmission(security: .localUser, ownUserID: 1000)
        #expect(own.peerUserID == 1000 && other.peerUserID == 1001)
        #expect(local.decide(own, allowed: AllowedKeys()) == .admit(userID: "local/1000"))
        guard case .refuse(.otherUser, _) = local.decide(other, allowed: AllowedKeys()) else {
            Issue.record("admitted another user")
            return
        }
    }

    @Test func withoutKeysOverTCPOnlyAnInsecureBrokerAdmits() {
        let request = ZAPRequest(address: "10.0.0.7", mechanism: "NULL")
        #expect(request.peerUserID == nil)
        #expect(
            BrokerAdmission(security: .insecure, ownUserID: 0).decide(request, allowed: AllowedKeys())
                == .admit(userID: "insecure"))
        guard case .refuse(.mechanism, _) = curve.decide(request, allowed: Self.allowed) else {
            Issue.record("admitted a connection without keys")
            return
        }
    }

    @Test(arguments: [
        ("ingest/cam0", BrokerAdmission.Sender.ingest), ("worker/w", .worker), ("consumer/tab", .consumer),
        ("control/desk", .control),
        ("broker/broker", .broker), ("local/1000", .trusted), ("insecure", .trusted), ("admin/x", .unknown),
        ("ingestx", .unknown), ("", .unknown),
    ])
    func theSenderComesFromTheZAPUserID(_ userID: String, _ sender: BrokerAdmission.Sender) {
        #expect(userID.withCString { BrokerAdmission.Sender.of(userID: $0) } == sender)
        #expect(BrokerAdmission.Sender.of(userID: nil) == .unknown)
    }

    @Test func theFilterForwardsWhatTheRoleMayPublishAndCountsTheRestBySenderAndKind() {
        func verdict(_ userID: String, _ topic: String) -> Int {
            Array(topic.utf8).withUnsafeBytes { bytes in
                userID.withCString { BrokerAdmission.verdict(topic: bytes, userID: $0) }
            }
        }
        #expect(verdict("worker/w", "event/cam0/left/") == 0)
        #expect(verdict("ingest/cam0", "pose/cam0/") == 0)
        #expect(verdict("local/0", "event/cam0/left/") == 0)
        var slots = [Int](repeating: 0, count: ZMQForwarder.dropSlotCount)
        for (userID, topic) in [
            ("consumer/tab", "event/cam0/left/"), ("consumer/tab", "event/cam0/right/"),
            ("worker/w", "pose/cam0/"),
            ("admin/x", "health/x/"),
        ] {
            let slot = verdict(userID, topic)
            #expect(slot > 0 && slot < ZMQForwarder.dropSlotCount)
            slots[slot] += 1
        }
        #expect(
            BrokerAdmission.droppedCounters(slots)
                == ["dropped.consumer.event": 2, "dropped.worker.pose": 1, "dropped.unknown.health": 1])
    }
}

/// Decodes Z85 (the test's own small decoder, so the request carries binary credentials as
/// libzmq sends them).
private func zmq_z85_decodeHelper(_ text: String, into bytes: inout [UInt8]) -> Bool {
    let alphabet = Array(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)
    let characters = Array(text.utf8)
    guard characters.count == 40 else { return false }
    for block in 0..<8 {
        var value: UInt32 = 0
        for character in characters[(block * 5)..<(block * 5 + 5)] {
            guard let digit = alphabet.firstIndex(of: character) else { return false }
            value = value &* 85 &+ UInt32(digit)
        }
        for index in 0..<4 { bytes[block * 4 + index] = UInt8((value >> (24 - 8 * UInt32(index))) & 0xFF) }
    }
    return true
}
