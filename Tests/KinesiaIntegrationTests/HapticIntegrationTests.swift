import Foundation
import Glibc
import KinesiaTestSupport
import Testing

/// `kinesia haptic --serial` when the wearable is not there yet, then plugged in, unplugged and
/// plugged in again: a pseudo-terminal stands in for it, behind a symbolic link (the stable
/// name udev gives a wristband, `/dev/serial/by-id/...`). The process never exits: it waits,
/// says so once, reports `deviceMissing 1`, greets the device when it appears and plays the
/// patterns of a real worker's events on it.
@Suite(.serialized, .tags(.process))
struct HapticIntegrationTests {
    /// What the wearable has read so far.
    final class Wearable {
        var terminal: PseudoTerminal
        var received = ""

        init() throws { terminal = try PseudoTerminal() }

        /// Reads for at most `timeout` until `text` has arrived (since the last `clear`).
        func waitFor(_ text: String, timeout: Duration) async throws -> Bool {
            let clock = ContinuousClock()
            let deadline = clock.now + timeout
            while clock.now < deadline {
                let read = try terminal.readAvailable(timeout: .milliseconds(100))
                received += read
                if received.contains(text) { return true }
                if read.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            return received.contains(text)
        }
    }

    /// Points `link` at `target` (replacing what it pointed at).
    static func plug(_ link: String, into target: String) throws {
        unlink(link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    }

    @Test(.timeLimit(.minutes(4)))
    func waitsForAMissingWearableThenPlaysOnItAndWaitsAgainWhenItIsUnplugged() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let link = topology.directory + "/wristband"
        let haptic = try topology.start(
            "haptic", ["haptic", "--name", "haptic", "--camera", "cam0", "--serial", link])
        #expect(
            await haptic.waitForError(containing: "no device at \(link); waiting for the device"),
            "\(haptic.diagnostics)")
        let missing = try await StatusRow.poll(bus: topology.bus, timeout: .seconds(30)) {
            $0["haptic"]?.counters["deviceMissing"] == 1
        }["haptic"]
        #expect(missing?.role == "haptic")
        #expect(
            missing?.counters["deviceMissing"] == 1 && missing?.counters["deviceReady"] == 0,
            "\(String(describing: missing))")

        // Plugged in: greeted within the longest back-off (5 s), then each rep's pulse.
        var first: Wearable? = try Wearable()
        try Self.plug(link, into: first!.terminal.path)
        #expect(
            try await first!.waitFor("HELLO kinesia-haptic 1\n", timeout: .seconds(60)),
            "\(haptic.diagnostics)")
        _ = try await topology.startWorker("worker", ["--camera", "cam0", "--session", "left=squat:left"])
        _ = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", "sim:squat,seed=3", "--pace", "recording", "--loop"])
        #expect(try await first!.waitFor("PULSE ", timeout: .seconds(60)), "\(topology.diagnostics)")
        #expect(haptic.errorText.contains("the device is ready (it was missing)"), "\(haptic.diagnostics)")
        // Told once, not at every attempt.
        #expect(haptic.errorText.components(separatedBy: "waiting for the device").count == 2)

        // Unplugged: the next pattern's write fails; the process waits again, and a new device
        // behind the same name is greeted and played on.
        first = nil
        #expect(
            await haptic.waitForError(containing: "lost the device", timeout: .seconds(60)),
            "\(haptic.diagnostics)")
        #expect(haptic.isRunning)
        let second = try Wearable()
        try Self.plug(link, into: second.terminal.path)
        #expect(
            try await second.waitFor("HELLO kinesia-haptic 1\n", timeout: .seconds(60)),
            "\(haptic.diagnostics)")
        #expect(try await second.waitFor("PULSE ", timeout: .seconds(60)), "\(haptic.diagnostics)")

        let ready =
            try await StatusRow.poll(bus: topology.bus, timeout: .seconds(30)) {
                $0["haptic"]?.counters["deviceReady"] == 1
            }["haptic"]?.counters ?? [:]
        #expect(ready["deviceReady"] == 1 && ready["deviceMissing"] == 0, "\(ready)")
        #expect(ready["deviceOpens"] == 2 && ready["deviceErrors"] == 1)
        #expect((ready["played"] ?? 0) > 0 && (ready["events"] ?? 0) > 0 && (ready["lost"] ?? 0) >= 1)
        haptic.signal(SIGTERM)
        #expect(await haptic.waitForExit(timeout: .seconds(60)) == 0, "\(haptic.diagnostics)")
        // A clean stop tells the wearable to stop.
        #expect(try await second.waitFor("STOP\n", timeout: .seconds(60)))
    }
}
