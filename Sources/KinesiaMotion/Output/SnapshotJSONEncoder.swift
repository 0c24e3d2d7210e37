import KinesiaJSON

/// ``MotionJSON/encode(_:at:into:)-(MotionSnapshot,_,_)`` for one session's stream of
/// snapshots, byte for byte, remembering the text of the numbers that rarely change (the best
/// value and the last rep: four of a snapshot's seven numbers), so that each is turned into
/// digits once rather than in every snapshot (a worker sends one for about every other pose;
/// a number's shortest digits take tens of nanoseconds).
///
/// ```swift
/// var encoder = SnapshotJSONEncoder()
/// encoder.encode(snapshot, at: t, into: &bytes)  // the bytes of MotionJSON.encode(snapshot, at: t)
/// ```
public struct SnapshotJSONEncoder: Sendable {
    /// The best value last written, and its text.
    private var best = Remembered<Double>()
    /// The last rep written, and its text.
    private var lastRep = Remembered<Rep>()

    /// An encoder with nothing remembered.
    public init() {}

    /// Appends the JSON line of `snapshot`, taken after the pose at `t`, to `out`.
    public mutating func encode(_ snapshot: MotionSnapshot, at t: Double, into out: inout [UInt8]) {
        MotionJSON.encode(
            snapshot, at: t, into: &out,
            best: { value, out in
                best.write(value, into: &out, same: { $0.bitPattern == $1.bitPattern }) {
                    JSONByteWriter.appendNumber($0, to: &$1)
                }
            },
            lastRep: { rep, out in
                lastRep.write(rep, into: &out, same: Self.same) { MotionJSON.append($0, to: &$1) }
            })
    }

    /// Whether two reps write the same text: their numbers bit for bit (`0.0 == -0.0`, but
    /// they print differently).
    private static func same(_ a: Rep, _ b: Rep) -> Bool {
        a.peak.bitPattern == b.peak.bitPattern && a.start.bitPattern == b.start.bitPattern
            && a.end.bitPattern == b.end.bitPattern && a.faults == b.faults
    }

    /// A value last written and its text.
    private struct Remembered<Value: Sendable>: Sendable {
        private var last: (value: Value, text: [UInt8])?

        /// Appends `value`'s text: the one remembered when `same` says it is the last value's,
        /// otherwise what `encode` writes (then remembered).
        mutating func write(
            _ value: Value, into out: inout [UInt8], same: (Value, Value) -> Bool,
            encode: (Value, inout [UInt8]) -> Void
        ) {
            if let last, same(last.value, value) {
                out.append(contentsOf: last.text)
                return
            }
            var text: [UInt8] = []
            encode(value, &text)
            out.append(contentsOf: text)
            last = (value, text)
        }
    }
}
