/// A device that plays patterns: a wearable on a serial port, or a force-feedback motor.
public protocol HapticDevice: AnyObject {
    /// Plays a pattern; returns once the device has it (a serial wearable plays it on its own
    /// clock) or once it has been played (evdev, timed by the host).
    /// - Throws: ``HapticDeviceError``.
    func play(_ pattern: HapticPattern) throws(HapticDeviceError)
}
