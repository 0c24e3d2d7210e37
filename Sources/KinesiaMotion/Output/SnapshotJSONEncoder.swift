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
    private var best: (value: Double, text: [UInt8])?
    /// The last rep written, and its text.
    private var lastRep: (rep: Rep, text: [UInt8])?

    /// An encoder with nothing remembered.
    public init() {}

    /// Appends the JSON line of `snapshot`, taken after the pose at `t`, to `out`.
    public mutating func encode(_ snapshot: MotionSnapshot, at t: Double, into out: inout [UInt8]) {
        MotionJSON.encode(
            snapshot, at: t, into: &out,
            best: { value, out in
                if let best, best.value.bitPattern == value.bitPattern {
                    out.append(contentsOf: best.text)
                    return
                }
                var text: [UInt8] = []
                JSONByteWriter.appendNumber(value, to: &text)
                out.append(contentsOf: text)
                best = (value, text)
            },
            lastRep: { rep, out in
                if let lastRep, Self.same(lastRep.rep, rep) {
                    out.append(contentsOf: lastRep.text)
                    return
                }
                var text: [UInt8] = []
                MotionJSON.append(rep, to: &text)
                out.append(contentsOf: text)
                lastRep = (rep, text)
            })
    }

    /// Whether two reps write the same text: their numbers bit for bit (`0.0 == -0.0`, but
    /// they print differently).
    private static func same(_ a: Rep, _ b: Rep) -> Bool {
        a.peak.bitPattern == b.peak.bitPattern && a.start.bitPattern == b.start.bitPattern
            && a.end.bitPattern == b.end.bitPattern && a.faults == b.faults
    }
}
