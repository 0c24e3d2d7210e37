/// Damage found in a journal: what kind, where, and what it costs.
///
/// Each kind is counted on `health/` as `journalDamage.<kind>` (and all of them in
/// `journalDamage`), and logged once with ``description``. Only ``Kind/tornTail`` is the
/// expected trace of a crash; every other kind means records that were journaled are gone.
///
/// ```swift
/// for damage in reader.damageFound where damage.kind != .tornTail { log.warning("\(damage)") }
/// ```
public struct JournalDamage: Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// The last record of the last segment is incomplete (or the tail is zero-filled): a
        /// write cut short by `kill -9`, a power cut or a full disk. The next writer cuts it;
        /// only the record being written is lost.
        case tornTail
        /// Bytes that fail their checksum or do not read as records: followed by valid records
        /// (a flipped bit, an overwritten range), a complete but invalid last record, or a
        /// segment without a valid header. The records in them are never served.
        case corruption
        /// A segment that is not the last ends inside a record: it was cut short, and its last
        /// records are lost.
        case truncatedSegment
        /// Sequence numbers missing between two segments: the next segment starts after the
        /// record that follows the previous one's last (records cut off at a record boundary).
        case missingRecords
        /// A segment deleted that retention did not delete: the segment being written, or one
        /// between others.
        case deletedSegment

        /// The counter's suffix (`tornTail`, `corruption`...).
        public var description: String { rawValue }
    }

    /// What went wrong.
    public var kind: Kind
    /// The segment file's name.
    public var segment: String
    /// Where in the segment (0 for a whole segment).
    public var offset: Int
    /// How many bytes (0 when unknown, as for a deleted segment).
    public var bytes: Int
    /// The sequence numbers known to be lost (`nil` when they cannot be told).
    public var missing: ClosedRange<UInt64>?

    /// Describes damage.
    public init(
        kind: Kind, segment: String, offset: Int = 0, bytes: Int = 0, missing: ClosedRange<UInt64>? = nil
    ) {
        self.kind = kind
        self.segment = segment
        self.offset = offset
        self.bytes = bytes
        self.missing = missing
    }

    /// `corruption in 00000000000000000000.journal at 1234: 56 bytes`.
    public var description: String {
        var text: String
        switch kind {
        case .tornTail: text = "a torn tail (an interrupted write)"
        case .corruption: text = "corruption (a checksum failure, never served)"
        case .truncatedSegment: text = "a truncated segment (not the last: records lost)"
        case .missingRecords: text = "missing records between segments"
        case .deletedSegment: text = "a deleted segment"
        }
        text += " in \(segment)"
        if bytes > 0 { text += " at \(offset): \(bytes) bytes" }
        if let missing {
            let count = missing.upperBound &- missing.lowerBound
            text +=
                count == UInt64.max
                ? ", every sequence number lost"
                : ", sequences \(missing.lowerBound)...\(missing.upperBound) (\(count &+ 1)) lost"
        }
        return text
    }
}

extension [JournalDamage] {
    /// The `journalDamage` counters of these: the total and one per kind found
    /// (`journalDamage.corruption`).
    public var counters: [String: Int] {
        var values = ["journalDamage": count]
        for damage in self { values["journalDamage.\(damage.kind)", default: 0] += 1 }
        return values
    }
}
