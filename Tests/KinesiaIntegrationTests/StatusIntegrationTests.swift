import Foundation
import KinesiaTestSupport
import Testing

/// `kinesia status` and `kinesia watch --once` against a running topology of real processes.
@Suite(.serialized, .tags(.process))
struct StatusIntegrationTests {
    @Test func statusListsTheBrokerAndEveryWorkerOfARunningTopology() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = directory.appendingPathComponent("bus").path
        let broker = try KinesiaProcess(
            "broker", ["broker", "--bus", bus], directory: directory.path, logLevel: "warning")
        try await Task.sleep(for: .milliseconds(300))
        let left = try KinesiaProcess(
            "left",
            [
                "worker", "--bus", bus, "--name", "worker-left", "--camera", "cam0", "--session",
                "left=shoulderAbduction:left",
            ], directory: directory.path, logLevel: "warning")
        let right = try KinesiaProcess(
            "right",
            [
                "worker", "--bus", bus, "--name", "worker-right", "--camera", "cam0", "--session",
                "right=shoulderAbduction:right",
            ], directory: directory.path, logLevel: "warning")
        let processes = [broker, left, right]

        // Reports come once a second: retry until every process is listed (or give up).
        var lines: [String] = []
        var status: Int32?
        for _ in 0..<10 {
            let run = try await ConsumerTestPaths.run(["status", "--bus", bus, "--wait", "1.5"])
            status = run.status
            lines = run.output.split(separator: "\n").map(String.init)
            if lines.count >= 4 { break }
        }
        let diagnostics = processes.map(\.diagnostics).joined(separator: "\n")
        for process in processes { await process.stop() }

        #expect(status == 0)
        let header = try #require(lines.first)
        #expect(header.hasPrefix("process "))
        for column in ["role", "pid", "uptime", "poses", "events", "gaps", "decodeErrors"] {
            #expect(header.contains(" \(column)"), "missing column \(column): \(header)")
        }
        let rows = lines.dropFirst().map { $0.split(separator: " ").map(String.init) }
        #expect(rows.map { $0[0] } == ["broker", "worker-left", "worker-right"], "\(lines)\n\(diagnostics)")
        try #require(rows.count == 3 && rows.allSatisfy { $0.count >= 3 })
        #expect(rows.map { $0[1] } == ["broker", "worker", "worker"])
        #expect(rows[1][2] == String(left.pid))
        #expect(rows[2][2] == String(right.pid))
    }

    @Test func watchOnceShowsTheProcessesOfTheBus() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = directory.appendingPathComponent("bus").path
        let broker = try KinesiaProcess(
            "broker", ["broker", "--bus", bus], directory: directory.path, logLevel: "warning")
        let run = try await ConsumerTestPaths.run(["watch", "--bus", bus, "--once", "--wait", "2.5"])
        await broker.stop()
        #expect(run.status == 0, "\(run.error)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("kinesia watch \(bus) | 0 sessions | 1 process |") == true, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("broker ") && $0.contains("published") }, "\(lines)")
    }

    @Test func statusOnAnEmptyBusSaysNothingAnsweredAndExitsOne() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await ConsumerTestPaths.run(["status", "--bus", directory.path, "--wait", "0.5"])
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(
            run.error.contains("kinesia status: error: no process answered on \(directory.path) within 0.5 s")
        )
    }
}
