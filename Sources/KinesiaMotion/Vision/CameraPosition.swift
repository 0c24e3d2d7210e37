/// Which camera of the device a live provider uses.
public enum CameraPosition: String, CaseIterable, Sendable, Hashable, Codable {
    /// The selfie camera, on the screen's side. Its poses need left and right swapped.
    case front
    /// The main camera, on the back of the device.
    case back
}
