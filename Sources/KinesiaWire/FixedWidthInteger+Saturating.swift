extension FixedWidthInteger {
    /// Adds `other`, stopping at the type's largest (or smallest) value instead of trapping: a
    /// counter of what peers sent (missed messages, lost sequence numbers) stays total for any
    /// value they can send.
    ///
    /// ```swift
    /// var missed: UInt64 = .max - 1
    /// missed.addSaturating(5)   // UInt64.max
    /// ```
    public mutating func addSaturating(_ other: Self) {
        let (sum, overflow) = addingReportingOverflow(other)
        self = overflow ? (other < 0 ? .min : .max) : sum
    }
}
