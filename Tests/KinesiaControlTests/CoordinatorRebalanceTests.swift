import KinesiaControl
import Testing

/// A pool evened out as workers join: sessions move one at a time, a camera's together, never
/// one that names its worker, and a command for a session on its way cancels its move.
struct CoordinatorRebalanceTests {
    typealias Harness = CoordinatorCoreTests.Harness

    /// A harness with `sessions` started on w1 (the only worker) and running there at runs 1...
    static func started(_ sessions: [String], worker: String? = nil) throws -> Harness {
        var harness = Harness()
        _ = try harness.report("w1")
        for (index, key) in sessions.enumerated() {
            _ = harness.send(
                try CoordinatorCoreTests.request(
                    "r\(index)", .start(CoordinatorCoreTests.plan(key, worker: worker))))
        }
        _ = try harness.report("w1", sessions.enumerated().map { ($1, UInt64($0 + 1)) })
        return harness
    }

    @Test func aJoiningWorkerIsGivenSessionsOneAtATimeAndACamerasSessionsStayTogether() throws {
        let sessions = ["cam0/left", "cam0/right", "cam1/left", "cam1/right"]
        var harness = try Self.started(sessions)
        // w2 joins (told its empty set): w1 is told to give up cam0/left; w2 is given nothing
        // until w1 has.
        let joined = try harness.report("w2")
        #expect(
            CoordinatorCoreTests.assignments(joined) == [
                "w1": ["cam0/right@2", "cam1/left@3", "cam1/right@4"], "w2": [],
            ])
        #expect(CoordinatorCoreTests.assignments(try harness.report("w2")).isEmpty)
        // Listed where it still runs, until w1 gave it up.
        let moving = harness.core.statuses.first { $0.plan.key.description == "cam0/left" }
        #expect(moving?.worker == "w1" && moving?.state == .running)
        // w1 no longer runs it: w2 is given it.
        let given = try harness.report("w1", [("cam0/right", 2), ("cam1/left", 3), ("cam1/right", 4)])
        #expect(CoordinatorCoreTests.assignments(given) == ["w2": ["cam0/left@1"]])
        // w2 runs it: the move is done, and the next one takes the same camera's other session.
        let next = try harness.report("w2", [("cam0/left", 1)])
        #expect(harness.core.moves == 1)
        #expect(CoordinatorCoreTests.assignments(next) == ["w1": ["cam1/left@3", "cam1/right@4"]])
        let second = try harness.report("w1", [("cam1/left", 3), ("cam1/right", 4)])
        #expect(CoordinatorCoreTests.assignments(second) == ["w2": ["cam0/left@1", "cam0/right@2"]])
        // Even now: nothing more moves.
        let even = try harness.report("w2", [("cam0/left", 1), ("cam0/right", 2)])
        #expect(harness.core.moves == 2)
        #expect(CoordinatorCoreTests.assignments(even).isEmpty)
        #expect(harness.tick(to: .seconds(1)).isEmpty)
        #expect(
            harness.core.statuses.map { "\($0.plan.key)@\($0.worker ?? "-"):\($0.state)" } == [
                "cam0/left@w2:running", "cam0/right@w2:running", "cam1/left@w1:running",
                "cam1/right@w1:running",
            ])
    }

    @Test func sessionsThatNameTheirWorkerOrWouldSplitACameraStayAndADifferenceOfOneMovesNothing() throws {
        var pinned = try Self.started(["cam0/left", "cam0/right", "cam1/left"], worker: "w1")
        #expect(CoordinatorCoreTests.assignments(try pinned.report("w2")) == ["w2": []])
        #expect(pinned.core.moves == 0)
        // One camera's two sessions stay together: they do not fit in half the difference.
        var together = try Self.started(["cam0/left", "cam0/right"])
        #expect(CoordinatorCoreTests.assignments(try together.report("w2")) == ["w2": []])
        var single = try Self.started(["cam0/left"])
        #expect(CoordinatorCoreTests.assignments(try single.report("w2")) == ["w2": []])
    }

    @Test func aStopOfASessionOnItsWayEndsItsRunWhereItStillRuns() throws {
        var harness = try Self.started(["cam0/left", "cam1/left"])
        _ = try harness.report("w2")
        let key = try SessionKey(parsing: "cam0/left")
        let stop = harness.send(try CoordinatorCoreTests.request("stop", .stop(key)))
        let toW1 = stop.compactMap { if case .assign(let a, "w1", _) = $0 { a } else { nil } }.last
        #expect(toW1?.stopped == [key: 1], "w1, which still runs it, ends the run: \(stop)")
        #expect(!CoordinatorCoreTests.assignments(stop).keys.contains("w2"))
        _ = try harness.report("w1", [("cam1/left", 2)])
        #expect(CoordinatorCoreTests.answers(harness.actions).map(\.outcome) == [.stopped])
        #expect(harness.core.moves == 0)
    }

    @Test func aSessionWhoseWorkerFallsSilentOnItsWayGoesOnWhereItWasGoing() throws {
        var harness = try Self.started(["cam0/left", "cam1/left"])
        _ = try harness.report("w2")
        // w1 never reports again: after the lease, w2 is given the session.
        harness.now = .seconds(2)
        _ = try harness.report("w2")
        let gone = harness.tick(to: .seconds(3))
        #expect(CoordinatorCoreTests.assignments(gone)["w2"] == ["cam0/left@1", "cam1/left@2"])
    }

    /// One stuck move must not stop every pool's: a source that never gives the session up keeps
    /// it, and a target that never runs it keeps it placed (as any placement), after five leases.
    @Test func aMoveAWorkerDoesNotCarryOutIsGivenUpAfterFiveLeases() throws {
        var harness = try Self.started(["cam0/left", "cam1/left"])
        _ = try harness.report("w2")
        #expect(harness.core.nextDeadline == .seconds(3), "the leases come first")
        // w1 keeps reporting the session (it never gives it up), w2 keeps reporting nothing.
        for second in 1...14 {
            harness.now = .seconds(second)
            _ = try harness.report("w1", [("cam0/left", 1), ("cam1/left", 2)])
            _ = try harness.report("w2")
            let actions = harness.tick(to: .seconds(second))
            #expect(!actions.contains { if case .assign(_, "w2", _) = $0 { true } else { false } })
        }
        #expect(harness.core.nextDeadline == .seconds(15))
        let given = harness.tick(to: .seconds(15))
        #expect(
            CoordinatorCoreTests.assignments(given)["w1"] == ["cam0/left@1", "cam1/left@2"],
            "after 15 s the session is w1's again: \(given)")
        #expect(harness.core.statuses.map { $0.worker } == ["w1", "w1"])
        #expect(harness.core.moves == 0)
    }
}
