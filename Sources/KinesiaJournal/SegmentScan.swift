/// What one segment's bytes hold: its valid records, the damaged ranges between them, and a
/// torn tail. A value computed from bytes alone (no I/O), used by the writer when it opens a
/// stream and by the reader.
///
/// Scanning walks the records from the segment header. At a record that is not valid it looks
/// ahead, byte by byte, for the next valid record whose sequence number is higher than the
/// last good one (a CRC-32C makes a false match negligible):
/// - when there is one, the bytes in between are **damage** (a flipped or overwritten record in
///   the middle): listed in ``damage``, never served, and the scan goes on;
/// - when there is none, everything after the last good record is the **tail**: a write cut
///   short by `kill -9`, a power cut or a full disk (``tailBytes``; zero-filled tails, which
///   some file systems leave after a crash, are tails too). A writer cuts it. ``tailIsTorn``
///   tells a torn write (an incomplete record, zeros, a header cut short) from a complete
///   record that fails its checksum, which no interrupted write leaves: corruption.
///
/// ```swift
/// let scan = bytes.withUnsafeBytes { SegmentScan($0) }
/// scan.records.last?.sequence   // the last good record
/// scan.validEnd                 // where the next record goes
/// ```
public struct SegmentScan: Hashable, Sendable {
    /// A valid record: where it is and its sequence number.
    public struct Record: Hashable, Sendable {
        /// Its offset in the segment.
        public var offset: Int
        /// Its size in bytes, header included.
        public var size: Int
        /// Its sequence number.
        public var sequence: UInt64
    }

    /// A damaged range between two valid records.
    public struct Damage: Hashable, Sendable {
        /// Where it starts in the segment.
        public var offset: Int
        /// How many bytes.
        public var length: Int
    }

    /// Whether the segment starts with ``JournalRecord/segmentMagic``; when it does not, no
    /// record is read from it and all of it is ``damage``.
    public var hasHeader: Bool
    /// The valid records, in file order (their sequence numbers increase).
    public var records: [Record] = []
    /// Damaged ranges followed by valid records.
    public var damage: [Damage] = []
    /// The offset just after the last valid record (after the header when there is none).
    public var validEnd: Int
    /// The bytes after ``validEnd`` that are no valid record (0: a clean end).
    public var tailBytes: Int
    /// Whether the tail is what an interrupted write leaves: an incomplete record (its header
    /// promises more bytes than there are), zeros, or a segment header cut short. `false` for
    /// no tail, and for a tail that starts with a complete record failing its checksum (or
    /// that does not read as a record at all): corruption, not a torn write.
    public var tailIsTorn = false

    /// Scans a whole segment.
    ///
    /// - Parameter bytes: The segment file's contents.
    public init(_ bytes: UnsafeRawBufferPointer) {
        let magic = JournalRecord.segmentMagic
        guard bytes.count >= magic.count, bytes.prefix(magic.count).elementsEqual(magic) else {
            hasHeader = false
            validEnd = 0
            tailBytes = 0
            // A header cut short by a crash during the segment's creation is a tail; anything
            // else in place of the header is damage.
            if bytes.count < magic.count,
                bytes.elementsEqual(magic.prefix(bytes.count)) || bytes.allSatisfy({ $0 == 0 })
            {
                tailBytes = bytes.count
                tailIsTorn = bytes.count > 0
            } else {
                damage = [Damage(offset: 0, length: bytes.count)]
            }
            return
        }
        hasHeader = true
        validEnd = magic.count
        tailBytes = 0
        self.continueScan(bytes, from: magic.count)
    }

    /// Scans the bytes of a segment after a point already scanned (a reader following a
    /// growing segment): `bytes` starts at segment offset `base`, and records must follow
    /// `lastSequence`.
    public init(continuing bytes: UnsafeRawBufferPointer, at base: Int, after lastSequence: UInt64?) {
        hasHeader = true
        validEnd = base
        tailBytes = 0
        continueScan(bytes, from: 0, base: base, after: lastSequence)
    }

    private mutating func continueScan(
        _ bytes: UnsafeRawBufferPointer, from start: Int, base: Int = 0, after previous: UInt64? = nil
    ) {
        var offset = start
        var last = previous
        while offset < bytes.count {
            let checked = JournalRecord.check(bytes, at: offset)
            switch checked {
            case .record(let sequence, let size) where last.map({ sequence > $0 }) ?? true:
                records.append(Record(offset: base + offset, size: size, sequence: sequence))
                last = sequence
                offset += size
                validEnd = base + offset
            default:
                guard let next = Self.nextValid(bytes, after: offset, sequenceAbove: last) else {
                    tailBytes = bytes.count - offset
                    let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
                    tailIsTorn = checked == .incomplete || rest.allSatisfy { $0 == 0 }
                    return
                }
                damage.append(Damage(offset: base + offset, length: next - offset))
                offset = next
            }
        }
    }

    /// The offset of the next valid record after `offset` whose sequence is above `sequence`.
    private static func nextValid(
        _ bytes: UnsafeRawBufferPointer, after offset: Int, sequenceAbove sequence: UInt64?
    )
        -> Int?
    {
        var candidate = offset + 1
        let limit = bytes.count - JournalRecord.headerSize - JournalRecord.minimumBodyLength
        while candidate <= limit {
            if case .record(let found, _) = JournalRecord.check(bytes, at: candidate),
                sequence.map({ found > $0 }) ?? true
            {
                return candidate
            }
            candidate += 1
        }
        return nil
    }
}
