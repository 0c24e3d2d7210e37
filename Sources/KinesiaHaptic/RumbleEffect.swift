import CKinesiaEvdev
import KinesiaSystem

/// A rumble step as the kernel receives it: the bytes of a `struct ff_effect` (`FF_RUMBLE`),
/// built by the C shim, so that what a test checks is what `EVIOCSFF` gets.
public struct RumbleEffect: Hashable, Sendable {
    /// The effect slot (-1: a new one).
    public var id: Int16
    /// The strong (low-frequency) motor, 0...0xFFFF.
    public var strongMagnitude: UInt16
    /// The weak (high-frequency) motor, 0...0xFFFF.
    public var weakMagnitude: UInt16
    /// How long it plays, in milliseconds.
    public var lengthMilliseconds: UInt16

    /// An effect.
    public init(id: Int16, strongMagnitude: UInt16, weakMagnitude: UInt16, lengthMilliseconds: UInt16) {
        self.id = id
        self.strongMagnitude = strongMagnitude
        self.weakMagnitude = weakMagnitude
        self.lengthMilliseconds = lengthMilliseconds
    }

    /// The C structure.
    var structure: ff_effect {
        kinesia_ff_rumble(id, strongMagnitude, weakMagnitude, lengthMilliseconds, 0)
    }

    /// The bytes of the `struct ff_effect` given to `EVIOCSFF` (48 on x86-64 and arm64).
    public var structureBytes: [UInt8] {
        withUnsafeBytes(of: structure) { Array($0) }
    }

    /// The event that plays effect `id` once (`count` 1) or stops it (0): the bytes of a
    /// `struct input_event` with type `EV_FF` (24 on 64-bit Linux).
    public static func playEventBytes(id: Int16, count: Int32) -> [UInt8] {
        withUnsafeBytes(of: kinesia_ff_play_event(UInt16(bitPattern: id), count)) { Array($0) }
    }
}
