import Foundation

/// What a process publishes on `health/<process>/`: who it is and its counters.
///
/// The JSON (keys sorted, so the bytes are stable):
///
/// ```json
/// {"counters":{"dropped.nonFinite":0,"poses":1200},"pid":4242,"process":"worker-cam0-left",
///  "role":"worker","uptime":12.5}
/// ```
public struct HealthReport: Codable, Hashable, Sendable {
    /// The process's name, as in its `health/<process>/` topic.
    public var process: String
    /// What the process does: `"broker"`, `"ingest"`, `"worker"`, `"listen"`...
    public var role: String
    /// The operating system's process id.
    public var pid: Int
    /// Seconds since the process started.
    public var uptime: Double
    /// Named counters: messages sent, received, dropped per reason, gaps...
    public var counters: [String: Int]

    /// Creates a report.
    public init(process: String, role: String, pid: Int, uptime: Double, counters: [String: Int]) {
        self.process = process
        self.role = role
        self.pid = pid
        self.uptime = uptime
        self.counters = counters
    }

    /// The report as JSON, keys sorted.
    /// - Throws: ``WireError/nonFinite(_:)`` when `uptime` is NaN or infinite (JSON has no
    ///   such numbers).
    public func json() throws(WireError) -> [UInt8] {
        guard uptime.isFinite else { throw .nonFinite(.uptime) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(self))
        } catch {
            throw .invalidJSON(String(describing: error))
        }
    }

    /// Decodes a report from its JSON; unknown keys are ignored.
    /// - Throws: ``WireError/invalidJSON(_:)`` when the JSON is malformed or a field is missing.
    public init(json: some StringProtocol) throws(WireError) {
        do {
            self = try JSONDecoder().decode(HealthReport.self, from: Data(json.utf8))
        } catch {
            throw .invalidJSON(String(describing: error))
        }
    }
}
