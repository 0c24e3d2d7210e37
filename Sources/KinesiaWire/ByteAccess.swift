// Little-endian, unaligned reads and writes. Callers check bounds first.

extension UnsafeRawBufferPointer {
    @inline(__always)
    func readUInt64(at offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    func readFloat64(at offset: Int) -> Double {
        Double(bitPattern: readUInt64(at: offset))
    }
}

extension UnsafeMutableRawBufferPointer {
    @inline(__always)
    func writeUInt64(_ value: UInt64, at offset: Int) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    }

    @inline(__always)
    func writeFloat64(_ value: Double, at offset: Int) {
        writeUInt64(value.bitPattern, at: offset)
    }
}

// The standard library's `withUnsafe...` methods rethrow untyped errors; these keep the
// closure's error type.

extension Array where Element == UInt8 {
    @inline(__always)
    func withBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        try withUnsafeBytes { raw in Result { () throws(E) in try body(raw) } }.get()
    }

    @inline(__always)
    mutating func withMutableBytes<T, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> T
    ) throws(E) -> T {
        try withUnsafeMutableBytes { raw in Result { () throws(E) in try body(raw) } }.get()
    }
}

extension String {
    @inline(__always)
    func withUTF8Bytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        var copy = self
        return try copy.withUTF8 { bytes in
            Result { () throws(E) in try body(UnsafeRawBufferPointer(bytes)) }
        }.get()
    }
}
