import Foundation
import KinesiaTestSupport

/// The table `kinesia status` prints, read back: each process's role and counters, as a user
/// reads them (the usual counters in their columns, the others as `name value` pairs).
struct StatusRow: Equatable {
    var role: String
    var counters: [String: Int]

    /// The rows of a table, by process name.
    static func parse(_ table: String) -> [String: StatusRow] {
        let lines = table.split(separator: "\n").map(String.init)
        guard let header = lines.first.map(cells), header.first == "process" else { return [:] }
        let named = header.count - (header.last == "other" ? 1 : 0)
        var rows: [String: StatusRow] = [:]
        for line in lines.dropFirst() {
            let values = cells(line)
            guard values.count >= 4 else { continue }
            var counters: [String: Int] = [:]
            for (column, value) in zip(header[4..<named], values[4..<min(named, values.count)]) {
                counters[column] = Int(value)
            }
            for pair in values.dropFirst(named) {
                let parts = pair.split(separator: " ")
                if parts.count == 2, let value = Int(parts[1]) { counters[String(parts[0])] = value }
            }
            rows[values[0]] = StatusRow(role: values[1], counters: counters)
        }
        return rows
    }

    /// A line's cells: separated by two spaces or more.
    static func cells(_ line: String) -> [String] {
        line.split(separator: /\s{2,}/).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Runs `kinesia status` on `bus` until `condition` holds for its rows, or `timeout` passes.
    /// - Returns: The last rows read.
    static func poll(
        bus: String, timeout: Duration, until condition: ([String: StatusRow]) -> Bool
    ) async throws -> [String: StatusRow] {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var rows: [String: StatusRow] = [:]
        repeat {
            let run = try await ConsumerTestPaths.run(["status", "--bus", bus, "--wait", "2.5"])
            rows = parse(run.output)
            if condition(rows) { return rows }
        } while clock.now < deadline
        return rows
    }
}
