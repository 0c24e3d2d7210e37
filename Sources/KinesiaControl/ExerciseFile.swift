import Foundation
import KinesiaJSON
public import KinesiaMotion

/// An exercise file: a catalog exercise with the thresholds a therapist changed, for
/// `kinesia analyze --exercise-file F` and worker sessions (`NAME=@F:SIDE`).
///
/// ```json
/// {
///   "exercise": "squat",
///   "reps": {"start": 40, "end": 25, "minPeak": 80},
///   "formRules": {"keepTrunkUpright": 35},
///   "sessionRules": {"minimumRepDuration": 0.8}
/// }
/// ```
///
/// Only `exercise` is required; every other key changes a default of the catalog
/// (CATALOG.md). Read strictly: unknown keys, a rule the exercise does not have, a `reps` block
/// for a hold (or `hold` for reps), a number out of range or thresholds out of order
/// (`end < start <= minPeak`) are refused with `FILE:LINE:COLUMN: field: message`.
///
/// Ranges: angles (`start`, `end`, `minPeak`, `threshold`, form rule limits) 0...180 degrees;
/// `hold.seconds` over 0, at most 3600; `sessionRules`: `minimumRepDuration` over 0 and below
/// `maximumRepDuration` (at most 600 s), `faultPersistence` and `holdBreakTime` 0...10 s,
/// `holdBreakMargin` 0...90 degrees.
/// `kinesia analyze`, the worker's `--session` flags and the control plane's `session start
/// --exercise @FILE` all read it here.
public enum ExerciseFile {
    /// Reads the exercise file at `path`.
    ///
    /// - Throws: ``ExerciseFileError`` with `PATH:LINE:COLUMN: ...` for a file that is not
    ///   valid, or that cannot be read.
    public static func load(_ path: String) throws(ExerciseFileError) -> Exercise {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ExerciseFileError("\(path): cannot read the exercise file")
        }
        return try parse(Array(data), file: path)
    }

    /// Reads an exercise file's bytes (`file` names it in errors).
    ///
    /// - Throws: ``ExerciseFileError`` with `FILE:LINE:COLUMN: ...`.
    public static func parse(_ bytes: [UInt8], file: String) throws(ExerciseFileError) -> Exercise {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes: bytes)
        } catch {
            throw ExerciseFileError("\(file):\(error.line):\(error.column): not valid JSON: \(error.message)")
        }
        do {
            return try exercise(from: value)
        } catch {
            let position = JSONParser.location(of: error.path, in: bytes)
            let field = JSONPathComponent.describe(error.path)
            throw ExerciseFileError(
                "\(file):\(position?.line ?? 1):\(position?.column ?? 1): "
                    + (field.isEmpty ? "" : "\(field): ") + error.message)
        }
    }

    private static func exercise(from value: JSONValue) throws(JSONShapeError) -> Exercise {
        let fields = try JSONFields(value, what: "an exercise file")
        try fields.rejectUnknownKeys(allowed: ["exercise", "reps", "hold", "formRules", "sessionRules"])
        let id = try fields.string("exercise")
        guard var exercise = Exercise.named(id) else {
            throw fields.error(
                "exercise",
                "unknown exercise \(id.quotedExcerpt()); valid: "
                    + Exercise.catalog.map(\.id).joined(separator: ", "))
        }
        switch exercise.kind {
        case .reps(var start, var end, var minPeak):
            if fields.has("hold") { throw fields.error("hold", "\(id) counts reps: give reps, not hold") }
            if let reps = try fields.optionalObject("reps") {
                try reps.rejectUnknownKeys(allowed: ["start", "end", "minPeak"])
                start = try angle(reps, "start") ?? start
                end = try angle(reps, "end") ?? end
                minPeak = try angle(reps, "minPeak") ?? minPeak
                guard end < start else {
                    throw reps.error("end", "must be below start (\(start)), got \(end)")
                }
                guard start <= minPeak else {
                    throw reps.error("minPeak", "must be at least start (\(start)), got \(minPeak)")
                }
                exercise.kind = .reps(start: start, end: end, minPeak: minPeak)
            }
        case .hold(var threshold, var seconds):
            if fields.has("reps") { throw fields.error("reps", "\(id) is a hold: give hold, not reps") }
            if let hold = try fields.optionalObject("hold") {
                try hold.rejectUnknownKeys(allowed: ["threshold", "seconds"])
                threshold = try angle(hold, "threshold") ?? threshold
                seconds = try number(hold, "seconds", in: 0...3600, excludingZero: true) ?? seconds
                exercise.kind = .hold(threshold: threshold, seconds: seconds)
            }
        }
        if let rules = try fields.optionalObject("formRules") {
            let names = exercise.formRules.map(\.fault.rawValue)
            try rules.rejectUnknownKeys(allowed: Set(names))
            for index in exercise.formRules.indices {
                if let limit = try angle(rules, exercise.formRules[index].fault.rawValue) {
                    exercise.formRules[index].limit = limit
                }
            }
        }
        if let session = try fields.optionalObject("sessionRules") {
            try session.rejectUnknownKeys(allowed: [
                "minimumRepDuration", "maximumRepDuration", "faultPersistence", "holdBreakMargin",
                "holdBreakTime",
            ])
            var rules = exercise.sessionRules
            rules.maximumRepDuration =
                try number(session, "maximumRepDuration", in: 0...600, excludingZero: true)
                ?? rules.maximumRepDuration
            rules.minimumRepDuration =
                try number(session, "minimumRepDuration", in: 0...600, excludingZero: true)
                ?? rules.minimumRepDuration
            guard rules.minimumRepDuration < rules.maximumRepDuration else {
                throw session.error(
                    "minimumRepDuration", "must be below maximumRepDuration (\(rules.maximumRepDuration))")
            }
            rules.faultPersistence =
                try number(session, "faultPersistence", in: 0...10) ?? rules.faultPersistence
            rules.holdBreakMargin =
                try number(session, "holdBreakMargin", in: 0...90) ?? rules.holdBreakMargin
            rules.holdBreakTime = try number(session, "holdBreakTime", in: 0...10) ?? rules.holdBreakTime
            exercise.sessionRules = rules
        }
        return exercise
    }

    private static func angle(_ fields: JSONFields, _ key: String) throws(JSONShapeError) -> Double? {
        try number(fields, key, in: 0...180)
    }

    private static func number(
        _ fields: JSONFields, _ key: String, in range: ClosedRange<Double>, excludingZero: Bool = false
    ) throws(JSONShapeError) -> Double? {
        guard fields.has(key) else { return nil }
        let value = try fields.number(key)
        guard range.contains(value), !(excludingZero && value == 0) else {
            throw fields.error(
                key,
                "\(value) is out of range (\(excludingZero ? "over" : "from") \(range.lowerBound) to \(range.upperBound))"
            )
        }
        return value
    }
}
