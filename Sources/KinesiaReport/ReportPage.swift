import KinesiaAnalytics
import KinesiaMotion

/// Renders a ``SessionReport`` as one self-contained HTML page: no script, no external style,
/// font or image, no URL at all; charts are inline SVG. A Content-Security-Policy meta
/// (`default-src 'none'; style-src 'unsafe-inline'`) makes a browser refuse any request anyway.
///
/// Deterministic: the same report gives the same bytes (numbers are written with fixed
/// decimals, independent of the locale).
///
/// The page has, for each session: the measured angle over time with each rep shaded (green
/// clean, red rejected) and its peak marked, each form fault as a red tick, and the baseline as a
/// dashed line (`svg.angle`, the angle a `polyline.trace`); its reps as a table (`table.reps`, one `tr.rep` a rep). Then left
/// against right (`table.sides`, `svg.sides`), and the analytics: tempo (`table.tempo`),
/// symmetry (`table.symmetry`) and sets (`table.sets`). Elements carry `data-` attributes with
/// the figures, for programs that read the page.
public enum ReportPage {
    /// The Content-Security-Policy of every page.
    public static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'"

    /// The HTML text of `report`.
    public static func render(_ report: SessionReport) -> String {
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="\(contentSecurityPolicy)">
            <title>Kinesia report: \(escape(report.title))</title>
            <style>
            body{font:14px sans-serif;margin:24px;color:#222;background:#fff}
            h1{font-size:22px}h2{font-size:18px;margin-top:28px}
            table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
            th{background:#eef}tr.rejected td{background:#fde8e8}
            svg{background:#fafafa;border:1px solid #ddd}
            rect.clean{fill:#2a9d4b;fill-opacity:.18}rect.rejected{fill:#d33;fill-opacity:.2}
            polyline.trace{fill:none;stroke:#1f5fbf;stroke-width:1.5}.peak{fill:#1f5fbf}
            .fault{stroke:#d33;stroke-width:2}.baseline{stroke:#e08a00;stroke-dasharray:6 4;stroke-width:1.5}
            .axis{stroke:#888}.label{font-size:11px;fill:#555}
            .left{fill:#1f5fbf}.right{fill:#e08a00}
            </style></head><body>
            <h1>Kinesia report: \(escape(report.title))</h1>

            """
        for (index, line) in report.details.enumerated() {
            html += "<p class=\"detail\" id=\"detail-\(index)\">\(escape(line))</p>\n"
        }
        let sessions = report.sessions
        html += "<p id=\"summary\" data-sessions=\"\(sessions.count)\">"
        html += sessions.map {
            "\(escape($0.name)): \($0.reps.filter(\.isClean).count) clean, \($0.reps.filter { !$0.isClean }.count) rejected"
        }.joined(separator: "; ")
        html += "</p>\n"
        for session in sessions { html += section(session) }
        if let left = sessions.first(where: { $0.name == "left" }),
            let right = sessions.first(where: { $0.name == "right" })
        {
            html += sides(left, right)
        }
        if !report.analytics.isEmpty { html += analytics(report.analytics.map(\.record)) }
        html += "</body></html>\n"
        return html
    }

    // MARK: Sections

    private static func section(_ session: SessionReport.Session) -> String {
        let reps = session.reps
        var html = "<h2>Session \(escape(session.name))</h2>\n"
        html += angleChart(session)
        html +=
            "<table class=\"reps\" data-session=\"\(escape(session.name))\" data-rep-count=\"\(reps.count)\">"
            + "<tr><th>#</th><th>start (s)</th><th>end (s)</th><th>duration (s)</th><th>peak (°)</th>"
            + "<th>result</th><th>faults</th></tr>\n"
        for (index, rep) in reps.enumerated() {
            html +=
                "<tr class=\"rep \(rep.isClean ? "clean" : "rejected")\" data-peak=\"\(fixed(rep.peak, 1))\">"
            html += "<td>\(index + 1)</td><td>\(fixed(rep.start, 2))</td><td>\(fixed(rep.end, 2))</td>"
            html += "<td>\(fixed(rep.duration, 2))</td><td>\(fixed(rep.peak, 1))</td>"
            html += "<td>\(rep.isClean ? "clean" : "rejected")</td>"
            html += "<td>\(escape(rep.faults.map(\.rawValue).joined(separator: ", ")))</td></tr>\n"
        }
        html += "</table>\n"
        if let baseline = session.baseline {
            html +=
                "<p class=\"baseline\" data-baseline=\"\(fixed(baseline, 1))\">Baseline: \(fixed(baseline, 1))°</p>\n"
        }
        return html
    }

    /// The angle over time, with reps, peaks, faults and the baseline.
    private static func angleChart(_ session: SessionReport.Session) -> String {
        let width = 900.0
        let height = 260.0
        let margin = (left: 56.0, right: 10.0, top: 30.0, bottom: 34.0)
        let points = session.samples.compactMap { sample in sample.value.map { (sample.t, $0) } }
        let reps = session.reps
        let times = points.map(\.0) + reps.flatMap { [$0.start, $0.end] } + session.faults.map(\.t)
        let values = points.map(\.1) + reps.map(\.peak) + (session.baseline.map { [$0] } ?? [])
        let t0 = times.min() ?? 0
        let t1 = max((times.max() ?? 1), t0 + 1)
        let v0 = min(values.min() ?? 0, 0)
        let v1 = max((values.max() ?? 90) * 1.05, v0 + 10)
        let plotW = width - margin.left - margin.right
        let plotH = height - margin.top - margin.bottom
        func x(_ t: Double) -> String { fixed(margin.left + (t - t0) / (t1 - t0) * plotW, 1) }
        func y(_ v: Double) -> String { fixed(margin.top + (1 - (v - v0) / (v1 - v0)) * plotH, 1) }

        var svg =
            "<svg class=\"angle\" data-session=\"\(escape(session.name))\" width=\"\(Int(width))\" "
            + "height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\">"
        svg += "<title>\(escape(session.name)): measured angle over time</title>\n"
        for rep in reps {
            let x0 = margin.left + (rep.start - t0) / (t1 - t0) * plotW
            let x1 = margin.left + (rep.end - t0) / (t1 - t0) * plotW
            svg += "<rect class=\"rep \(rep.isClean ? "clean" : "rejected")\" x=\"\(fixed(x0, 1))\" "
            svg +=
                "y=\"\(fixed(margin.top, 1))\" width=\"\(fixed(max(x1 - x0, 1), 1))\" height=\"\(fixed(plotH, 1))\">"
            svg += "<title>rep \(fixed(rep.peak, 1))° \(rep.isClean ? "clean" : "rejected")</title></rect>\n"
        }
        // Axes and value ticks.
        svg +=
            "<line class=\"axis\" x1=\"\(fixed(margin.left, 1))\" y1=\"\(y(v0))\" x2=\"\(fixed(width - margin.right, 1))\" y2=\"\(y(v0))\"/>"
        svg +=
            "<line class=\"axis\" x1=\"\(fixed(margin.left, 1))\" y1=\"\(y(v0))\" x2=\"\(fixed(margin.left, 1))\" y2=\"\(y(v1))\"/>\n"
        let step = v1 - v0 > 120 ? 45.0 : 30.0
        var tick = (v0 / step).rounded(.up) * step
        while tick <= v1 {
            svg += "<text class=\"label\" x=\"24\" y=\"\(y(tick))\">\(fixed(tick, 0))°</text>"
            tick += step
        }
        svg +=
            "<text class=\"label\" x=\"\(fixed(margin.left, 1))\" y=\"\(fixed(height - 8, 1))\">\(fixed(t0, 1)) s</text>"
        svg +=
            "<text class=\"label\" x=\"\(fixed(width - 60, 1))\" y=\"\(fixed(height - 8, 1))\">\(fixed(t1, 1)) s</text>\n"
        svg += axisNames(
            x: "time (s)", y: "angle (°)", width: width, height: height, plotLeft: margin.left,
            plotTop: margin.top,
            plotHeight: plotH)
        var items: [(swatch: String, label: String)] = [
            (swatchLine("#1f5fbf", dashed: false), "angle"), (swatchBox("#2a9d4b", 0.18), "clean rep"),
            (swatchBox("#d33", 0.2), "rejected rep"), (swatchDot("#1f5fbf"), "peak"),
            (swatchLine("#d33", dashed: false), "form fault"),
        ]
        if let baseline = session.baseline {
            items.append((swatchLine("#e08a00", dashed: true), "baseline \(fixed(baseline, 1))°"))
        }
        svg += legend(items, x: margin.left, y: 6)
        // The angle, one polyline per run of measurable samples.
        var run: [String] = []
        func flush() {
            if run.count > 1 {
                svg += "<polyline class=\"trace\" points=\"\(run.joined(separator: " "))\"/>\n"
            }
            run.removeAll()
        }
        for sample in session.samples {
            if let value = sample.value { run.append("\(x(sample.t)),\(y(value))") } else { flush() }
        }
        flush()
        for rep in reps {
            svg +=
                "<circle class=\"peak\" cx=\"\(x((rep.start + rep.end) / 2))\" cy=\"\(y(rep.peak))\" r=\"3\"/>"
        }
        for fault in session.faults {
            svg +=
                "<line class=\"fault\" x1=\"\(x(fault.t))\" y1=\"\(fixed(margin.top, 1))\" x2=\"\(x(fault.t))\" "
            svg += "y2=\"\(fixed(margin.top + 14, 1))\"><title>\(escape(fault.fault.rawValue))</title></line>"
        }
        if let baseline = session.baseline {
            svg += "\n<line class=\"baseline\" x1=\"\(fixed(margin.left, 1))\" y1=\"\(y(baseline))\" "
            svg +=
                "x2=\"\(fixed(width - margin.right, 1))\" y2=\"\(y(baseline))\"><title>baseline \(fixed(baseline, 1))°</title></line>"
            // The line named where it ends.
            svg +=
                "<text class=\"label baseline-name\" x=\"\(fixed(width - margin.right - 110, 1))\" "
                + "y=\"\(fixed(Double(y(baseline))! - 4, 1))\">baseline \(fixed(baseline, 1))°</text>"
        }
        return svg + "\n</svg>\n"
    }

    /// Left against right: the n-th rep of each side, and their peaks as bars.
    private static func sides(_ left: SessionReport.Session, _ right: SessionReport.Session) -> String {
        let l = left.reps
        let r = right.reps
        let count = max(l.count, r.count)
        var html =
            "<h2>Left against right</h2>\n<table class=\"sides\" data-pairs=\"\(min(l.count, r.count))\">"
        html +=
            "<tr><th>rep</th><th>left peak (°)</th><th>right peak (°)</th><th>left − right (°)</th></tr>\n"
        for index in 0..<count {
            let a = index < l.count ? l[index].peak : nil
            let b = index < r.count ? r[index].peak : nil
            let difference = a.flatMap { a in b.map { a - $0 } }
            html += "<tr><td>\(index + 1)</td><td>\(a.map { fixed($0, 1) } ?? "–")</td>"
            html +=
                "<td>\(b.map { fixed($0, 1) } ?? "–")</td><td>\(difference.map { fixed($0, 1) } ?? "–")</td></tr>\n"
        }
        html += "</table>\n"
        let width = max(300, 60 + count * 36)
        let height = 220.0
        let top = max(l.map(\.peak).max() ?? 1, r.map(\.peak).max() ?? 1, 1)
        var svg =
            "<svg class=\"sides\" width=\"\(width)\" height=\"\(Int(height))\" viewBox=\"0 0 \(width) \(Int(height))\">"
        svg += "<title>peaks, left (blue) against right (orange)</title>\n"
        svg += legend([(swatchBox("#1f5fbf", 1), "left"), (swatchBox("#e08a00", 1), "right")], x: 50, y: 6)
        svg += axisNames(
            x: "rep", y: "peak (°)", width: Double(width), height: height, plotLeft: 50, plotTop: 30,
            plotHeight: height - 60)
        for index in 0..<count {
            for (offset, rep, kind) in [
                (0, index < l.count ? l[index] : nil, "left"),
                (14, index < r.count ? r[index] : nil, "right"),
            ] {
                guard let rep else { continue }
                let h = max(rep.peak, 0) / top * (height - 60)
                svg +=
                    "<rect class=\"bar \(kind)\" x=\"\(50 + index * 36 + offset)\" y=\"\(fixed(height - 30 - h, 1))\" "
                svg +=
                    "width=\"12\" height=\"\(fixed(h, 1))\"><title>\(kind) rep \(index + 1): \(fixed(rep.peak, 1))°</title></rect>"
            }
            svg +=
                "<text class=\"label\" x=\"\(50 + index * 36 + 6)\" y=\"\(Int(height) - 18)\">\(index + 1)</text>\n"
        }
        return html + svg + "</svg>\n"
    }

    /// The analytics: tempo per rep, symmetry per pair, and each side's last figures per set.
    private static func analytics(_ records: [AnalyticsRecord]) -> String {
        var tempos: [RepTempo] = []
        var pairs: [RepSymmetry] = []
        var sets: [String: SetSummary] = [:]
        for record in records {
            switch record {
            case .repTempo(let tempo): tempos.append(tempo)
            case .repSymmetry(let pair): pairs.append(pair)
            case .setSummary(let summary): sets["\(summary.set)-\(summary.side.rawValue)"] = summary
            }
        }
        var html = "<h2>Analytics</h2>\n<h3>Tempo</h3>\n"
        html +=
            "<table class=\"tempo\" data-rows=\"\(tempos.count)\"><tr><th>side</th><th>set</th><th>rep</th>"
        html +=
            "<th>range (°)</th><th>up (s)</th><th>top (s)</th><th>down (s)</th><th>under tension (s)</th><th>faults</th></tr>\n"
        for tempo in tempos {
            html +=
                "<tr class=\"\(tempo.isClean ? "clean" : "rejected")\"><td>\(tempo.side.rawValue)</td><td>\(tempo.set)</td>"
            html +=
                "<td>\(tempo.number)</td><td>\(fixed(tempo.range, 1))</td><td>\(fixed(tempo.timeUp, 2))</td>"
            html += "<td>\(fixed(tempo.timeAtTop, 2))</td><td>\(fixed(tempo.timeDown, 2))</td>"
            html += "<td>\(fixed(tempo.timeUnderTension, 2))</td>"
            html += "<td>\(escape(tempo.faults.map(\.rawValue).joined(separator: ", ")))</td></tr>\n"
        }
        html += "</table>\n" + tempoChart(tempos)
        html +=
            "<h3>Symmetry</h3>\n<table class=\"symmetry\" data-rows=\"\(pairs.count)\"><tr><th>set</th><th>pair</th>"
        html +=
            "<th>left peak (°)</th><th>right peak (°)</th><th>difference (°)</th><th>range ratio</th><th>tempo ratio</th></tr>\n"
        for pair in pairs {
            html += "<tr><td>\(pair.set)</td><td>\(pair.pair)</td><td>\(fixed(pair.left.peak, 1))</td>"
            html += "<td>\(fixed(pair.right.peak, 1))</td><td>\(fixed(pair.peakDifference, 1))</td>"
            html +=
                "<td>\(pair.rangeRatio.map { fixed($0, 2) } ?? "–")</td><td>\(pair.tempoRatio.map { fixed($0, 2) } ?? "–")</td></tr>\n"
        }
        html += "</table>\n<h3>Sets</h3>\n"
        let summaries = sets.values.sorted { ($0.set, $0.side.rawValue) < ($1.set, $1.side.rawValue) }
        html +=
            "<table class=\"sets\" data-rows=\"\(summaries.count)\"><tr><th>set</th><th>side</th><th>reps</th><th>clean</th>"
        html +=
            "<th>rejected</th><th>rejected by fault</th><th>peak trend (°/rep)</th><th>mean clean peak (°)</th>"
        html += "<th>baseline (°)</th><th>progress</th></tr>\n"
        for summary in summaries {
            let faults = FormFeedback.allCases.filter { summary.rejectedByFault[$0, default: 0] > 0 }
                .map { "\($0.rawValue) \(fixed(100 * summary.rejectedShare(for: $0), 0))%" }
            html += "<tr><td>\(summary.set)</td><td>\(summary.side.rawValue)</td><td>\(summary.reps)</td>"
            html +=
                "<td>\(summary.clean)</td><td>\(summary.rejected) (\(fixed(100 * summary.rejectedShare, 0))%)</td>"
            html +=
                "<td>\(escape(faults.joined(separator: ", ")))</td><td>\(summary.peakSlope.map { fixed($0, 2) } ?? "–")</td>"
            html +=
                "<td>\(summary.meanCleanPeak.map { fixed($0, 1) } ?? "–")</td><td>\(summary.baseline.map { fixed($0, 1) } ?? "–")</td>"
            html += "<td>\(summary.progress.map { fixed($0, 1) + "°" } ?? "–")"
            html += "\(summary.progressPercent.map { " (" + fixed($0, 1) + "%)" } ?? "")</td></tr>\n"
        }
        return html + "</table>\n"
    }

    /// Each rep's time up, at the top and down, as stacked bars.
    private static func tempoChart(_ tempos: [RepTempo]) -> String {
        guard !tempos.isEmpty else { return "" }
        let longest = max(tempos.map(\.timeUnderTension).max() ?? 1, 0.1)
        let rowHeight = 14
        let width = 600.0
        let height = tempos.count * rowHeight + 66
        var svg =
            "<svg class=\"tempo\" width=\"\(Int(width))\" height=\"\(height)\" viewBox=\"0 0 \(Int(width)) \(height)\">"
        svg += "<title>time up (blue), at the top (green), down (orange)</title>\n"
        svg += legend(
            [
                (swatchBox("#1f5fbf", 1), "up"), (swatchBox("#2a9d4b", 1), "at the top"),
                (swatchBox("#e08a00", 1), "down"),
            ],
            x: 90, y: 6)
        // The time scale under the bars: 0 and the longest rep's time under tension.
        let bottom = 30 + tempos.count * rowHeight
        svg += "<line class=\"axis\" x1=\"90\" y1=\"\(bottom)\" x2=\"\(Int(width) - 10)\" y2=\"\(bottom)\"/>"
        svg += "<text class=\"label\" x=\"90\" y=\"\(bottom + 13)\">0 s</text>"
        svg +=
            "<text class=\"label\" x=\"\(Int(width) - 50)\" y=\"\(bottom + 13)\">\(fixed(longest, 2)) s</text>"
        svg +=
            "<text class=\"label axis-name\" x=\"\(Int(width) / 2)\" y=\"\(bottom + 28)\">time under tension (s)</text>\n"
        for (index, tempo) in tempos.enumerated() {
            var x = 90.0
            let y = 30 + index * rowHeight
            svg +=
                "<text class=\"label\" x=\"4\" y=\"\(y + 10)\">\(tempo.side.rawValue) \(tempo.set).\(tempo.number)</text>"
            for (seconds, colour) in [
                (tempo.timeUp, "#1f5fbf"), (tempo.timeAtTop, "#2a9d4b"), (tempo.timeDown, "#e08a00"),
            ] {
                let w = max(seconds, 0) / longest * (width - 100)
                svg +=
                    "<rect x=\"\(fixed(x, 1))\" y=\"\(y)\" width=\"\(fixed(w, 1))\" height=\"\(rowHeight - 3)\" fill=\"\(colour)\"/>"
                x += w
            }
            svg += "\n"
        }
        return svg + "</svg>\n"
    }

    // MARK: Legends and axes

    /// A chart's legend: a row of swatches with their names, from (`x`, `y`).
    private static func legend(_ items: [(swatch: String, label: String)], x: Double, y: Double) -> String {
        var svg = "<g class=\"legend\" data-items=\"\(escape(items.map(\.label).joined(separator: "|")))\">"
        var position = x
        for item in items {
            svg += "<g class=\"legend-item\" transform=\"translate(\(fixed(position, 1)) \(fixed(y, 1)))\">"
            svg += item.swatch
            svg += "<text class=\"label\" x=\"18\" y=\"10\">\(escape(item.label))</text></g>"
            position += 28 + Double(item.label.count) * 6.2
        }
        return svg + "</g>\n"
    }

    private static func swatchLine(_ colour: String, dashed: Bool) -> String {
        "<line x1=\"0\" y1=\"6\" x2=\"14\" y2=\"6\" stroke=\"\(colour)\" stroke-width=\"2\""
            + (dashed ? " stroke-dasharray=\"4 2\"" : "") + "/>"
    }

    private static func swatchBox(_ colour: String, _ opacity: Double) -> String {
        "<rect x=\"0\" y=\"1\" width=\"12\" height=\"10\" fill=\"\(colour)\" fill-opacity=\"\(fixed(opacity, 2))\"/>"
    }

    private static func swatchDot(_ colour: String) -> String {
        "<circle cx=\"6\" cy=\"6\" r=\"3\" fill=\"\(colour)\"/>"
    }

    /// The names of a chart's axes: `x` under the plot, `y` turned along its left side.
    private static func axisNames(
        x: String, y: String, width: Double, height: Double, plotLeft: Double, plotTop: Double,
        plotHeight: Double
    ) -> String {
        let middle = plotTop + plotHeight / 2
        return "<text class=\"label axis-name\" x=\"\(fixed((plotLeft + width) / 2 - 20, 1))\" "
            + "y=\"\(fixed(height - 2, 1))\">\(escape(x))</text>"
            + "<text class=\"label axis-name\" x=\"12\" y=\"\(fixed(middle, 1))\" "
            + "transform=\"rotate(-90 12 \(fixed(middle, 1)))\" text-anchor=\"middle\">\(escape(y))</text>\n"
    }

    // MARK: Text

    /// `value` with `decimals` decimals, rounded half away from zero, without a locale.
    static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "–" }
        guard abs(value) < 1e12 else { return value.description }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let negative = value < 0 && scaled > 0
        let whole = Int64(scaled / scale)
        var text = (negative ? "-" : "") + String(whole)
        if decimals > 0 {
            let fraction = Int64(scaled - Double(whole) * scale)
            var digits = String(fraction)
            while digits.count < decimals { digits = "0" + digits }
            text += "." + digits
        }
        return text
    }

    /// `text` with `&`, `<`, `>`, `"` and `'` escaped.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
