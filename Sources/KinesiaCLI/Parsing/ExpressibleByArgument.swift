public import KinesiaMotion

/// A type that a command-line value converts into.
///
/// Types with a fixed set of values list them in ``allValueStrings``: help shows them, and a
/// usage error names them when a value is not one of them.
public protocol ExpressibleByArgument {
    /// The value for a command-line string, or `nil` when it is not valid.
    init?(argument: String)
    /// Every valid value, for help and errors; empty when the values are free-form.
    static var allValueStrings: [String] { get }
    /// The value as help shows it (for defaults), in the form ``init(argument:)`` reads back.
    var argumentDescription: String { get }
}

extension ExpressibleByArgument {
    /// Free-form by default.
    public static var allValueStrings: [String] { [] }
}

extension ExpressibleByArgument where Self: CustomStringConvertible {
    /// The value's description.
    public var argumentDescription: String { description }
}

extension ExpressibleByArgument where Self: RawRepresentable, Self.RawValue == String, Self: CaseIterable {
    /// The case with that raw value.
    public init?(argument: String) { self.init(rawValue: argument) }
    /// Every case's raw value.
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    /// The raw value.
    public var argumentDescription: String { rawValue }
}

extension String: ExpressibleByArgument {
    /// The string itself.
    public init?(argument: String) { self = argument }
}

extension Int: ExpressibleByArgument {
    /// A decimal integer.
    public init?(argument: String) { self.init(argument, radix: 10) }
}

extension Double: ExpressibleByArgument {
    /// A finite decimal number (`nan` and `inf` are refused).
    public init?(argument: String) {
        guard let value = Double(argument), value.isFinite else { return nil }
        self = value
    }
    /// The shortest form that reads back as the same value, without a trailing `.0` (`15`, `1.5`).
    public var argumentDescription: String {
        if self == rounded(), abs(self) < 1e15 { return String(Int64(self)) }
        return description
    }
}

extension BodySide: ExpressibleByArgument {}
extension OpenPoseFormat: ExpressibleByArgument {}
extension CameraPosition: ExpressibleByArgument {}

extension Exercise: ExpressibleByArgument {
    /// The catalog exercise with that identifier.
    public init?(argument: String) {
        guard let exercise = Exercise.named(argument) else { return nil }
        self = exercise
    }
    /// The catalog's identifiers.
    public static var allValueStrings: [String] { catalog.map(\.id) }
    /// The identifier.
    public var argumentDescription: String { id }
}
