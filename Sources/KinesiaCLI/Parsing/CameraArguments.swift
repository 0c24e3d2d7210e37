public import KinesiaIngest

/// The command-line options of ``CameraOptions``, shared by `kinesia ingest` and `kinesia analyze`.
enum CameraArguments {
    /// `--mirrored` and `--roi`, and `--size` when the command reads devices (`--fps` is the
    /// command's own).
    static func arguments<Command>(_ keyPath: WritableKeyPath<Command, CameraOptions>, forDevices: Bool)
        -> [Argument<Command>]
    {
        var result: [Argument<Command>] = [
            .flag(
                "mirrored", keyPath.appending(path: \.mirrored),
                help:
                    "video: or camera: source: a mirror view (front camera); left and right are swapped back."
            ),
            .option(
                "roi", keyPath.appending(path: \.region), valueName: "x0,y0,x1,y1",
                help: "video: or camera: source: analyse this region only (points stay in full-frame pixels)."
            ),
        ]
        if forDevices {
            result.append(
                .option(
                    "size", keyPath.appending(path: \.size), valueName: "WxH",
                    help: "camera: source: the frame size asked of the device, e.g. 1280x720."))
        }
        return result
    }
}

extension FrameRegion: ExpressibleByArgument {
    /// Parses `X0,Y0,X1,Y1` (``FrameRegion/init(parsing:)``).
    public init?(argument: String) { self.init(parsing: argument) }
}

extension FrameSize: ExpressibleByArgument {
    /// Parses `WxH` (``FrameSize/init(parsing:)``).
    public init?(argument: String) { self.init(parsing: argument) }
}
