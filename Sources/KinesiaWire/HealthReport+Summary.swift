import KinesiaJSON
import KinesiaMotion

extension HealthReport {
    /// The counter a summarised report adds: how many counters of the full report it leaves
    /// out (see ``summarised(toFit:)``).
    public static let omittedCountersName = "omittedCounters"

    /// The largest JSON body of a health report on the wire, in bytes: what a payload holds
    /// after its header.
    public static let maximumJSONSize = WireFormat.maximumJSONPayloadSize - WireFormat.headerSize

    /// The totals of a process's counters: undotted counters as they are; a dotted detail
    /// (`rejected.cam0.left`) only counts, summed into its first part (`rejected`), when that
    /// total is not reported itself. Sums saturate instead of overflowing.
    ///
    /// This is the rule of `kinesia status` and of ``summarised(toFit:)``.
    public static func totals(_ counters: [String: Int]) -> [String: Int] {
        var totals: [String: Int] = [:]
        for (name, value) in counters where !name.contains(".") { totals[name] = value }
        var details: [String: Int] = [:]
        for (name, value) in counters where name.contains(".") {
            guard let group = name.split(separator: ".", maxSplits: 1).first.map(String.init),
                counters[group] == nil
            else { continue }
            let (sum, overflow) = details[group, default: 0].addingReportingOverflow(value)
            details[group] = overflow ? (value > 0 ? Int.max : Int.min) : sum
        }
        totals.merge(details) { own, _ in own }
        return totals
    }

    /// The report, or a summary of it when its JSON is over `limit` bytes; never more than
    /// `limit` bytes of JSON.
    ///
    /// A worker with thousands of sessions reports a counter per session and per reason
    /// (`rejected.cam0.left`); its report can outgrow ``WireFormat/maximumJSONPayloadSize``.
    /// The summary keeps what an operator reads first:
    ///
    /// 1. the dotted details go, each summed into its total when the total is not reported
    ///    (``totals(_:)``, the rule `kinesia status` shows);
    /// 2. when that is still too large, the counters are kept in name order while they fit;
    ///
    /// and ``omittedCountersName`` says how many counters of the full report are not in the
    /// summary, so that nothing is left out silently.
    ///
    /// - Parameter limit: The largest JSON accepted, in bytes (default: what the wire holds).
    /// - Returns: The report to send and how many counters it leaves out (0: the report itself).
    /// - Throws: ``WireError/nonFinite(_:)`` when the uptime is not finite;
    ///   ``WireError/oversized(size:limit:)`` when even a report without counters is too large
    ///   (a limit under a few hundred bytes).
    public func summarised(toFit limit: Int = maximumJSONSize) throws(WireError) -> (
        report: HealthReport, omitted: Int
    ) {
        let full = try json()
        if full.count <= limit { return (self, 0) }

        var summary = self
        summary.counters = Self.totals(counters)
        summary.counters[Self.omittedCountersName] = omitted(from: summary.counters)
        var size = try summary.json().count
        if size > limit {
            // Keep whole counters in name order while they fit (the count of omitted ones, whose
            // digits may grow, is reserved at its largest).
            var kept: [String: Int] = [Self.omittedCountersName: Int.max]
            size = try HealthReport(
                process: process, role: role, pid: pid, uptime: uptime, counters: kept, replay: replay
            ).json().count
            for name in summary.counters.keys.sorted() where name != Self.omittedCountersName {
                let cost = Self.encodedSize(name: name, value: summary.counters[name]!)
                guard size + cost <= limit else { continue }
                kept[name] = summary.counters[name]
                size += cost
            }
            kept[Self.omittedCountersName] = omitted(from: kept)
            summary.counters = kept
        }
        let encoded = try summary.json().count
        guard encoded <= limit else { throw .oversized(size: encoded, limit: limit) }
        return (summary, summary.counters[Self.omittedCountersName]!)
    }

    /// How many counters of this report are not in `summary`.
    private func omitted(from summary: [String: Int]) -> Int {
        counters.keys.reduce(0) { count, name in summary[name] == nil ? count + 1 : count }
    }

    /// The bytes one counter adds to the JSON: `,"name":value`.
    private static func encodedSize(name: String, value: Int) -> Int {
        var text = ""
        JSONWriter.appendString(name, to: &text)
        return text.utf8.count + 2 + String(value).utf8.count
    }
}
