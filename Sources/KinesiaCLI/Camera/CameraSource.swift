import Foundation

/// A source of frames for the pose detector: `video:PATH` (a video file) or
/// `camera:/dev/videoN` (a V4L2 device), with how to read it.
///
/// ```swift
/// let source = try CameraSource(parsing: "video:clinic.mp4")   // nil for "data/a.jsonl"
/// let arguments = source?.detectorArguments(CameraOptions(mirrored: true))
/// ```
public struct CameraSource: Hashable, Sendable {
    /// What the frames come from.
    public enum Kind: String, Hashable, Sendable {
        /// A video file: every frame analysed, timestamps from the frames' presentation times.
        case video
        /// A live device: the newest frame analysed, older ones dropped; monotonic timestamps.
        case camera
    }

    /// A file or a device.
    public var kind: Kind
    /// The file's or the device's path.
    public var path: String

    /// A source.
    public init(kind: Kind, path: String) {
        self.kind = kind
        self.path = path
    }

    /// Whether `spec` names a detector source (`video:` or `camera:`).
    public static func isCamera(_ spec: String) -> Bool {
        spec.hasPrefix("video:") || spec.hasPrefix("camera:")
    }

    /// Parses `video:PATH` or `camera:PATH`; `nil` for any other source.
    /// - Throws: ``CLIError/usage(_:)`` when the path is empty.
    public init?(parsing spec: String) throws(CLIError) {
        guard Self.isCamera(spec), let colon = spec.firstIndex(of: ":") else { return nil }
        let prefix = String(spec[..<colon])
        path = String(spec[spec.index(after: colon)...])
        kind = prefix == "video" ? .video : .camera
        guard !path.isEmpty else {
            throw CLIError.usage("\(spec): give a path, e.g. video:session.mp4 or camera:/dev/video0")
        }
    }

    /// Checks what can be checked before the detector starts: a video must be a readable file,
    /// a device must exist. The detector reports what only opening it can tell.
    /// - Throws: ``CLIError/failure(_:)`` naming the path and what to do.
    public func checkReadable() throws(CLIError) {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        switch kind {
        case .video:
            guard exists else { throw CLIError.failure("no such video file: \(path)") }
            guard !isDirectory.boolValue else {
                throw CLIError.failure(
                    "\(path) is a directory, not a video file: give the path of a video (.mp4, .mov...)")
            }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw CLIError.failure("cannot read \(path): permission denied")
            }
        case .camera:
            guard exists else {
                throw CLIError.failure("no such camera: \(path) (list the cameras with: ls /dev/video*)")
            }
        }
    }

    /// The detector's arguments for this source (after the script's path).
    public func detectorArguments(_ options: CameraOptions) -> [String] {
        var arguments = ["--source", "\(kind.rawValue):\(path)"]
        if kind == .camera {
            if let fps = options.fps { arguments += ["--fps", String(fps)] }
            if let size = options.size { arguments += ["--size", size.description] }
            if options.speed != 1 { arguments += ["--speed", String(options.speed)] }
        }
        if options.mirrored { arguments.append("--mirrored") }
        if let region = options.region { arguments += ["--roi", region.description] }
        return arguments
    }
}

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

/// `X0,Y0,X1,Y1`: a rectangle of a frame in pixels, `X1` and `Y1` excluded.
public struct FrameRegion: Hashable, Sendable, CustomStringConvertible, ExpressibleByArgument {
    /// The left edge.
    public var x0: Int
    /// The top edge.
    public var y0: Int
    /// The right edge (excluded).
    public var x1: Int
    /// The bottom edge (excluded).
    public var y1: Int

    /// A region; `nil` unless `0 <= x0 < x1` and `0 <= y0 < y1`.
    public init?(x0: Int, y0: Int, x1: Int, y1: Int) {
        guard x0 >= 0, y0 >= 0, x1 > x0, y1 > y0 else { return nil }
        (self.x0, self.y0, self.x1, self.y1) = (x0, y0, x1, y1)
    }

    /// Parses `X0,Y0,X1,Y1`.
    public init?(argument: String) {
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 4, let x0 = parts[0], let y0 = parts[1], let x1 = parts[2], let y1 = parts[3]
        else { return nil }
        self.init(x0: x0, y0: y0, x1: x1, y1: y1)
    }

    /// `X0,Y0,X1,Y1`.
    public var description: String { "\(x0),\(y0),\(x1),\(y1)" }
}

/// `WxH`: a frame size in pixels.
public struct FrameSize: Hashable, Sendable, CustomStringConvertible, ExpressibleByArgument {
    /// The width.
    public var width: Int
    /// The height.
    public var height: Int

    /// Parses `WxH` (both positive).
    public init?(argument: String) {
        let parts = argument.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0
        else { return nil }
        (self.width, self.height) = (width, height)
    }

    /// `WxH`.
    public var description: String { "\(width)x\(height)" }
}

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
