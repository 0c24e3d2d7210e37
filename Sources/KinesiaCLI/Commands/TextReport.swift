import Foundation
import KinesiaMotion

/// The readable lines of `kinesia analyze` (text format): fixed decimals, ASCII only, the same
/// bytes in every locale.
enum TextReport {
    static func line(_ event: MotionEvent, at t: Double) -> String {
        let head = time(t) + "  " + event.name.padding(toLength: 18, withPad: " ", startingAt: 0)
        switch event {
        case .repCompleted(let rep), .repRejected(let rep):
            var text =
                head + "peak " + degrees(rep.peak) + "  start " + seconds(rep.start) + "  end "
                + seconds(rep.end)
            if !rep.faults.isEmpty { text += "  faults " + rep.faults.map(\.rawValue).joined(separator: ",") }
            return text
        case .holdStarted:
            return head.trimmingTrailingSpaces()
        case .formFault(let fault):
            return head + fault.rawValue
        case .visibilityChanged(let visibility):
            if visibility.isVisible { return head + "visible" }
            let missing = visibility.missingJoints.map(\.rawValue).joined(separator: ",")
            return head + "not visible" + (missing.isEmpty ? "" : ", missing " + missing)
        case .setupChanged(let issues):
            return head + (issues.isEmpty ? "ok" : issues.map(\.rawValue).sorted().joined(separator: ","))
        case .baselineCompleted(let value):
            return head + degrees(value)
        }
    }

    static func line(_ frame: MotionFrame) -> String {
        time(frame.t) + "  " + "frame".padding(toLength: 18, withPad: " ", startingAt: 0) + "raw "
            + (frame.raw.map(degrees) ?? "-") + "  value " + (frame.value.map(degrees) ?? "-")
    }

    /// `summary: 4 clean, 0 rejected, best 95.0`, then what was dropped when a pose was:
    /// `, 2 poses dropped: 1 timestampNotIncreasing, 1 timestampOutlier`.
    static func line(_ summary: MotionSummary) -> String {
        "summary: \(summary.repCount) clean, \(summary.rejectedCount) rejected, best \(degrees(summary.best))"
            + (summary.rejectedPoses.total > 0 ? ", " + summary.rejectedPoses.summary : "")
    }

    /// Seconds with 3 decimals.
    static func seconds(_ t: Double) -> String { String(format: "%.3f", t) }

    /// Seconds with 3 decimals, right-aligned to 8 characters (the first column).
    static func time(_ t: Double) -> String {
        let text = seconds(t)
        return text.count < 8 ? String(repeating: " ", count: 8 - text.count) + text : text
    }

    /// Degrees with 1 decimal.
    static func degrees(_ value: Double) -> String { String(format: "%.1f", value) }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
