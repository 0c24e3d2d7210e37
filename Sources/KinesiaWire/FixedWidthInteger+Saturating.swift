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

    /// Subtracts `other`, stopping at the type's smallest (or largest) value instead of
    /// trapping: a counter taken back (a message counted missing that came after all) never
    /// wraps below zero.
    ///
    /// ```swift
    /// var missing: UInt64 = 0
    /// missing.subtractSaturating(1)   // 0
    /// ```
    public mutating func subtractSaturating(_ other: Self) {
        let (difference, overflow) = subtractingReportingOverflow(other)
        self = overflow ? (other < 0 ? .max : .min) : difference
    }
}
