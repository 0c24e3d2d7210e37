import KinesiaMotion

extension RepTempo {
    /// A rep's tempo as a checkpoint holds it (a rep waiting for its pair): every field.
    struct Checkpoint: Codable, Hashable, Sendable {
        var side: BodySide
        var number: Int
        var set: Int
        var faults: [FormFeedback]
        var peak: Double
        var low: Double
        var start: Double
        var peakTime: Double
        var end: Double
        var timeUp: Double
        var timeAtTop: Double
        var timeDown: Double
    }

    /// The tempo, as ``init(restoring:)`` takes it back.
    var checkpoint: Checkpoint {
        Checkpoint(
            side: side, number: number, set: set, faults: faults, peak: peak, low: low, start: start,
            peakTime: peakTime, end: end, timeUp: timeUp, timeAtTop: timeAtTop, timeDown: timeDown)
    }

    /// The tempo of `checkpoint`.
    init(restoring checkpoint: Checkpoint) {
        self.init(
            side: checkpoint.side, number: checkpoint.number, set: checkpoint.set, faults: checkpoint.faults,
            peak: checkpoint.peak, low: checkpoint.low, start: checkpoint.start,
            peakTime: checkpoint.peakTime,
            end: checkpoint.end, timeUp: checkpoint.timeUp, timeAtTop: checkpoint.timeAtTop,
            timeDown: checkpoint.timeDown)
    }
}
