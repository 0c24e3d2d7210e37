/// Why a simulator could not be made.
public enum SimulationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The exercise's identifier is not one the simulator knows.
    case unsupportedExercise(String, valid: [String])
    /// An option is out of range.
    case invalidOption(name: String, value: String, expected: String)
    /// The exercise asks for a peak (or hold level) beyond what a body can reach.
    case unreachablePeak(exercise: String, minPeak: Double, maximum: Double)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .unsupportedExercise(let id, let valid):
            "no simulation of exercise '\(id)'; valid exercises: \(valid.joined(separator: ", "))"
        case .invalidOption(let name, let value, let expected):
            "invalid simulation option \(name)=\(value): expected \(expected)"
        case .unreachablePeak(let exercise, let minPeak, let maximum):
            "cannot simulate \(exercise): it asks for \(minPeak) degrees, a body reaches about \(maximum)"
        }
    }
}
