extension PrimarySignal {
    /// The signal's mutable state: its filter's and its outlier check's. The rules are not in it
    /// (they come from the exercise).
    struct Checkpoint: Codable, Hashable, Sendable {
        var filterValue: Double?
        var filterDerivative: Double
        var filterTime: Double
        var acceptedValue: Double?
        var outlierSince: Double?
        var lastMeasuredTime: Double?
    }

    /// The state, as ``restore(_:)`` takes it back.
    var checkpoint: Checkpoint {
        Checkpoint(
            filterValue: filter.value, filterDerivative: filter.derivative, filterTime: filter.time,
            acceptedValue: acceptedValue, outlierSince: outlierSince, lastMeasuredTime: lastMeasuredTime)
    }

    /// Takes back the state of ``checkpoint``.
    mutating func restore(_ checkpoint: Checkpoint) {
        filter.value = checkpoint.filterValue
        filter.derivative = checkpoint.filterDerivative
        filter.time = checkpoint.filterTime
        acceptedValue = checkpoint.acceptedValue
        outlierSince = checkpoint.outlierSince
        lastMeasuredTime = checkpoint.lastMeasuredTime
    }
}
