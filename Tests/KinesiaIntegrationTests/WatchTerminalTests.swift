import Foundation
import Glibc
import KinesiaTestSupport
import Testing

/// A tmux server of the test's own (`tmux -L NAME -f /dev/null`: a private socket, no user
/// configuration), driven from the outside as a user's terminal: keys in, screen out.
final class TmuxServer {
    /// `tmux` on `PATH`, or a failure saying what to install (never a skip).
    static func executable() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let found = path.split(separator: ":").map { "\($0)/tmux" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        return try #require(found, "tmux is not installed: run scripts/setup (apt-get install tmux)")
    }

    let tmux: String
    let socket: String
    let environment: [String: String]

    /// A server on a socket no one else uses; nothing runs until ``newSession(_:width:height:command:)``.
    init(environment: [String: String]) throws {
        tmux = try Self.executable()
        socket = "kinesia-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        self.environment = environment
    }

    /// Kills the server and everything in it (always: `defer { server.kill() }`).
    func kill() {
        _ = try? TestProcess.run(tmux, ["-L", socket, "kill-server"], environment: environment)
    }

    /// Runs one tmux command and returns its output; a failing command is a test failure.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        let (status, output) = try TestProcess.run(
            tmux, ["-L", socket] + arguments, environment: environment)
        #expect(status == 0, "tmux \(arguments.joined(separator: " ")): \(output)")
        return output
    }

    /// A detached session of `width` x `height` running `command`.
    func newSession(_ name: String, width: Int, height: Int, command: String) throws {
        try run([
            "-f", "/dev/null", "new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)", command,
        ])
    }

    /// The visible screen, one string per row.
    func screen(_ target: String) throws -> [String] {
        try run(["capture-pane", "-p", "-t", target]).split(
            separator: "\n", omittingEmptySubsequences: false
        )
        .map(String.init)
    }

    /// A format of the pane (`#{cursor_flag}`, `#{history_size}`...).
    func display(_ target: String, _ format: String) throws -> String {
        try run(["display-message", "-p", "-t", target, format]).trimmingCharacters(
            in: .whitespacesAndNewlines)
    }
}

/// The live mode of `kinesia watch` in a real terminal (tmux), against a real bus with a broker,
/// a worker of two sessions and a looping simulated ingest: the view is redrawn in place (the
/// screen holds one frame and nothing scrolls), cut to the window's width when the window gets
/// narrower, and Control-C twice still shows the cursor again and gives the shell its prompt.
@Suite(.timeLimit(.minutes(3)), .tags(.process))
struct WatchTerminalTests {
    static let prompt = "watch-test$ "
    /// The prompt as the screen shows it (tmux drops trailing blanks).
    static let promptShown = "watch-test$"
    static let hideCursor = "\u{1B}[?25l"
    static let showCursor = "\u{1B}[?25h"
    static let frameStart = "\u{1B}[H"

    /// The lines of the last complete frame in what watch wrote (`ESC[H`, then each line
    /// followed by `ESC[K` and a newline, which the terminal's line discipline made `\r\n`,
    /// then `ESC[J`).
    static func lastFrame(_ written: String) -> [String] {
        let frames = written.components(separatedBy: frameStart).dropFirst().filter {
            $0.contains("\u{1B}[J")
        }
        guard let frame = frames.last, let end = frame.range(of: "\u{1B}[J") else { return [] }
        var lines = String(frame[..<end.lowerBound]).components(separatedBy: "\u{1B}[K")
        lines.removeLast()  // the newline after the last line
        return lines.map { String($0.drop { $0.isNewline }) }
    }

    /// Whether a thread of `pid` sits in a `write` to descriptor `fd` (x86-64 and arm64
    /// syscall numbers), blocked: the terminal does not read.
    static func isWriting(_ pid: Int32, to fd: Int) -> Bool {
        #if arch(x86_64)
            let write = "1"
        #else
            let write = "64"
        #endif
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { task in
            let call =
                (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/syscall", encoding: .utf8)) ?? ""
            let fields = call.split(separator: " ")
            return fields.count > 2 && fields[0] == write && fields[1] == "0x\(String(fd, radix: 16))"
        }
    }

    @Test func redrawsInPlaceClipsToTheWindowAndRestoresTheCursorAfterASecondControlC() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        _ = try await topology.startWorker(
            "worker",
            [
                "--camera", "cam0", "--session", "left=shoulderAbduction:left", "--session",
                "right=shoulderAbduction:right",
            ])
        _ = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", "sim:shoulderAbduction", "--loop"])

        var environment = ProcessInfo.processInfo.environment
        for name in ["KINESIA_BUS", "KINESIA_PROCESS_NAME", "KINESIA_SUPERVISOR_PID", "TMUX", "TMUX_PANE"] {
            environment[name] = nil
        }
        environment["KINESIA_LOG_LEVEL"] = "info"
        let server = try TmuxServer(environment: environment)
        defer { server.kill() }
        let output = topology.directory + "/pane.out"
        try server.newSession("watch", width: 80, height: 24, command: "/bin/sh")
        try server.run(["pipe-pane", "-t", "watch", "cat >> \(output)"])
        let pane = { TestProcess.readFile(output) }
        let frames = { pane().components(separatedBy: Self.frameStart).count - 1 }
        // The prompt is set at the prompt: a shell may ignore PS1 from its environment.
        // Sent again every 10 s until it shows: on a loaded machine the shell may not have
        // started reading when the first keys arrive.
        var promptShown = false
        for _ in 0..<4 where !promptShown {
            try server.run(["send-keys", "-t", "watch", "-l", "PS1='\(Self.prompt)'"])
            try server.run(["send-keys", "-t", "watch", "Enter"])
            promptShown = await waitUntil(timeout: .seconds(10)) {
                ((try? server.screen("watch")) ?? []).contains { $0.hasPrefix(Self.promptShown) }
            }
        }
        #expect(promptShown, "no shell prompt in tmux: \((try? server.screen("watch")) ?? [])")

        let command = "\(try PackagePaths.kinesia()) watch --bus \(topology.bus)"
        try server.run(["send-keys", "-t", "watch", "-l", command])
        try server.run(["send-keys", "-t", "watch", "Enter"])

        // Both sessions on screen, after a good number of redraws.
        let live = await waitUntil(timeout: .seconds(60)) {
            let screen = (try? server.screen("watch")) ?? []
            return frames() >= 10
                && screen.contains { $0.hasPrefix("kinesia watch ") && $0.contains("2 sessions") }
        }
        let screen = try server.screen("watch")
        #expect(
            live,
            "the live view did not show both sessions:\n\(screen.joined(separator: "\n"))\n\(topology.diagnostics)"
        )
        try #require(live)
        // Redrawn in place: one header on the screen, and nothing more scrolls into the history
        // while ten more frames are drawn (clearing the screen at the start may push the
        // shell's lines there: tmux's scroll-on-clear).
        #expect(
            screen.filter { $0.hasPrefix("kinesia watch ") }.count == 1, "\(screen.joined(separator: "\n"))")
        let history = try server.display("watch", "#{history_size}")
        let framesBefore = frames()
        #expect(await waitUntil(timeout: .seconds(30)) { frames() >= framesBefore + 10 }, "no more redraws")
        #expect(try server.display("watch", "#{history_size}") == history, "the view scrolled")
        #expect(
            try server.display("watch", "#{cursor_flag}") == "0", "the cursor is not hidden while watching")
        #expect(pane().contains(Self.hideCursor))
        // At 80 columns some lines are wider than 40: the narrow window below has to cut them.
        #expect(Self.lastFrame(pane()).contains { $0.count > 40 }, "\(screen.joined(separator: "\n"))")

        try server.run(["resize-window", "-t", "watch", "-x", "40", "-y", "24"])
        let framesAtResize = frames()
        let redrawn = await waitUntil(timeout: .seconds(30)) { frames() >= framesAtResize + 3 }
        #expect(redrawn, "no redraw after the resize")
        // What watch wrote, and what the terminal shows.
        let frame = Self.lastFrame(pane())
        #expect(
            frame.count > 5 && frame.allSatisfy { $0.count <= 40 },
            "lines wider than the window:\n\(frame.joined(separator: "\n"))")
        #expect(frame.contains { $0.count == 40 }, "nothing was cut:\n\(frame.joined(separator: "\n"))")
        let narrow = try server.screen("watch")
        #expect(narrow.first?.hasPrefix("kinesia watch ") == true, "\(narrow.joined(separator: "\n"))")

        // Control-C twice while watch cannot stop at once: the terminal stalls (tmux stopped, as
        // a frozen ssh connection), so watch's next frame blocks, and so does the line it logs
        // for the first Control-C; the second one must still show the cursor again.
        let shell = try #require(Int32(try server.display("watch", "#{pane_pid}")))
        let tmuxServer = try #require(Int32(try server.display("watch", "#{pid}")))
        let children =
            (try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)) ?? ""
        let watch = try #require(
            children.split(separator: " ").first.flatMap { Int32($0) }, "no watch under the shell")
        kill(tmuxServer, SIGSTOP)
        defer { kill(tmuxServer, SIGCONT) }
        let frameBlocked = await waitUntil(timeout: .seconds(60)) { Self.isWriting(watch, to: 1) }
        #expect(frameBlocked, "watch never blocked on the stalled terminal")
        kill(watch, SIGINT)
        let logBlocked = await waitUntil(timeout: .seconds(60)) { Self.isWriting(watch, to: 2) }
        #expect(logBlocked, "watch did not start to stop")
        // (On a loaded machine the blocked write may still complete, and watch end gracefully
        // before the second Control-C: then there is nothing to end at once, and the cursor
        // must have been shown again all the same.)
        kill(watch, SIGINT)
        kill(tmuxServer, SIGCONT)
        let promptBack = await waitUntil(timeout: .seconds(60)) {
            let lines = ((try? server.screen("watch")) ?? []).filter { !$0.isEmpty }
            return lines.last.map { $0.hasPrefix(Self.promptShown) } ?? false
        }
        let final = (try? server.screen("watch"))?.joined(separator: "\n") ?? ""
        #expect(promptBack, "no prompt after Control-C:\n\(final)")
        // Which way it ended is a race on a loaded machine: the second SIGINT's forced exit (its
        // line says so), or the first one's graceful stop finishing as soon as the terminal
        // came back, before the second was handled (a fresh-clone CI saw it with watch still
        // running at the second Control-C). Either way watch ended (the prompt is back) and the
        // cursor is shown again (below): what this test is for.
        #expect(try server.display("watch", "#{cursor_flag}") == "1", "the cursor is still hidden")
        let written = pane()
        let lastHide = try #require(written.range(of: Self.hideCursor, options: .backwards))
        #expect(
            written[lastHide.upperBound...].contains(Self.showCursor),
            "watch did not write \\e[?25h after hiding the cursor")
    }
}
