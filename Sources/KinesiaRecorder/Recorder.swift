import KinesiaClient
import KinesiaControl
import KinesiaMotion
import KinesiaService
import KinesiaStore
import KinesiaWire

/// What `kinesia record` does with each message, with no I/O: store it, skip it (a snapshot
/// between two kept ones: its cursor still moves), or warn; and the counters.
///
/// Snapshots are thinned per stream (a topic and its sender's stream id): one is kept when it is
/// the stream's first, when its rep counts differ from the last one kept, or when at least
/// `snapshotInterval` seconds of pose time passed since the last one kept (or time went back).
/// A stream's messages come exactly once and in order (``ExactlyOnceSubscriber``), so what is
/// kept depends on that stream's messages alone; and a recorder that restarts takes up each
/// stream's last kept snapshot from the database (``init(snapshotInterval:restoring:)``), so
/// that the rows stored across any number of restarts are those of one run without a fault.
struct Recorder {
    /// What to do with a message.
    enum Decision: Equatable {
        /// Store the payload under the key.
        case store(RecordStore.Payload, RecordStore.Key)
        /// Do not store it, but move the stream's cursor.
        case skip(RecordStore.Key)
        /// Tell the operator.
        case warn(String)
    }

    /// One snapshot stream: a topic and its sender's stream id.
    struct SnapshotStream: Hashable {
        var topic: String
        var stream: UInt64
    }

    /// The pose time and counts of the last snapshot kept of a stream.
    struct Kept: Equatable {
        var t: Double
        var counts: Counts
    }

    /// A snapshot's rep and rejected-rep counts.
    struct Counts: Equatable {
        var reps: Int
        var rejected: Int
    }

    let snapshotInterval: Double
    /// Per snapshot stream: the last snapshot kept.
    private(set) var lastKept: [SnapshotStream: Kept] = [:]
    var stored = 0
    var duplicates = 0
    var snapshotsSkipped = 0
    var malformed = 0
    var missing: UInt64 = 0
    /// The gap warnings, counted and throttled (a sender can make every message a gap).
    var gapWarnings = WarningThrottle()

    /// A recorder that thins snapshots at `snapshotInterval`, taking up where `restoring` (each
    /// stream's last snapshot stored, ``RecordStore/lastKeptSnapshots()``) left off.
    init(snapshotInterval: Double, restoring kept: [RecordStore.KeptSnapshot] = []) {
        self.snapshotInterval = snapshotInterval
        for snapshot in kept {
            lastKept[SnapshotStream(topic: snapshot.topic, stream: snapshot.streamID)] = Kept(
                t: snapshot.t, counts: Counts(reps: snapshot.repCount, rejected: snapshot.rejectedCount))
        }
    }

    /// `stored`, `duplicates`, `snapshotsSkipped`, `malformed`, `gaps` (messages that cannot be
    /// had any more).
    var counters: [String: Int] {
        [
            "stored": stored, "duplicates": duplicates, "snapshotsSkipped": snapshotsSkipped,
            "malformed": malformed, "gaps": Int(clamping: missing),
        ]
    }

    static func key(_ message: some BusTopicMessage) -> RecordStore.Key {
        RecordStore.Key(
            streamID: message.streamID.rawValue, topic: message.topic.string, sequence: message.sequence,
            camera: message.camera, session: message.session)
    }

    mutating func decide(_ message: BusMessage) -> Decision? {
        switch message {
        case .event(let e):
            return .store(.event(t: e.t, e.event), Self.key(e))
        case .analytics(let a):
            return .store(.analytics(t: a.t, a.record), Self.key(a))
        case .snapshot(let s):
            let stream = SnapshotStream(topic: s.topic.string, stream: s.streamID.rawValue)
            let kept = Kept(
                t: s.t, counts: Counts(reps: s.snapshot.repCount, rejected: s.snapshot.rejectedCount))
            if let last = lastKept[stream], last.counts == kept.counts, s.t >= last.t,
                s.t - last.t < snapshotInterval
            {
                snapshotsSkipped += 1
                return .skip(Self.key(s))
            }
            lastKept[stream] = kept
            return .store(.snapshot(t: s.t, s.snapshot), Self.key(s))
        case .malformed(let bad):
            malformed += 1
            return malformed <= 10 || malformed % 1000 == 0
                ? .warn("malformed message: \(bad) (\(malformed) so far)") : nil
        case .gap(let gap):
            switch gap {
            case .missed(_, let count, _): missing.addSaturating(count)
            case .senderRestarted: break  // a new stream: followed from its start, nothing lost
            case .overflow(let dropped): missing.addSaturating(UInt64(max(0, dropped)))
            }
            return gapWarnings.admit("gap", "\(gap)").map { .warn($0) }
        case .run(let r):
            let (type, patient): (String, String?) =
                switch r.record {
                case .started(let plan): ("runStarted", plan.patient)
                case .baselineStarted: ("baselineStarted", nil)
                case .ended: ("runEnded", nil)
                }
            return .store(
                .run(type: type, run: r.record.run, patient: patient, json: r.record.json()), Self.key(r))
        case .health, .pose:
            return nil
        }
    }
}
