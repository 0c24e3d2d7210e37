import Foundation
public import KinesiaMotion

/// The binary pose record: the bus's hot path.
///
/// After the 28-byte ``WireHeader`` (kind ``PayloadKind/pose``), all little-endian:
///
/// | Size | Field |
/// |-----:|-------|
/// | 8 | timestamp, Float64 seconds |
/// | 1 | flags: bit 0 = image size present; other bits must be 0 |
/// | 16 | (if bit 0) image width, height, Float64 |
/// | 1 | point count `n` (0...19) |
/// | 17 × n | joint index (UInt8, ``Joint/index``), x, y (Float64 pixels) |
/// | 1 | confidence count `m` (0...19) |
/// | 9 × m | joint index (UInt8), confidence (Float64) |
///
/// Every number is Float64, like `Pose` itself, so a pose survives the round trip bit for bit
/// and the analysis gives identical events on either side of the bus. The encoder writes
/// joints in ascending index order, so one pose has one encoding; the decoder accepts any
/// order but refuses duplicates, unknown indices, non-finite numbers and trailing bytes.
///
/// ```swift
/// var buffer: [UInt8] = []
/// try PoseCodec.encode(pose, header: header, into: &buffer)   // reuses buffer's storage
/// let (header, decoded) = try PoseCodec.decode(buffer)
/// ```
public enum PoseCodec {
    /// The size of the largest pose record (every joint with a confidence, an image size).
    public static let maximumEncodedSize =
        WireFormat.headerSize + 8 + 1 + 16 + 1 + jointCount * pointEntrySize + 1 + jointCount
        * confidenceEntrySize

    static let pointEntrySize = 17
    static let confidenceEntrySize = 9
    static let jointCount = 19
    static let imageSizeFlag: UInt8 = 0x01

    /// The encoded size of `pose`, header included.
    public static func encodedSize(of pose: Pose) -> Int {
        WireFormat.headerSize + 8 + 1 + (pose.imageSize == nil ? 0 : 16) + 1 + pose.points.count
            * pointEntrySize + 1 + pose.confidence.count * confidenceEntrySize
    }

    /// Encodes `pose` into `buffer`, which must hold at least ``encodedSize(of:)`` bytes.
    ///
    /// No allocation: this is the form to use when writing straight into a message buffer.
    ///
    /// - Returns: The number of bytes written.
    /// - Throws: ``WireError/unexpectedKind(_:)`` when `header.kind` is not `.pose`,
    ///   ``WireError/nonFinite(_:)`` for a NaN or infinite number,
    ///   ``WireError/negativeImageSize``. On error the buffer's content is unspecified.
    public static func encode(
        _ pose: Pose, header: WireHeader, into buffer: UnsafeMutableRawBufferPointer
    ) throws(WireError) -> Int {
        guard header.kind == .pose else { throw .unexpectedKind(header.kind) }
        let size = encodedSize(of: pose)
        precondition(buffer.count >= size, "buffer too small for the pose record")
        header.write(into: buffer)
        var offset = WireFormat.headerSize

        guard pose.timestamp.isFinite else { throw .nonFinite(.timestamp) }
        buffer.writeFloat64(pose.timestamp, at: offset)
        offset += 8

        if let imageSize = pose.imageSize {
            let width = Double(imageSize.width)
            let height = Double(imageSize.height)
            guard width.isFinite else { throw .nonFinite(.imageWidth) }
            guard height.isFinite else { throw .nonFinite(.imageHeight) }
            guard width >= 0, height >= 0 else { throw .negativeImageSize }
            buffer[offset] = imageSizeFlag
            buffer.writeFloat64(width, at: offset + 1)
            buffer.writeFloat64(height, at: offset + 9)
            offset += 17
        } else {
            buffer[offset] = 0
            offset += 1
        }

        // Points in ascending joint order: a first pass finds which joints are present, the
        // second writes each at its rank among them. No sorting, no temporary storage.
        var pointMask: UInt32 = 0
        for (joint, point) in pose.points {
            guard Double(point.x).isFinite else { throw .nonFinite(.x(joint)) }
            guard Double(point.y).isFinite else { throw .nonFinite(.y(joint)) }
            pointMask |= 1 << UInt32(joint.index)
        }
        buffer[offset] = UInt8(pose.points.count)
        offset += 1
        for (joint, point) in pose.points {
            let bit = UInt32(1) << UInt32(joint.index)
            let entry = offset + (pointMask & (bit &- 1)).nonzeroBitCount * pointEntrySize
            buffer[entry] = UInt8(joint.index)
            buffer.writeFloat64(Double(point.x), at: entry + 1)
            buffer.writeFloat64(Double(point.y), at: entry + 9)
        }
        offset += pose.points.count * pointEntrySize

        var confidenceMask: UInt32 = 0
        for (joint, value) in pose.confidence {
            guard value.isFinite else { throw .nonFinite(.confidence(joint)) }
            confidenceMask |= 1 << UInt32(joint.index)
        }
        buffer[offset] = UInt8(pose.confidence.count)
        offset += 1
        for (joint, value) in pose.confidence {
            let bit = UInt32(1) << UInt32(joint.index)
            let entry =
                offset + (confidenceMask & (bit &- 1)).nonzeroBitCount * confidenceEntrySize
            buffer[entry] = UInt8(joint.index)
            buffer.writeFloat64(value, at: entry + 1)
        }
        offset += pose.confidence.count * confidenceEntrySize
        return offset
    }

    /// Encodes `pose` into `buffer`, replacing its content and reusing its storage: once the
    /// buffer's capacity reaches ``maximumEncodedSize``, encoding allocates nothing.
    /// - Throws: ``WireError``, as ``encode(_:header:into:)-(_,_,UnsafeMutableRawBufferPointer)``.
    public static func encode(_ pose: Pose, header: WireHeader, into buffer: inout [UInt8])
        throws(WireError)
    {
        let size = encodedSize(of: pose)
        if buffer.count < size {
            if buffer.capacity < maximumEncodedSize { buffer.reserveCapacity(maximumEncodedSize) }
            buffer.append(contentsOf: repeatElement(0, count: size - buffer.count))
        } else if buffer.count > size {
            buffer.removeLast(buffer.count - size)
        }
        _ = try buffer.withMutableBytes { (raw) throws(WireError) in
            try encode(pose, header: header, into: raw)
        }
    }

    /// Encodes `pose` into a new array.
    /// - Throws: ``WireError``, as ``encode(_:header:into:)-(_,_,UnsafeMutableRawBufferPointer)``.
    public static func encode(_ pose: Pose, header: WireHeader) throws(WireError) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(encodedSize(of: pose))
        try encode(pose, header: header, into: &buffer)
        return buffer
    }

    /// Decodes a pose payload.
    /// - Throws: ``WireError``: the header's errors, ``WireError/unexpectedKind(_:)`` for a
    ///   payload that is not a pose, and every malformation of the record.
    public static func decode(_ payload: UnsafeRawBufferPointer) throws(WireError) -> (
        header: WireHeader, pose: Pose
    ) {
        var flat = FlatPose()
        let header = try decode(payload, into: &flat)
        return (header, flat.pose)
    }

    /// Decodes a pose payload straight into flat form, reusing `flat`'s storage: no allocation.
    ///
    /// The same parser as ``decode(_:)-(UnsafeRawBufferPointer)`` (which calls this): the same
    /// checks, the same errors, the same pose.
    /// - Returns: The payload's header.
    /// - Throws: ``WireError``, as ``decode(_:)-(UnsafeRawBufferPointer)``. On error `flat`'s
    ///   content is unspecified.
    public static func decode(_ payload: UnsafeRawBufferPointer, into flat: inout FlatPose)
        throws(WireError) -> WireHeader
    {
        let header = try WireHeader.decode(from: payload)
        guard header.kind == .pose else { throw .unexpectedKind(header.kind) }
        var offset = WireFormat.headerSize

        try need(offset + 9, payload)
        let timestamp = payload.readFloat64(at: offset)
        guard timestamp.isFinite else { throw .nonFinite(.timestamp) }
        let flags = payload[offset + 8]
        offset += 9
        guard flags & ~imageSizeFlag == 0 else { throw .unsupportedFlags(flags) }

        var imageSize: CGSize?
        if flags & imageSizeFlag != 0 {
            try need(offset + 16, payload)
            let width = payload.readFloat64(at: offset)
            let height = payload.readFloat64(at: offset + 8)
            guard width.isFinite else { throw .nonFinite(.imageWidth) }
            guard height.isFinite else { throw .nonFinite(.imageHeight) }
            guard width >= 0, height >= 0 else { throw .negativeImageSize }
            imageSize = CGSize(width: width, height: height)
            offset += 16
        }
        flat.timestamp = timestamp
        flat.imageSize = imageSize
        flat.removeAll()
        // Read once a pose: a global's every read checks its lazy initialisation (a call).
        let joints = jointsByIndex

        try need(offset + 1, payload)
        let pointCount = Int(payload[offset])
        offset += 1
        guard pointCount <= jointCount else { throw .tooManyJoints(count: pointCount) }
        try need(offset + pointCount * pointEntrySize, payload)
        var seen: UInt32 = 0
        for _ in 0..<pointCount {
            let joint = try joint(at: offset, payload, joints, seen: &seen)
            let x = payload.readFloat64(at: offset + 1)
            let y = payload.readFloat64(at: offset + 9)
            guard x.isFinite else { throw .nonFinite(.x(joint)) }
            guard y.isFinite else { throw .nonFinite(.y(joint)) }
            flat.setPoint(CGPoint(x: x, y: y), for: joint)
            offset += pointEntrySize
        }

        try need(offset + 1, payload)
        let confidenceCount = Int(payload[offset])
        offset += 1
        guard confidenceCount <= jointCount else { throw .tooManyJoints(count: confidenceCount) }
        try need(offset + confidenceCount * confidenceEntrySize, payload)
        seen = 0
        for _ in 0..<confidenceCount {
            let joint = try joint(at: offset, payload, joints, seen: &seen)
            let value = payload.readFloat64(at: offset + 1)
            guard value.isFinite else { throw .nonFinite(.confidence(joint)) }
            flat.setConfidence(value, for: joint)
            offset += confidenceEntrySize
        }

        guard offset == payload.count else { throw .trailingBytes(count: payload.count - offset) }
        return header
    }

    /// Decodes a pose payload straight into flat form, reusing `flat`'s storage.
    /// - Throws: ``WireError``, as ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ payload: [UInt8], into flat: inout FlatPose) throws(WireError)
        -> WireHeader
    {
        try payload.withBytes { (raw) throws(WireError) in try decode(raw, into: &flat) }
    }

    /// Decodes a pose payload.
    /// - Throws: ``WireError``, as ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ payload: [UInt8]) throws(WireError) -> (
        header: WireHeader, pose: Pose
    ) {
        try payload.withBytes { (raw) throws(WireError) in try decode(raw) }
    }

    @inline(__always)
    private static func need(_ size: Int, _ payload: UnsafeRawBufferPointer) throws(WireError) {
        guard payload.count >= size else { throw .truncated(needed: size, available: payload.count) }
    }

    @inline(__always)
    private static func joint(
        at offset: Int, _ payload: UnsafeRawBufferPointer, _ joints: [Joint], seen: inout UInt32
    ) throws(WireError) -> Joint {
        let index = payload[offset]
        guard index < jointCount else { throw .unknownJoint(index: index) }
        let joint = joints[Int(index)]
        let bit = UInt32(1) << UInt32(index)
        guard seen & bit == 0 else { throw .duplicateJoint(joint) }
        seen |= bit
        return joint
    }
}

/// ``Joint/allCases`` computed once (the synthesized `allCases` builds a new array per call).
let jointsByIndex: [Joint] = Joint.allCases
