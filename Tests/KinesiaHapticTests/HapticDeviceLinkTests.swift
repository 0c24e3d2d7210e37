import Glibc
import KinesiaSystem
import Testing

@testable import KinesiaHaptic

/// The device's presence as `kinesia haptic` sees it, with no I/O: when it tries to open the
/// device, what it tells the operator (once per problem), and what a write failure does.
struct HapticDeviceLinkTests {
    static let path = "/dev/ttyACM0"
    static let missing = HapticDeviceError.noSuchDevice(path)
    static let unplugged = HapticDeviceError.system(path, operation: "write", Errno(rawValue: EIO))

    /// The times at which `tick` asks to open, over `until` seconds in steps of 0.1 s, when
    /// every attempt fails with `error`; and the reports.
    static func attempts(failing error: HapticDeviceError, until end: Double) -> ([Double], [String]) {
        var link = HapticDeviceLink()
        var times: [Double] = []
        var reports: [String] = []
        for step in 0...Int(end * 10) {
            let now = Double(step) / 10
            guard link.tick(at: now) == [.open] else { continue }
            times.append(now)
            for case .report(let text) in link.openFailed(error, at: now) { reports.append(text) }
        }
        return (times, reports)
    }

    @Test func aMissingDeviceIsTriedAgainWithABackOffUpToFiveSecondsAndToldOnce() {
        let (times, reports) = Self.attempts(failing: Self.missing, until: 20)
        // At once, then after 0.5, 1, 2, 4 and 5 s (the cap), then every 5 s.
        #expect(times == [0, 0.5, 1.5, 3.5, 7.5, 12.5, 17.5])
        #expect(
            reports == ["no device at /dev/ttyACM0; waiting for the device (trying again every 5 s at most)"])
    }

    @Test func aMissingDeviceIsMissingAndNotAnErrorAnUnusableOneIsAnErrorButNotMissing() {
        var link = HapticDeviceLink()
        #expect(!link.isMissing && !link.isReady)
        _ = link.tick(at: 0)
        _ = link.openFailed(Self.missing, at: 0)
        #expect(link.isMissing && link.errors == 0)
        _ = link.tick(at: 1)
        let denied = HapticDeviceError.permissionDenied(Self.path, group: "dialout")
        // A new problem is told, even while still waiting.
        #expect(link.openFailed(denied, at: 1).count == 1)
        #expect(!link.isMissing && !link.isReady && link.errors == 1)
    }

    @Test func theDeviceThatAppearsIsOpenedAndToldReady() {
        var link = HapticDeviceLink()
        _ = link.tick(at: 0)
        _ = link.openFailed(Self.missing, at: 0)
        #expect(link.tick(at: 0.5) == [.open])
        // While an attempt is under way, no second one.
        #expect(link.tick(at: 0.6) == [])
        #expect(link.opened(at: 0.6) == [.report("the device is ready (it was missing)")])
        #expect(link.isReady && !link.isMissing && link.opens == 1)
        #expect(link.tick(at: 100) == [])
    }

    @Test func aDeviceThereAtTheStartIsOpenedWithoutAWord() {
        var link = HapticDeviceLink()
        #expect(link.tick(at: 0) == [.open])
        #expect(link.opened(at: 0) == [])
        #expect(link.isReady)
    }

    @Test(arguments: [EIO, ENXIO, ENODEV])
    func anUnpluggedDeviceIsClosedAndWaitedForAgain(_ code: Int32) {
        var link = HapticDeviceLink()
        _ = link.tick(at: 0)
        _ = link.opened(at: 0)
        let error = HapticDeviceError.system(Self.path, operation: "write", Errno(rawValue: code))
        let actions = link.writeFailed(error, at: 10)
        #expect(actions.first == .close)
        #expect(actions.count == 2)
        #expect(!link.isReady && link.isMissing && link.errors == 1)
        #expect(link.tick(at: 10.2) == [])
        #expect(link.tick(at: 10.5) == [.open])
        _ = link.openFailed(Self.missing, at: 10.5)
        // Back-off again from the start: 1 s, then 2 s.
        #expect(link.tick(at: 11.4) == [])
        #expect(link.tick(at: 11.5) == [.open])
        _ = link.opened(at: 11.5)
        #expect(link.isReady && link.opens == 2)
    }

    @Test func anotherWriteErrorIsCountedButKeepsTheDevice() {
        var link = HapticDeviceLink()
        _ = link.tick(at: 0)
        _ = link.opened(at: 0)
        let error = HapticDeviceError.system(Self.path, operation: "write", Errno(rawValue: EINVAL))
        let actions = link.writeFailed(error, at: 3)
        #expect(!actions.contains(.close))
        #expect(link.isReady && link.errors == 1)
    }
}
