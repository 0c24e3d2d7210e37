import Foundation
import KinesiaJSON

/// One pose as one line of JSON: the format of the recordings and of `kinesia ingest --source -`.
///
/// ```json
/// {"t":0.5,"w":1080,"h":1920,"points":{"leftKnee":[457.99,920.55]},"confidence":{"leftKnee":0.64}}
/// ```
///
/// - `t`: the timestamp in seconds (required).
/// - `w`, `h`: the image size in pixels (optional, both or neither, positive).
/// - `points`: joint name -> `[x, y]` in pixels, y down (required; may be empty: nobody in view).
///   Joint names are ``Joint`` raw values.
/// - `confidence`: joint name -> 0...1 (optional; may be empty).
///
/// Decoding is strict: unknown keys or joint names, wrong types, non-finite or out-of-range
/// numbers are ``RecordingError``s of kind ``RecordingError/Kind/invalidPose`` (or
/// ``RecordingError/Kind/invalidJSON`` for broken JSON). ``encode(_:)`` writes the keys in the
/// order above and the joints in ``Joint`` order, so equal poses give equal lines.
///
/// ```swift
/// let pose = try PoseJSONLine.decode(line)
/// print(PoseJSONLine.encode(pose))
/// ```
public enum PoseJSONLine {
    private static let allowedKeys: Set<String> = ["t", "w", "h", "points", "confidence"]
    private static let jointsByName: [String: Joint] = Dictionary(
        uniqueKeysWithValues: Joint.allCases.map { ($0.rawValue, $0) })

    /// Decodes one line (surrounding whitespace allowed).
    /// - Parameter line: The JSON text of one pose.
    /// - Returns: The pose.
    /// - Throws: ``RecordingError`` with kind ``RecordingError/Kind/invalidJSON`` or
    ///   ``RecordingError/Kind/invalidPose`` and the column of the problem; it names no file or
    ///   line (callers that read files add them).
    public static func decode(_ line: some StringProtocol) throws(RecordingError) -> Pose {
        try decode(bytes: Array(line.utf8))
    }

    /// Decodes one line's UTF-8 bytes, as ``decode(_:)``.
    static func decode(bytes: [UInt8]) throws(RecordingError) -> Pose {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes: bytes)
        } catch {
            throw RecordingError(error, wholeFile: false)
        }
        do {
            return try pose(from: value)
        } catch {
            throw RecordingError(error, in: bytes, wholeFile: false)
        }
    }

    static func pose(from value: JSONValue) throws(JSONShapeError) -> Pose {
        let fields = try JSONFields(value, what: "a pose")
        try fields.rejectUnknownKeys(allowed: allowedKeys)
        let timestamp = try fields.number("t")
        var imageSize: CGSize?
        switch (fields.has("w"), fields.has("h")) {
        case (false, false): break
        case (true, true):
            let width = try fields.number("w"), height = try fields.number("h")
            guard width > 0, height > 0 else {
                throw fields.error("w", "\"w\" and \"h\" must be positive, found \(width) x \(height)")
            }
            imageSize = CGSize(width: width, height: height)
        default:
            throw fields.error(fields.has("w") ? "w" : "h", "\"w\" and \"h\" must be given together")
        }

        let pointsObject = try fields.object("points")
        var points: [Joint: CGPoint] = [:]
        for (name, element) in pointsObject.members {
            let joint = try joint(named: name, in: pointsObject)
            guard case .array(let pair) = element, pair.count == 2,
                case .number(let x) = pair[0], case .number(let y) = pair[1]
            else {
                throw pointsObject.error(
                    name, "point \(name.quotedExcerpt()) must be [x, y] with two numbers")
            }
            points[joint] = CGPoint(x: x, y: y)
        }

        var confidence: [Joint: Double] = [:]
        if let object = try fields.optionalObject("confidence") {
            for (name, element) in object.members {
                let joint = try joint(named: name, in: object)
                guard case .number(let value) = element else {
                    throw object.error(
                        name,
                        "confidence of \(name.quotedExcerpt()) must be a number, found \(element.typeDescription)"
                    )
                }
                guard (0...1).contains(value) else {
                    throw object.error(
                        name, "confidence of \(name.quotedExcerpt()) must be within 0...1, found \(value)")
                }
                confidence[joint] = value
            }
        }
        return Pose(points: points, timestamp: timestamp, imageSize: imageSize, confidence: confidence)
    }

    private static func joint(named name: String, in object: JSONFields) throws(JSONShapeError) -> Joint {
        guard let joint = jointsByName[name] else {
            let key = JSONPathComponent.describe(object.path)
            throw object.error(name, "unknown joint \(name.quotedExcerpt()) in \(key.quotedExcerpt())")
        }
        return joint
    }

    /// Encodes `pose` as one line of JSON, without a trailing newline.
    ///
    /// Keys come in the order `t`, `w`, `h`, `points`, `confidence`; joints in ``Joint`` order;
    /// numbers in their shortest round-trip form, so ``decode(_:)`` gives back the same pose.
    /// Points or confidences that are not finite (which the pose contract forbids) are left out,
    /// as is an image size that is not finite and positive.
    public static func encode(_ pose: Pose) -> String {
        var out = "{\"t\":"
        out += JSONWriter.number(pose.timestamp.isFinite ? pose.timestamp : 0)
        if let size = pose.imageSize, size.width.isFinite, size.height.isFinite, size.width > 0,
            size.height > 0
        {
            out += ",\"w\":" + JSONWriter.compactNumber(Double(size.width))
            out += ",\"h\":" + JSONWriter.compactNumber(Double(size.height))
        }
        out += ",\"points\":{"
        var first = true
        for joint in Joint.allCases {
            guard let point = pose.points[joint], point.x.isFinite, point.y.isFinite else { continue }
            if !first { out += "," }
            first = false
            out += "\"" + joint.rawValue + "\":["
            out += JSONWriter.number(Double(point.x)) + "," + JSONWriter.number(Double(point.y)) + "]"
        }
        out += "},\"confidence\":{"
        first = true
        for joint in Joint.allCases {
            guard let value = pose.confidence[joint], (0...1).contains(value) else { continue }
            if !first { out += "," }
            first = false
            out += "\"" + joint.rawValue + "\":" + JSONWriter.number(value)
        }
        out += "}}"
        return out
    }
}
