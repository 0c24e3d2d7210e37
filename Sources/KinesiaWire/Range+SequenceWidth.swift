extension Range where Bound == UInt64 {
    /// How many sequence numbers the range holds, as a `UInt64`: total for every range a peer
    /// can send (`Range.count` is an `Int`, and traps past `Int.max`).
    ///
    /// ```swift
    /// (0..<UInt64.max).width   // 18446744073709551615
    /// ```
    public var width: UInt64 { upperBound &- lowerBound }
}
