import Foundation
import Glibc
import KinesiaSystem
import KinesiaTestSupport
import Testing

/// The one spawn of the package: what the child gets, how it ends, and how a failure reads.
@Suite(.tags(.process))
struct ProcessSpawnTests {
    /// A new empty file.
    static func temporaryFile() -> String {
        var template = Array("/tmp/kinesia-spawn.XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        close(fd)
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func aChildWritesBothStreamsToOneFileAndItsStatusIsReaped() throws {
        let output = Self.temporaryFile()
        defer { unlink(output) }
        var spawn = ProcessSpawn(
            executable: "/bin/sh", arguments: ["sh", "-c", "echo out; echo err >&2; exit 3"],
            environment: ["PATH=/usr/bin:/bin"])
        spawn.standardOutput = .file(output)
        spawn.standardError = .standardOutput
        let pid = try spawn.spawn()
        try ChildWait.waitUntilExited(pid)
        #expect(try ChildWait.reap(pid, blocking: true) == .exited(3))
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "out\nerr\n")
        // Reaped once: a second reap is ECHILD, never another process's status.
        #expect(throws: Errno.noChild) { _ = try ChildWait.reap(pid, blocking: false) }
    }

    @Test func aChildHasDefaultSignalsAnEmptyMaskAndItsOwnGroup() throws {
        let output = Self.temporaryFile()
        defer { unlink(output) }
        // Ignored here: the child must get the default back.
        let previous = signal(SIGUSR2, SIG_IGN)
        defer { signal(SIGUSR2, previous) }
        var spawn = ProcessSpawn(
            executable: "/bin/sh",
            arguments: ["sh", "-c", "grep -E '^(SigBlk|SigIgn):' /proc/self/status; ps -o pgid= -p $$"],
            environment: ["PATH=/usr/bin:/bin"])
        spawn.standardOutput = .file(output)
        let pid = try spawn.spawn()
        #expect(try ChildWait.reap(pid, blocking: true) == .exited(0))
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains("SigBlk:\t0000000000000000"), "\(lines)")
        // glibc keeps its two internal real-time signals (32, 33) as they are; every
        // ordinary signal, SIGUSR2 included, is back to its default.
        let ignored = try #require(
            lines.first { $0.hasPrefix("SigIgn:") }.flatMap { UInt64($0.dropFirst(8), radix: 16) })
        #expect(ignored & 0x7FFF_FFFF == 0, "\(lines)")  // signals 1...31
        #expect(lines.last?.trimmingCharacters(in: .whitespaces) == String(pid), "\(lines)")
    }

    @Test func aMissingExecutableFailsWithTheCLibrarysWords() {
        let spawn = ProcessSpawn(executable: "/nonexistent/kinesia", arguments: ["kinesia"], environment: [])
        let failure = #expect(throws: ProcessSpawn.Failure.self) { _ = try spawn.spawn() }
        #expect(failure?.errno == .noSuchFile)
        #expect(failure?.description == "cannot run /nonexistent/kinesia: No such file or directory")
    }

    @Test func aSignalEndingTheChildReadsAsTheShellSays() throws {
        let spawn = ProcessSpawn(
            executable: "/bin/sh", arguments: ["sh", "-c", "kill -TERM $$"], environment: [])
        let pid = try spawn.spawn()
        let status = try #require(try ChildWait.reap(pid, blocking: true))
        #expect(status == .signaled(.terminate))
        #expect(status.shellStatus == 128 + 15)
        #expect(status.description == "signal SIGTERM")
    }
}
