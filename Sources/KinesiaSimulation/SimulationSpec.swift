import Foundation
public import KinesiaMotion

/// A simulated source written as text: `sim:EXERCISE[,key=value...]`.
///
/// Keys (all optional): `seed` (integer), `reps` (per moving side), `side` (`left`, `right`,
/// `both`, `alternating`, `together`; `both`, the default, alternates, or moves both legs
/// together for `squat` and `wallSit`), `fps`, `size` (`WIDTHxHEIGHT`, e.g. `720x1280` for portrait),
/// `width`, `height`, `noise` (pixels), `faults` (fraction of reps, 0...1), `dropouts`
/// (`on`/`off`), `brokenhold` (`on`/`off`), `start` (first timestamp, seconds).
///
/// ```swift
/// let spec = try SimulationSpec(parsing: "sim:squat,seed=7,reps=5,side=both,fps=60")
/// let simulator = try spec.makeSimulator()
/// ```
public struct SimulationSpec: Sendable, Hashable {
    /// The prefix that marks a simulated source.
    public static let prefix = "sim:"

    /// The keys a spec accepts, in the order of the documentation.
    public static let keys = [
        "seed", "reps", "side", "fps", "size", "width", "height", "noise", "faults", "dropouts",
        "brokenhold", "start",
    ]

    /// The exercise to simulate (from the catalog).
    public var exercise: Exercise
    /// The options the spec set (defaults for the rest).
    public var options: SimulationOptions

    /// Creates a spec from its parts.
    public init(exercise: Exercise, options: SimulationOptions = SimulationOptions()) {
        self.exercise = exercise
        self.options = options
    }

    /// Whether `source` names a simulated source (starts with `sim:`).
    public static func isSimulation(_ source: String) -> Bool {
        source.hasPrefix(prefix)
    }

    /// Parses `sim:EXERCISE[,key=value...]`.
    /// - Throws: ``SimulationSpecError`` naming what is wrong and what is valid.
    public init(parsing text: String) throws(SimulationSpecError) {
        guard text.hasPrefix(Self.prefix) else { throw .notASimulation(text) }
        let parts = text.dropFirst(Self.prefix.count).split(separator: ",", omittingEmptySubsequences: false)
        let name = parts.first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
        let valid = Exercise.catalog.map(\.id)
        guard let exercise = Exercise.named(name) else {
            throw .unknownExercise(name, valid: valid)
        }
        var options = SimulationOptions()
        var seen: Set<String> = []
        var sideWord: String?
        for part in parts.dropFirst() {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pieces.count == 2 else { throw .malformedOption(String(part)) }
            let key = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
            let value = pieces[1].trimmingCharacters(in: .whitespaces)
            guard Self.keys.contains(key) else { throw .unknownKey(key, valid: Self.keys) }
            guard seen.insert(key).inserted else { throw .duplicateKey(key) }
            func invalid(_ expected: String) -> SimulationSpecError {
                .invalidValue(key: key, value: value, expected: expected)
            }
            func number(_ range: ClosedRange<Double>, _ expected: String) throws(SimulationSpecError)
                -> Double
            {
                guard let number = Double(value), number.isFinite, range.contains(number) else {
                    throw invalid(expected)
                }
                return number
            }
            func flag() throws(SimulationSpecError) -> Bool {
                switch value.lowercased() {
                case "on", "true", "yes", "1": return true
                case "off", "false", "no", "0": return false
                default: throw invalid("on or off")
                }
            }
            switch key {
            case "seed":
                guard let seed = UInt64(value) else { throw invalid("an integer 0...\(UInt64.max)") }
                options.seed = seed
            case "reps":
                guard let reps = Int(value), (1...10_000).contains(reps) else {
                    throw invalid("an integer 1...10000")
                }
                options.reps = reps
            case "side":
                guard ["left", "right", "both", "alternating", "together"].contains(value.lowercased()) else {
                    throw invalid("left, right, both, alternating or together")
                }
                sideWord = value.lowercased()
            case "fps":
                options.frameRate = try number(5...1000, "poses a second, 5...1000")
            case "size":
                let sides = value.lowercased().split(separator: "x", omittingEmptySubsequences: false)
                guard sides.count == 2, let width = Int(sides[0]), let height = Int(sides[1]),
                    (64...100_000).contains(width), (64...100_000).contains(height)
                else { throw invalid("WIDTHxHEIGHT in pixels, e.g. 1280x720 or 720x1280") }
                options.imageSize = CGSize(width: width, height: height)
            case "width":
                options.imageSize.width = CGFloat(try number(64...100_000, "pixels, 64...100000"))
            case "height":
                options.imageSize.height = CGFloat(try number(64...100_000, "pixels, 64...100000"))
            case "noise":
                options.noise = try number(0...20, "pixels, 0...20")
            case "faults":
                options.faultRate = try number(0...1, "a fraction of the reps, 0...1")
            case "dropouts":
                options.dropouts = try flag()
            case "brokenhold":
                options.brokenHold = try flag()
            case "start":
                options.startTime = try number(-1e9...1e9, "a time in seconds")
            default:
                throw .unknownKey(key, valid: Self.keys)
            }
        }
        if seen.contains("size"), seen.contains("width") || seen.contains("height") {
            throw .conflictingKeys("size", seen.contains("width") ? "width" : "height")
        }
        switch sideWord {
        case "left": options.sides = .left
        case "right": options.sides = .right
        case "alternating": options.sides = .alternating
        case "together": options.sides = .together
        default:  // both, the default
            options.sides = exercise.id == "squat" || exercise.id == "wallSit" ? .together : .alternating
        }
        self.exercise = exercise
        self.options = options
    }

    /// The simulator the spec describes.
    /// - Throws: ``SimulationError`` (cannot happen for a spec that parsed).
    public func makeSimulator() throws(SimulationError) -> ExerciseSimulator {
        try ExerciseSimulator(exercise: exercise, options: options)
    }
}

/// Why a `sim:` source could not be read.
public enum SimulationSpecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text does not start with `sim:`.
    case notASimulation(String)
    /// The exercise is not in the catalog; `valid` lists those that are.
    case unknownExercise(String, valid: [String])
    /// An option is not `key=value`.
    case malformedOption(String)
    /// The key is not one of `valid`.
    case unknownKey(String, valid: [String])
    /// The key appears twice.
    case duplicateKey(String)
    /// Two keys say the same thing differently.
    case conflictingKeys(String, String)
    /// The value does not fit the key.
    case invalidValue(key: String, value: String, expected: String)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .notASimulation(let text):
            "'\(text)' is not a simulated source (expected sim:EXERCISE[,key=value...])"
        case .unknownExercise(let name, let valid):
            name.isEmpty
                ? "sim: needs an exercise; valid exercises: \(valid.joined(separator: ", "))"
                : "unknown exercise '\(name)'; valid exercises: \(valid.joined(separator: ", "))"
        case .malformedOption(let text):
            "'\(text)' is not key=value"
        case .unknownKey(let key, let valid):
            "unknown key '\(key)'; valid keys: \(valid.joined(separator: ", "))"
        case .duplicateKey(let key):
            "key '\(key)' is given twice"
        case .conflictingKeys(let a, let b):
            "keys '\(a)' and '\(b)' cannot be used together"
        case .invalidValue(let key, let value, let expected):
            "invalid \(key)=\(value): expected \(expected)"
        }
    }
}
