import KinesiaService
import KinesiaSystem

/// When each pose of a recording goes out at `kinesia ingest --pace recording`: at the pace of
/// its timestamps (divided by the speed), with no clock and no I/O (the caller passes the time).
///
/// A step between two poses that would take longer than ``longestWait`` of wall time, or that
/// goes back in time, is a jump in the recording's time, not a pause to sit through (`t` going
/// from 0 to 10^6 would wait 11.6 days): the pose goes out at once, the caller says so, and the
/// pace goes on from that pose.
///
/// ```swift
/// var pace = RecordingPace(speed: 1)
/// switch pace.schedule(pose.timestamp, now: clock.now) {
/// case .at(let due): sleep(until: due)
/// case .jump(let from, let to): log("time jumps from \(from) to \(to): not waited for")
/// }
/// ```
struct RecordingPace {
    /// What to do with a pose.
    enum Decision: Hashable {
        /// Send it at `due`, a time on the caller's clock (now or in the past: at once).
        case at(Duration)
        /// The recording's time jumps from `from` to `to` (ahead by more than the longest wait,
        /// or back): send it at once; the pace goes on from it.
        case jump(from: Double, to: Double)
    }

    /// The longest wait between two poses, in wall time (5 s): a longer step of the recording's
    /// time is a jump, not waited for.
    static let longestWait = 5.0

    /// The factor the recording's time is divided by (positive).
    let speed: Double
    /// Where the pace is anchored: a wall time and the pose time sent then.
    private var origin: (wall: Duration, t: Double)?
    /// The last finite timestamp scheduled.
    private var last: Double?

    /// A pace `speed` times faster than the recording's.
    init(speed: Double) {
        self.speed = speed
    }

    /// When the pose at `t` is due, `now` being the current time. The first pose is due now;
    /// a non-finite `t` is sent at once and changes nothing.
    mutating func schedule(_ t: Double, now: Duration) -> Decision {
        guard t.isFinite else { return .at(now) }
        defer { last = t }
        guard let origin, let last else {
            origin = (now, t)
            return .at(now)
        }
        let step = (t - last) / speed
        guard step >= 0, step <= Self.longestWait else {
            self.origin = (now, t)
            return .jump(from: last, to: t)
        }
        return .at(origin.wall + .seconds(double: (t - origin.t) / speed))
    }
}
