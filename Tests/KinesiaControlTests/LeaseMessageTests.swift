import KinesiaControl
import KinesiaMotion
import Testing

/// The lease on the control socket: a numbered report, the coordinator's grant for it (before
/// any assignment that follows), and grants that do not read refused.
struct LeaseMessageTests {
    @Test func aNumberedReportAndItsGrantReadBackExactly() throws {
        let report = ControlMessage.workerReport(
            WorkerReport(
                worker: "w1", pool: "default", capacity: 4, sessions: [], epoch: 9,
                number: 18_446_744_073_709_551_615))
        #expect(try ControlMessage(decoding: report.encoded()) == report)
        #expect(
            String(decoding: report.encoded(), as: UTF8.self).contains(#""report":"18446744073709551615""#))
        let grant = ControlMessage.lease(LeaseGrant(report: 42, lease: .milliseconds(3_000)))
        #expect(
            String(decoding: grant.encoded(), as: UTF8.self)
                == #"{"type":"lease","report":"42","milliseconds":3000}"#)
        #expect(try ControlMessage(decoding: grant.encoded()) == grant)
    }

    @Test(arguments: [
        #"{"type":"lease","report":"1","milliseconds":0}"#,
        #"{"type":"lease","report":"1","milliseconds":3600001}"#,
        #"{"type":"lease","report":"-1","milliseconds":3000}"#,
        #"{"type":"lease","milliseconds":3000}"#,
        #"{"type":"lease","report":"1","milliseconds":3000,"epoch":"4"}"#,
    ])
    func aGrantThatDoesNotReadIsRefused(_ text: String) {
        #expect(throws: ControlError.self) { try ControlMessage(decoding: Array(text.utf8)) }
    }

    @Test func theCoordinatorAnswersANumberedReportWithItsLeaseBeforeItsAssignment() throws {
        var core = CoordinatorCore(plans: [], nextRun: 1, epoch: 0, now: .zero)
        var actions: [CoordinatorCore.Action] = []
        let report = WorkerReport(worker: "w1", pool: "default", capacity: 2, sessions: [], number: 7)
        core.receive(report, from: [1], now: .seconds(5), into: &actions)
        #expect(actions.first == .grantLease(LeaseGrant(report: 7, lease: .seconds(3)), to: [1]))
        #expect(actions.contains { if case .assign = $0 { true } else { false } })
        // A worker that asks for no lease gets none.
        actions = []
        core.receive(
            WorkerReport(worker: "w2", pool: "default", capacity: 2, sessions: []), from: [2],
            now: .seconds(5),
            into: &actions)
        #expect(!actions.contains { if case .grantLease = $0 { true } else { false } })
    }
}
