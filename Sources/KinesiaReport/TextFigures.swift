import Foundation

/// Figures in words for the terminal's texts (`kinesia watch`, `kinesia demo`'s summary): one
/// way to write a number, an angle, a time and a count everywhere.
///
/// ```swift
/// TextFigures.degrees1(87.44)     // "87.4°"
/// TextFigures.count(2, "rep")     // "2 reps"
/// TextFigures.number(.nan, 1)     // "-"
/// TextFigures.tally(["formFault": 1, "repCompleted": 4])   // "4 repCompleted, 1 formFault"
/// ```
public enum TextFigures {
    /// `value` with `decimals` decimals; `-` when it is not finite.
    public static func number(_ value: Double, _ decimals: Int) -> String {
        value.isFinite ? String(format: "%.\(decimals)f", value) : "-"
    }

    /// `87.4°`.
    public static func degrees1(_ value: Double) -> String { number(value, 1) + "°" }

    /// `12.4 s`.
    public static func seconds(_ value: Double) -> String { number(value, 1) + " s" }

    /// `1 rep`, `2 reps`, `3 analytics records`, `2 processes`.
    public static func count(_ value: Int, _ noun: String) -> String {
        "\(value) \(noun)" + (value == 1 ? "" : noun.hasSuffix("s") ? "es" : "s")
    }

    /// `4 repCompleted, 1 formFault`: counts by kind, the most frequent first, then by name.
    public static func tally(_ counts: [String: Int]) -> String {
        counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.value) \($0.key)" }
            .joined(separator: ", ")
    }
}

extension String {
    /// Padded with spaces on the right to `width` characters (never cut).
    public func padded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    /// Padded with spaces on the left to `width` characters (never cut).
    public func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    /// Without its trailing spaces.
    public func droppingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
