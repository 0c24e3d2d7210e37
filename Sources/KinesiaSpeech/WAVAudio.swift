/// 16-bit mono PCM audio and its WAV file: the 44-byte RIFF header that espeak-ng writes,
/// then the little-endian samples.
///
/// ```swift
/// let audio = WAVAudio(samples: [0, 1000, -1000], sampleRate: 22050)
/// let bytes = audio.encoded()              // "RIFF", size, "WAVE", "fmt ", ..., "data", ...
/// let back = try WAVAudio(parsing: bytes)  // the same samples and rate
/// ```
public struct WAVAudio: Hashable, Sendable {
    /// The samples.
    public var samples: [Int16]
    /// Samples per second.
    public var sampleRate: Int

    /// Audio from samples.
    public init(samples: [Int16], sampleRate: Int) {
        self.samples = samples
        self.sampleRate = sampleRate
    }

    /// The length in seconds.
    public var duration: Double { sampleRate > 0 ? Double(samples.count) / Double(sampleRate) : 0 }

    /// The WAV file: RIFF header (PCM, 1 channel, 16 bits) and the samples.
    public func encoded() -> [UInt8] {
        let dataSize = UInt32(samples.count * 2)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(44 + samples.count * 2)
        func put(_ text: String) { bytes += Array(text.utf8) }
        func put32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        func put16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        put("RIFF")
        put32(36 + dataSize)
        put("WAVE")
        put("fmt ")
        put32(16)
        put16(1)  // PCM
        put16(1)  // mono
        put32(UInt32(sampleRate))
        put32(UInt32(sampleRate * 2))  // bytes per second
        put16(2)  // bytes per frame
        put16(16)  // bits per sample
        put("data")
        put32(dataSize)
        for sample in samples { put16(UInt16(bitPattern: sample)) }
        return bytes
    }

    /// Reads a WAV file of 16-bit mono PCM with the canonical 44-byte header.
    /// - Throws: ``WAVFormatError`` saying which part of the header is wrong.
    public init(parsing bytes: [UInt8]) throws(WAVFormatError) {
        func text(_ offset: Int) -> String { String(decoding: bytes[offset..<offset + 4], as: UTF8.self) }
        func u32(_ offset: Int) -> UInt32 {
            (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
        }
        func u16(_ offset: Int) -> UInt16 { UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8 }
        guard bytes.count >= 44 else {
            throw WAVFormatError("shorter than a WAV header (\(bytes.count) bytes)")
        }
        guard text(0) == "RIFF", text(8) == "WAVE" else { throw WAVFormatError("not a RIFF WAVE file") }
        guard Int(u32(4)) == bytes.count - 8 else {
            throw WAVFormatError(
                "the RIFF size \(u32(4)) is not the file's size minus 8 (\(bytes.count - 8))")
        }
        guard text(12) == "fmt ", u32(16) == 16, u16(20) == 1 else { throw WAVFormatError("not PCM") }
        guard u16(22) == 1, u16(34) == 16 else { throw WAVFormatError("not 16-bit mono") }
        let rate = Int(u32(24))
        guard Int(u32(28)) == rate * 2, u16(32) == 2 else { throw WAVFormatError("inconsistent byte rate") }
        guard text(36) == "data", Int(u32(40)) == bytes.count - 44 else {
            throw WAVFormatError("the data size \(u32(40)) is not the rest of the file (\(bytes.count - 44))")
        }
        var samples: [Int16] = []
        samples.reserveCapacity((bytes.count - 44) / 2)
        var offset = 44
        while offset + 1 < bytes.count {
            samples.append(Int16(bitPattern: u16(offset)))
            offset += 2
        }
        self.init(samples: samples, sampleRate: rate)
    }
}

/// A file that is not a WAV file ``WAVAudio`` reads.
public struct WAVFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    init(_ description: String) { self.description = description }
}
