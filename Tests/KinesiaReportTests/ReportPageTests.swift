import Foundation
import KinesiaAnalytics
import KinesiaMotion
import KinesiaReport
import Testing

struct ReportPageTests {
    static func sample() -> SessionReport {
        func session(_ name: String, peaks: [Double]) -> SessionReport.Session {
            var samples: [(t: Double, value: Double?)] = []
            var events: [(t: Double, event: MotionEvent)] = []
            for (index, peak) in peaks.enumerated() {
                let start = Double(index) * 4
                for step in 0...20 {
                    let f = Double(step) / 20
                    samples.append((start + f * 4, peak * sin(f * .pi)))
                }
                let rep = Rep(
                    peak: peak, faults: index == 1 ? [.keepTrunkUpright] : [], start: start + 0.5,
                    end: start + 3.5)
                if index == 1 { events.append((start + 1, .formFault(.keepTrunkUpright))) }
                events.append((rep.end, rep.isClean ? .repCompleted(rep) : .repRejected(rep)))
            }
            samples.append((100, nil))
            events.append((12, .baselineCompleted(peaks.max() ?? 0)))
            return SessionReport.Session(name: name, samples: samples, events: events)
        }
        let tempo = RepTempo(
            side: .left, number: 1, set: 1, faults: [], peak: 90, low: 0, start: 0.5, peakTime: 2, end: 3.5,
            timeUp: 1, timeAtTop: 1, timeDown: 1)
        let summary = SetSummary(
            side: .left, set: 1, isComplete: true, reps: 3, clean: 2, rejectedByFault: [.keepTrunkUpright: 1],
            firstPeak: 90, lastPeak: 80, peakSlope: -5, meanCleanPeak: 85, baseline: 90)
        return SessionReport(
            title: "cam0 <patient & co>",
            sessions: [session("left", peaks: [90, 85, 80]), session("right", peaks: [88, 84])],
            analytics: [
                (3.5, .repTempo(tempo)),
                (3.5, .repSymmetry(RepSymmetry(set: 1, pair: 1, left: .init(tempo), right: .init(tempo)))),
                (20, .setSummary(summary)),
            ])
    }

    @Test func thePageIsTheSameBytesEveryTime() {
        #expect(ReportPage.render(Self.sample()) == ReportPage.render(Self.sample()))
    }

    @Test func thePageLoadsNothingFromAnywhere() {
        let html = ReportPage.render(Self.sample())
        #expect(
            html.contains(
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            ))
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("//"))
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("url("))
        #expect(!html.contains("<img") && !html.contains("<link"))
    }

    @Test func everyRepIsARowAndEverySessionAChart() {
        let html = ReportPage.render(Self.sample())
        #expect(html.components(separatedBy: "<tr class=\"rep ").count - 1 == 5)
        #expect(html.contains("data-rep-count=\"3\"") && html.contains("data-rep-count=\"2\""))
        #expect(html.components(separatedBy: "<svg class=\"angle\"").count - 1 == 2)
        #expect(html.components(separatedBy: "<line class=\"fault\"").count - 1 == 2)
        #expect(html.components(separatedBy: "<line class=\"baseline\"").count - 1 == 2)
        #expect(html.contains("<table class=\"sides\" data-pairs=\"2\">"))
        #expect(html.contains("<table class=\"tempo\" data-rows=\"1\">"))
        #expect(html.contains("<td>keepTrunkUpright 33%</td>"))
        #expect(html.contains("<td>-5.00</td>"))
        // Text from the database is escaped.
        #expect(html.contains("cam0 &lt;patient &amp; co&gt;"))
        // An unmeasurable sample breaks the line instead of drawing it to zero.
        #expect(!html.contains("nan") && !html.contains("inf"))
    }
}

struct ReportPageLegendTests {
    /// The `data-items` of every legend of `html`, in order.
    static func legends(_ html: String) -> [String] {
        html.components(separatedBy: "<g class=\"legend\" data-items=\"").dropFirst().map {
            String($0.prefix { $0 != "\"" })
        }
    }

    @Test func everyChartSaysWhatItsColoursAndLinesAre() {
        let html = ReportPage.render(ReportPageTests.sample())
        let legends = Self.legends(html)
        // Two angle charts (each with its baseline named), left against right, the tempo.
        #expect(
            legends == [
                "angle|clean rep|rejected rep|peak|form fault|baseline 90.0°",
                "angle|clean rep|rejected rep|peak|form fault|baseline 88.0°", "left|right",
                "up|at the top|down",
            ], "\(legends)")
    }

    @Test func theAxesAreNamedAndTheBaselineLineToo() {
        let html = ReportPage.render(ReportPageTests.sample())
        for name in ["time (s)", "angle (°)", "rep", "peak (°)", "time under tension (s)"] {
            #expect(html.contains("class=\"label axis-name\"") && html.contains(">\(name)</text>"), "\(name)")
        }
        #expect(html.components(separatedBy: "class=\"label baseline-name\"").count - 1 == 2)
        #expect(html.contains(">baseline 90.0°</text>"))
    }
}
