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
    /// - Throws: ``PoseSourceError/usage(_:)`` when the path is empty.
    public init?(parsing spec: String) throws(PoseSourceError) {
        guard Self.isCamera(spec), let colon = spec.firstIndex(of: ":") else { return nil }
        let prefix = String(spec[..<colon])
        path = String(spec[spec.index(after: colon)...])
        kind = prefix == "video" ? .video : .camera
        guard !path.isEmpty else {
            throw PoseSourceError.usage("\(spec): give a path, e.g. video:session.mp4 or camera:/dev/video0")
        }
    }

    /// Checks what can be checked before the detector starts: a video must be a readable file,
    /// a device must exist. The detector reports what only opening it can tell.
    /// - Throws: ``PoseSourceError/failure(_:)`` naming the path and what to do.
    public func checkReadable() throws(PoseSourceError) {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        switch kind {
        case .video:
            guard exists else { throw PoseSourceError.failure("no such video file: \(path)") }
            guard !isDirectory.boolValue else {
                throw PoseSourceError.failure(
                    "\(path) is a directory, not a video file: give the path of a video (.mp4, .mov...)")
            }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw PoseSourceError.failure("cannot read \(path): permission denied")
            }
        case .camera:
            guard exists else {
                throw PoseSourceError.failure(
                    "no such camera: \(path) (list the cameras with: ls /dev/video*)")
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
