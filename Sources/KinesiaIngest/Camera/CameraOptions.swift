/// How the detector reads and converts frames: the `--mirrored`, `--roi`, `--size` and `--fps`
/// options of `kinesia ingest` and `kinesia analyze`.
public struct CameraOptions: Hashable, Sendable {
    /// The image is a mirror view (a front camera, a selfie video): left and right are swapped
    /// back so that sides stay anatomical.
    public var mirrored = false
    /// The part of the frame analysed, points still in full-frame pixels; `nil`: all of it.
    public var region: FrameRegion?
    /// The frame size asked of a device.
    public var size: FrameSize?
    /// The frame rate asked of a device.
    public var fps: Double?
    /// A video file played as a camera (`camera:clip.mp4`): this many times its frame rate.
    public var speed = 1.0

    /// Options with every default.
    public init(
        mirrored: Bool = false, region: FrameRegion? = nil, size: FrameSize? = nil, fps: Double? = nil
    ) {
        self.mirrored = mirrored
        self.region = region
        self.size = size
        self.fps = fps
    }
}
