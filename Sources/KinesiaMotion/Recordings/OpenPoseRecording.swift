public import Foundation
import KinesiaJSON

/// A folder of OpenPose per-frame JSON files (`*_keypoints.json`, as written by
/// `--write_json`), read as poses.
///
/// Each file is one frame: `{"people": [{"pose_keypoints_2d": [x0, y0, c0, x1, y1, c1, ...]}]}`.
/// The reader:
/// - takes frames in file-name order (numbers compared by value, so `frame_2` comes before
///   `frame_10`) and gives frame *i* the timestamp `i / fps`;
/// - detects the keypoint order from the count (25: ``OpenPoseFormat/body25``, 18:
///   ``OpenPoseFormat/coco``) unless ``Options/format`` says otherwise (BODY_25B has 25 too);
/// - keeps the largest person (by the area of the bounding box of their kept points) when several
///   are detected, and gives an empty pose when nobody is;
/// - drops keypoints under ``Options/minimumConfidence`` and keypoints at (0, 0) (OpenPose's
///   "not detected");
/// - derives ``Joint/neck`` and ``Joint/root`` as the midpoints of the shoulders and of the hips
///   when the format lacks them and both points are kept (their confidence is the lower of the two).
///
/// ```swift
/// var options = OpenPoseRecording.Options()
/// options.format = .body25B
/// options.fps = 60
/// let recording = try OpenPoseRecording(folder: url, options: options)
/// ```
public struct OpenPoseRecording: PoseProvider {
    /// How to read an OpenPose folder.
    public struct Options: Sendable, Hashable {
        /// The keypoint order; `nil` detects it from the keypoint count.
        public var format: OpenPoseFormat?
        /// Frames per second of the video, for the timestamps. Must be positive and finite.
        public var fps: Double
        /// Keypoints with a lower confidence are dropped (the recordings use 0.3).
        public var minimumConfidence: Double
        /// The image size to put in every pose, when known (OpenPose's JSON does not say it).
        public var imageSize: CGSize?

        /// Creates options; the defaults detect the format, assume 30 fps and cut at 0.3.
        public init(
            format: OpenPoseFormat? = nil, fps: Double = 30, minimumConfidence: Double = 0.3,
            imageSize: CGSize? = nil
        ) {
            self.format = format
            self.fps = fps
            self.minimumConfidence = minimumConfidence
            self.imageSize = imageSize
        }
    }

    /// Every pose of the folder, one per frame file, in frame order.
    public let recordedPoses: [Pose]

    /// Reads a folder.
    /// - Throws: ``RecordingError`` naming the folder or the frame file that is wrong.
    public init(folder: URL, options: Options = Options()) throws(RecordingError) {
        recordedPoses = try Self.load(folder: folder, options: options)
    }

    /// The poses, as fast as the consumer takes them (no pacing).
    public func poses() -> AsyncStream<Pose> {
        AsyncStream(Pose.self, bufferingPolicy: .unbounded) { continuation in
            for pose in recordedPoses { continuation.yield(pose) }
            continuation.finish()
        }
    }

    /// The frame files of a folder (`*_keypoints.json`), in frame order.
    /// - Throws: ``RecordingError`` when the folder is missing, unreadable or holds no frame.
    public static func frameFiles(in folder: URL) throws(RecordingError) -> [URL] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) else {
            throw RecordingError(.fileNotFound, file: folder.path, detail: "no such folder")
        }
        guard isDirectory.boolValue else {
            throw RecordingError(
                .unreadable, file: folder.path, detail: "is a file, expected a folder of *_keypoints.json")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw RecordingError(
                .unreadable, file: folder.path, detail: "cannot list: \(error.localizedDescription)")
        }
        let frames = names.filter { $0.hasSuffix("_keypoints.json") }.sorted(by: naturalOrder)
        guard !frames.isEmpty else {
            throw RecordingError(.noFrames, file: folder.path, detail: "no *_keypoints.json file")
        }
        return frames.map { folder.appendingPathComponent($0) }
    }

    /// Reads every frame of a folder.
    /// - Throws: ``RecordingError`` naming the folder or the frame file that is wrong.
    public static func load(folder: URL, options: Options = Options()) throws(RecordingError) -> [Pose] {
        guard options.fps.isFinite, options.fps > 0 else {
            throw RecordingError(
                .invalidPose, file: folder.path, detail: "fps must be positive, got \(options.fps)")
        }
        var options = options
        var poses: [Pose] = []
        for (index, file) in try frameFiles(in: folder).enumerated() {
            let data = try RecordingFiles.read(file)
            let frame: Frame
            do {
                frame = try decodeFrame(data, format: options.format)
            } catch {
                throw error.located(file: file.path)
            }
            // Every frame of a folder comes from one model: the first frame with people fixes it.
            if options.format == nil { options.format = frame.format }
            poses.append(pose(from: frame, timestamp: Double(index) / options.fps, options: options))
        }
        return poses
    }

    /// Decodes one frame file into a pose.
    /// - Parameters:
    ///   - data: The JSON of one `*_keypoints.json` file.
    ///   - timestamp: The frame's time in seconds.
    ///   - options: Format, confidence cut and image size (``Options/fps`` is not used).
    /// - Throws: ``RecordingError`` (without a file name) when the JSON is not an OpenPose frame.
    public static func decodeFrame(
        _ data: Data, timestamp: TimeInterval, options: Options = Options()
    ) throws(RecordingError) -> Pose {
        pose(from: try decodeFrame(data, format: options.format), timestamp: timestamp, options: options)
    }

    // MARK: - Decoding

    /// One person: keypoints as (x, y, confidence).
    typealias Person = [(x: Double, y: Double, confidence: Double)]

    struct Frame {
        var people: [Person]
        /// The format used (`nil` when nobody was detected and none was given).
        var format: OpenPoseFormat?
    }

    static func decodeFrame(_ data: Data, format: OpenPoseFormat?) throws(RecordingError) -> Frame {
        let bytes = Array(data)
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes: bytes)
        } catch {
            throw RecordingError(error, wholeFile: true)
        }
        do {
            return try frame(from: value, format: format)
        } catch {
            throw RecordingError(error, in: bytes, wholeFile: true)
        }
    }

    private static func frame(from value: JSONValue, format: OpenPoseFormat?) throws(JSONShapeError) -> Frame
    {
        let fields = try JSONFields(value, what: "an OpenPose frame")
        var format = format
        var people: [Person] = []
        for (number, element) in try fields.array("people").enumerated() {
            let person = try JSONFields(
                element, what: "person \(number)", path: fields.path("people") + [.index(number)])
            let values = try person.array("pose_keypoints_2d")
            if values.isEmpty { continue }
            guard values.count.isMultiple(of: 3) else {
                throw person.error(
                    "pose_keypoints_2d",
                    "person \(number): \"pose_keypoints_2d\" has \(values.count) numbers, not a multiple of 3"
                )
            }
            let count = values.count / 3
            if format == nil {
                guard let detected = OpenPoseFormat(keypointCount: count) else {
                    throw person.error(
                        "pose_keypoints_2d",
                        "person \(number): \(count) keypoints, expected 25 (BODY_25, BODY_25B) or 18 (COCO)")
                }
                format = detected
            }
            guard let format, count == format.keypointCount else {
                throw person.error(
                    "pose_keypoints_2d",
                    "person \(number): \(count) keypoints, but \(format?.rawValue ?? "?") has \(format?.keypointCount ?? 0)"
                )
            }
            var keypoints: Person = []
            keypoints.reserveCapacity(count)
            for index in 0..<count {
                guard case .number(let x) = values[3 * index], case .number(let y) = values[3 * index + 1],
                    case .number(let confidence) = values[3 * index + 2]
                else {
                    throw JSONShapeError(
                        "person \(number): keypoint \(index) is not three numbers",
                        path: person.path("pose_keypoints_2d") + [.index(3 * index)])
                }
                keypoints.append((x, y, confidence))
            }
            people.append(keypoints)
        }
        return Frame(people: people, format: format)
    }

    static func pose(from frame: Frame, timestamp: TimeInterval, options: Options) -> Pose {
        guard let format = frame.format else {
            return Pose(timestamp: timestamp, imageSize: options.imageSize)
        }
        var best: (points: [Joint: CGPoint], confidence: [Joint: Double], area: Double)?
        for person in frame.people {
            var points: [Joint: CGPoint] = [:]
            var confidence: [Joint: Double] = [:]
            for (index, joint) in format.joints.enumerated() {
                guard let joint else { continue }
                let keypoint = person[index]
                guard keypoint.confidence >= options.minimumConfidence,
                    keypoint.x != 0 || keypoint.y != 0
                else { continue }
                points[joint] = CGPoint(x: keypoint.x, y: keypoint.y)
                confidence[joint] = min(max(keypoint.confidence, 0), 1)
            }
            if !format.hasNeck {
                derive(.neck, from: .leftShoulder, .rightShoulder, points: &points, confidence: &confidence)
            }
            if !format.hasRoot {
                derive(.root, from: .leftHip, .rightHip, points: &points, confidence: &confidence)
            }
            let area = boundingBoxArea(points.values)
            if best == nil || area > best!.area {
                best = (points, confidence, area)
            }
        }
        return Pose(
            points: best?.points ?? [:], timestamp: timestamp, imageSize: options.imageSize,
            confidence: best?.confidence ?? [:])
    }

    private static func derive(
        _ joint: Joint, from a: Joint, _ b: Joint, points: inout [Joint: CGPoint],
        confidence: inout [Joint: Double]
    ) {
        guard let first = points[a], let second = points[b] else { return }
        points[joint] = CGPoint(x: (first.x + second.x) / 2, y: (first.y + second.y) / 2)
        if let ca = confidence[a], let cb = confidence[b] { confidence[joint] = min(ca, cb) }
    }

    private static func boundingBoxArea(_ points: some Collection<CGPoint>) -> Double {
        guard let first = points.first else { return -1 }
        var minX = first.x, maxX = first.x, minY = first.y, maxY = first.y
        for point in points {
            minX = min(minX, point.x)
            maxX = max(maxX, point.x)
            minY = min(minY, point.y)
            maxY = max(maxY, point.y)
        }
        return Double((maxX - minX) * (maxY - minY))
    }

    /// File-name order with digit runs compared as numbers (`f_2` < `f_10`).
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
        var left = Array(a.unicodeScalars)[...], right = Array(b.unicodeScalars)[...]
        func isDigit(_ s: Unicode.Scalar) -> Bool { s.value >= 48 && s.value <= 57 }
        while let l = left.first, let r = right.first {
            if isDigit(l) && isDigit(r) {
                let ld = left.prefix(while: isDigit), rd = right.prefix(while: isDigit)
                let lt = ld.drop { $0 == "0" }, rt = rd.drop { $0 == "0" }
                if lt.count != rt.count { return lt.count < rt.count }
                if !lt.elementsEqual(rt) { return lt.lexicographicallyPrecedes(rt) { $0.value < $1.value } }
                if ld.count != rd.count { return ld.count < rd.count }
                left = left.dropFirst(ld.count)
                right = right.dropFirst(rd.count)
            } else {
                if l != r { return l.value < r.value }
                left = left.dropFirst()
                right = right.dropFirst()
            }
        }
        return left.count < right.count
    }
}
