extension FormRuleTracker {
    /// The tracker's mutable state (its rule comes from the exercise).
    struct Checkpoint: Codable, Hashable, Sendable {
        var reference: Double?
        var brokenSince: Double?
        var reported: Bool
    }

    /// The state, as ``restore(_:)`` takes it back.
    var checkpoint: Checkpoint {
        Checkpoint(reference: reference, brokenSince: brokenSince, reported: reported)
    }

    /// Takes back the state of ``checkpoint``.
    mutating func restore(_ checkpoint: Checkpoint) {
        reference = checkpoint.reference
        brokenSince = checkpoint.brokenSince
        reported = checkpoint.reported
    }
}
