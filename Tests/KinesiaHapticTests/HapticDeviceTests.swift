import CKinesiaEvdev
import Foundation
import Glibc
import KinesiaSystem
import KinesiaTestSupport
import Testing

@testable import KinesiaHaptic

/// The serial path through a real pseudo-terminal pair: the wearable's end reads the exact lines.
struct SerialHapticDeviceTests {
    @Test func theWearableReadsTheGreetingThenEachPatternsLinesAndStopOnClose() throws {
        let terminal = try PseudoTerminal()
        var device: SerialHapticDevice? = try SerialHapticDevice(path: terminal.path)
        #expect(try terminal.read(HapticLineProtocol.hello.utf8.count) == "HELLO kinesia-haptic 1\n")
        let mapping = try HapticMapping.builtIn()
        try device?.play(try #require(mapping.pattern(for: .repRejected)))
        let expected = "PULSE 90 80\nPAUSE 110\nPULSE 90 80\n"
        #expect(try terminal.read(expected.utf8.count) == expected)
        try device?.play(try #require(mapping.pattern(for: .repCompleted)))
        #expect(try terminal.read(12) == "PULSE 80 60\n")
        device = nil
        #expect(try terminal.read(5) == "STOP\n")
    }

    @Test func theTerminalIsRawSoNewlinesArriveUntranslated() throws {
        let terminal = try PseudoTerminal()
        let device = try SerialHapticDevice(path: terminal.path)
        _ = try terminal.read(HapticLineProtocol.hello.utf8.count)
        let other = try FileDescriptor.open(terminal.path, .readWrite.notControllingTerminal)
        var settings = termios()
        #expect(tcgetattr(other.rawValue, &settings) == 0)
        #expect(settings.c_oflag & tcflag_t(OPOST) == 0)  // no "\n" -> "\r\n"
        #expect(settings.c_lflag & tcflag_t(ECHO | ICANON) == 0)
        #expect(cfgetospeed(&settings) == speed_t(B115200))
        _ = device
    }

    @Test func aFileThatIsNotATerminalOrNotThereIsRefusedClearly() throws {
        let file = NSTemporaryDirectory() + "kinesia-not-a-tty-\(getpid())"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(throws: HapticDeviceError.notATerminal(file)) { _ = try SerialHapticDevice(path: file) }
        #expect(throws: HapticDeviceError.noSuchDevice("/dev/ttyNOPE9")) {
            _ = try SerialHapticDevice(path: "/dev/ttyNOPE9")
        }
        let error = HapticDeviceError.notATerminal(file).description
        #expect(error.contains("not a serial port"))
    }
}

/// evdev: the exact structures the shim hands to the kernel (no input device on this machine).
struct ForceFeedbackTests {
    /// Records what would be sent to the kernel: each effect's `struct ff_effect` bytes and each
    /// play event's `struct input_event` bytes (written by the shim's `write` into a pipe).
    final class RecordingIO: ForceFeedbackIO {
        var effects: [[UInt8]] = []
        var erased: [Int16] = []
        let pipe: FileDescriptor.Pipe

        init() throws {
            pipe = try FileDescriptor.pipe()
        }

        func upload(_ effect: RumbleEffect) throws(HapticDeviceError) -> Int16 {
            effects.append(effect.structureBytes)
            return effect.id < 0 ? 3 : effect.id  // the kernel's slot
        }

        func play(id: Int16, count: Int32) throws(HapticDeviceError) {
            var event = kinesia_ff_play_event(UInt16(bitPattern: id), count)
            _ = kinesia_evdev_write_event(pipe.writeEnd.rawValue, &event)
        }

        func erase(id: Int16) throws(HapticDeviceError) { erased.append(id) }
    }

    func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    /// `struct ff_effect` of a rumble, laid out by hand from <linux/input.h> (x86-64, arm64):
    /// type, id, direction, trigger {button, interval}, replay {length, delay}, 2 bytes of
    /// padding, then the union (32 bytes, 8-aligned) whose rumble is {strong, weak}.
    func expectedEffect(id: Int16, magnitude: UInt16, length: UInt16) -> [UInt8] {
        var bytes = littleEndian(UInt16(0x50)) + littleEndian(id) + littleEndian(UInt16(0))
        bytes += littleEndian(UInt16(0)) + littleEndian(UInt16(0))  // trigger
        bytes += littleEndian(length) + littleEndian(UInt16(0))  // replay
        bytes += [0, 0]
        bytes += littleEndian(magnitude) + littleEndian(magnitude)
        bytes += [UInt8](repeating: 0, count: 28)
        return bytes
    }

    @Test func theStructureSizesAreTheKernels() {
        #expect(kinesia_ff_effect_size() == 48)
        #expect(kinesia_input_event_size() == 24)
    }

    @Test func aDoublePulseUploadsOneEffectUpdatesItAndPlaysItTwice() throws {
        let io = try RecordingIO()
        var waits: [Int] = []
        do {
            let driver = EvdevRumbleDriver(io: io) { waits.append($0) }
            try driver.play(try #require(HapticMapping.builtIn().pattern(for: .formFault)))
        }
        let magnitude = UInt16(80 * 0xFFFF / 100)
        #expect(
            io.effects == [
                expectedEffect(id: -1, magnitude: magnitude, length: 90),
                expectedEffect(id: 3, magnitude: magnitude, length: 90),
            ])
        #expect(waits == [90, 110, 90])
        var events = [UInt8](repeating: 0, count: 64)
        guard case .bytes(let count) = try io.pipe.readEnd.read(into: &events) else { throw Errno.wouldBlock }
        events = Array(events.prefix(count))
        // struct input_event: a zero timeval (16 bytes), EV_FF (0x15), the effect id, value 1.
        let play =
            [UInt8](repeating: 0, count: 16) + littleEndian(UInt16(0x15)) + littleEndian(UInt16(3))
            + littleEndian(Int32(1))
        #expect(events == play + play)
        #expect(io.erased == [3])  // the driver went away: the effect is erased
    }

    @Test func aFileThatIsNotAnInputDeviceIsRefusedClearly() throws {
        #expect(throws: HapticDeviceError.notAnInputDevice("/dev/null")) {
            _ = try EvdevDevice(path: "/dev/null")
        }
        #expect(throws: HapticDeviceError.noSuchDevice("/dev/input/event99")) {
            _ = try EvdevDevice(path: "/dev/input/event99")
        }
    }
}
