import KinesiaClient
import KinesiaService
import Synchronization

/// The broker's admission decisions, counted for `health/broker/` and logged (the first ten of
/// each reason, then every hundredth). Shared between the ZAP thread and the broker's loop.
final class AdmissionRecord: Sendable {
    private let state = Mutex<(counters: [String: Int], problems: Set<String>)>(([:], []))
    private let log: Logger

    init(log: Logger) {
        self.log = log
    }

    /// Counts one decision; logs refusals and allowed-key files that were skipped (once each).
    /// - Parameter problems: The skipped files of the allowed-keys directory read for this
    ///   decision (``AllowedKeys/problems``), `nil` when it was not read: their number is the
    ///   counter `allowed.skipped` until the next read.
    func record(_ decision: BrokerAdmission.Decision, problems: [String]?) {
        let (message, newProblems): (String?, [String]) = state.withLock { state in
            let fresh = (problems ?? []).filter { state.problems.insert($0).inserted }
            if let problems { state.counters["allowed.skipped"] = problems.count }
            switch decision {
            case .admit(let userID):
                let role = userID.split(separator: "/").first.map(String.init) ?? userID
                state.counters["admitted.\(role)", default: 0] += 1
                return (nil, fresh)
            case .refuse(let reason, let detail):
                let count = state.counters["refused.\(reason.rawValue)", default: 0] + 1
                state.counters["refused.\(reason.rawValue)"] = count
                let shown = count <= 10 || count % 100 == 0
                return (
                    shown ? "refused a connection: \(detail) (\(count) refused for this reason)" : nil, fresh
                )
            }
        }
        for problem in newProblems { log.warning("allowed keys: \(problem)") }
        if let message { log.warning(message) }
    }

    /// `admitted.<role>`, `refused.<reason>` and `allowed.skipped`.
    var counters: [String: Int] { state.withLock { $0.counters } }
}
