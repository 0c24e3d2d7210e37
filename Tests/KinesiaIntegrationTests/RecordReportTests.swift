import Foundation
import KinesiaAnalytics
import KinesiaMotion
import KinesiaStore
import KinesiaTestSupport
import Testing

/// `kinesia record` and `kinesia report` on a real bus: a broker, a worker with left, right and
/// analytics sessions, the recorder and an ingest of `sim:squat,seed=3`; then the report opened
/// in a real browser (headless Chromium).
@Suite(.serialized, .tags(.process))
struct RecordReportTests {
    static let source = "sim:squat,seed=3"

    @Test(.timeLimit(.minutes(4)))
    func theDatabaseHoldsAnalyzesEventsOnceAndTheReportShowsThem() async throws {
        let left = try await Oracle.events(source: Self.source, exercise: "squat", side: "left")
        let right = try await Oracle.events(source: Self.source, exercise: "squat", side: "right")
        #expect(left.contains { $0.contains("\"rep\":") })

        let topology = try Topology()
        defer { topology.tearDown() }
        let database = topology.directory + "/record.sqlite"
        _ = try await topology.startBroker()
        let recorder = try topology.start("record", ["record", "--db", database, "--camera", "cam0"])
        #expect(await recorder.waitForError(containing: "recording"), "\(recorder.diagnostics)")
        let worker = try await topology.startWorker(
            "worker",
            [
                "--camera", "cam0", "--session", "left=squat:left", "--session", "right=squat:right",
                "--session", "analytics=squat:analytics",
            ])
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", Self.source, "--pace", "max"])
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")

        func rows() -> (left: [String], right: [String]) {
            guard let store = try? RecordStore(path: database) else { return ([], []) }
            defer { try? store.close() }
            return (
                (try? store.eventLines(camera: "cam0", session: "left")) ?? [],
                (try? store.eventLines(camera: "cam0", session: "right")) ?? []
            )
        }
        let complete = await waitUntil(timeout: .seconds(30)) {
            let now = rows()
            return now.left.count >= left.count && now.right.count >= right.count
        }
        #expect(complete, "\(rows().left.count) of \(left.count) left events:\n\(topology.diagnostics)")
        // The worker's graceful stop publishes the analytics' final set summaries.
        #expect(await worker.stop() == 0, "\(worker.diagnostics)")
        try await Task.sleep(for: .milliseconds(500))
        #expect(await recorder.stop() == 0, "\(recorder.diagnostics)")

        let store = try RecordStore(path: database)
        defer { try? store.close() }
        #expect(try store.eventLines(camera: "cam0", session: "left") == left)
        #expect(try store.eventLines(camera: "cam0", session: "right") == right)
        #expect(try store.count("events") == left.count + right.count)
        #expect(try store.count("snapshots") > 10)
        // Analytics: one tempo per rep of each side, with the rep's own peak; the final summaries.
        let records = try store.analytics(camera: "cam0", session: "analytics").map(\.record)
        for (side, lines) in [(BodySide.left, left), (.right, right)] {
            let peaks = lines.compactMap { try? MotionJSON.decodeEvent($0) }.compactMap {
                (_, event) -> Double? in
                switch event {
                case .repCompleted(let rep), .repRejected(let rep): rep.peak
                default: nil
                }
            }
            let tempos = records.compactMap {
                if case .repTempo(let t) = $0, t.side == side { t } else { nil }
            }
            #expect(tempos.map(\.peak) == peaks, "\(side)")
            let final = records.compactMap {
                if case .setSummary(let s) = $0, s.side == side, s.isComplete { s } else { nil }
            }
            #expect(final.map(\.reps).reduce(0, +) == peaks.count, "\(side): \(final)")
        }
        #expect(records.contains { if case .repSymmetry = $0 { true } else { false } })
        #expect(recorder.errorText.contains(" 0 already stored, "), "\(recorder.errorText)")
        #expect(recorder.errorText.contains(" 0 malformed, 0 missing"), "\(recorder.errorText)")
        // Every message's cursor: one stream per topic (one worker start).
        let cursor = try store.cursor()
        #expect(Set(cursor.map(\.topic)).count == cursor.count)
        #expect(
            cursor.contains { $0.topic == "event/cam0/left/" && $0.lastSequence == UInt64(left.count - 1) })

        // The report, in a real browser.
        let page = topology.directory + "/report.html"
        let report = try topology.start(
            "report", ["report", "--db", database, "--camera", "cam0", "--out", page], addingBus: false)
        #expect(await report.waitForExit(timeout: .seconds(30)) == 0, "\(report.diagnostics)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        // Deterministic: the same database gives the same bytes.
        let again = try topology.start(
            "report-again", ["report", "--db", database, "--camera", "cam0", "--out", page + ".2"],
            addingBus: false)
        #expect(await again.waitForExit(timeout: .seconds(30)) == 0, "\(again.diagnostics)")
        #expect(try String(contentsOfFile: page + ".2", encoding: .utf8) == html)
        #expect(
            !html.contains("http://") && !html.contains("https://") && !html.lowercased().contains("<script"))
        let dom = try await Browser.dumpDOM(page)
        #expect(dom.contains("content=\"default-src 'none'; style-src 'unsafe-inline'\""))
        for (name, lines) in [("left", left), ("right", right)] {
            let reps = lines.filter { $0.contains("\"rep\":") }
            #expect(dom.contains("data-session=\"\(name)\" data-rep-count=\"\(reps.count)\""), "\(name)")
            for line in reps {
                guard case .some((_, .repCompleted(let rep))) = try? MotionJSON.decodeEvent(line) else {
                    continue
                }
                // One decimal, rounded half away from zero (peaks are positive here).
                let tenths = Int((rep.peak * 10).rounded())
                #expect(dom.contains("<td>\(tenths / 10).\(tenths % 10)</td>"), "\(name) peak \(rep.peak)")
            }
        }
        #expect(dom.components(separatedBy: "<svg class=\"angle\"").count - 1 == 2)
        #expect(dom.components(separatedBy: "<polyline class=\"trace\"").count - 1 >= 2)
        #expect(dom.contains("<table class=\"tempo\"") && dom.contains("<table class=\"symmetry\""))
        let screenshot = topology.directory + "/report.png"
        let colours = try await Browser.screenshotColours(page, to: screenshot)
        #expect(colours.distinct >= 6, "\(colours)")
        #expect(colours.nonBackground > 0.02, "\(colours)")
        if let keep = ProcessInfo.processInfo.environment["KINESIA_REPORT_SCREENSHOT"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: screenshot, toPath: keep)
        }
    }

    @Test func recordRefusesAFileThatIsNotADatabase() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let path = topology.directory + "/notes.txt"
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        let record = try topology.start("record", ["record", "--db", path])
        #expect(await record.waitForExit() == 1)
        #expect(record.errorText.contains("kinesia record:"), "\(record.errorText)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x41, count: 4096))
    }

    @Test func reportRefusesAMissingDatabaseAndAnUnknownCamera() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let missing = try topology.start(
            "missing",
            ["report", "--db", topology.directory + "/none.sqlite", "--out", topology.directory + "/r.html"],
            addingBus: false)
        #expect(await missing.waitForExit() == 1)
        #expect(missing.errorText.contains("no database"))
        let database = topology.directory + "/empty.sqlite"
        try RecordStore(path: database).close()
        let empty = try topology.start(
            "empty",
            ["report", "--db", database, "--camera", "cam9", "--out", topology.directory + "/r.html"],
            addingBus: false)
        #expect(await empty.waitForExit() == 1)
        #expect(empty.errorText.contains("nothing recorded for camera cam9"), "\(empty.errorText)")
        #expect(!FileManager.default.fileExists(atPath: topology.directory + "/r.html"))
    }
}

/// Headless Chromium (Debian's `chromium`, installed by scripts/setup).
enum Browser {
    static let flags = ["--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars"]

    static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = NSTemporaryDirectory()
        return environment
    }

    /// The page's DOM after loading, as Chromium serialises it.
    static func dumpDOM(_ path: String) async throws -> String {
        try await offCooperativePool {
            let output = NSTemporaryDirectory() + "kinesia-dom-\(UUID().uuidString).html"
            defer { try? FileManager.default.removeItem(atPath: output) }
            let shell =
                "/usr/bin/chromium \(flags.joined(separator: " ")) --dump-dom 'file://\(path)' > '\(output)' 2>/dev/null"
            let (status, text) = try TestProcess.run("/bin/sh", ["-c", shell], environment: environment)
            #expect(status == 0, "chromium: \(text)")
            return try String(contentsOfFile: output, encoding: .utf8)
        }
    }

    /// Takes a screenshot of the page and measures its colours with Python's zlib: the number
    /// of distinct colours, and the share of pixels that are not the top-left pixel's colour.
    static func screenshotColours(_ path: String, to png: String) async throws -> (
        distinct: Int, nonBackground: Double
    ) {
        try await offCooperativePool {
            let (status, text) = try TestProcess.run(
                "/usr/bin/chromium",
                flags + ["--screenshot=\(png)", "--window-size=1000,2600", "file://\(path)"],
                environment: environment)
            #expect(status == 0, "chromium: \(text)")
            let (measured, output) = try TestProcess.run(
                "/usr/bin/python3", ["-c", pngColours, png], environment: environment)
            #expect(measured == 0, "\(output)")
            let fields = output.split(whereSeparator: \.isWhitespace)
            guard fields.count == 2, let distinct = Int(fields[0]), let share = Double(fields[1]) else {
                Issue.record("unexpected output: \(output)")
                return (0, 0)
            }
            return (distinct, share)
        }
    }

    /// Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) and prints
    /// "DISTINCT_COLOURS SHARE_NOT_BACKGROUND".
    static let pngColours = """
        import struct, sys, zlib
        data = open(sys.argv[1], 'rb').read()
        assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n', 'not a PNG'
        pos, idat = 8, b''
        while pos < len(data):
            length, kind = struct.unpack('>I4s', data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            if kind == b'IHDR':
                width, height, depth, colour, _, _, interlace = struct.unpack('>IIBBBBB', body)
            elif kind == b'IDAT':
                idat += body
            pos += 12 + length
        assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
        bpp = 3 if colour == 2 else 4
        raw = zlib.decompress(idat)
        stride = width * bpp
        previous = bytearray(stride)
        pixels = []
        for row in range(height):
            start = row * (stride + 1)
            kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = previous[i]
                c = previous[i - bpp] if i >= bpp else 0
                if kind == 1: line[i] = (line[i] + a) & 255
                elif kind == 2: line[i] = (line[i] + b) & 255
                elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
                elif kind == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            pixels.extend(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
            previous = line
        background = pixels[0]
        print(len(set(pixels)), sum(1 for p in pixels if p != background) / len(pixels))
        """
}
