import KinesiaJSON
import KinesiaMotion
import KinesiaService

/// One thing a command accepts on its command line: an option with a value, a flag, or a
/// positional argument, with its help line and the code that stores it into the command.
///
/// Commands list theirs in ``ParsableCommand/arguments``; names are kebab-case, without `--`:
///
/// ```swift
/// static var arguments: [Argument<AnalyzeCommand>] {
///     [
///         .positional("file", \.file, help: "A JSON Lines recording or an OpenPose folder."),
///         .option("exercise", \.exercise, required: true, help: "The catalog exercise."),
///         .option("format", \.format, help: "Output format."),
///         .flag("frames", \.frames, help: "Print the measure at every pose."),
///     ]
/// }
/// ```
public struct Argument<Command> {
    /// What kind of argument it is.
    public enum Kind: Hashable, Sendable {
        /// `--name value` or `--name=value`; `repeated` ones may be given several times.
        case option(repeated: Bool)
        /// `--name`, without a value.
        case flag
        /// A value given by position.
        case positional
    }

    /// The kebab-case name (`exercise` for `--exercise`), or the positional's display name.
    public let name: String
    /// The placeholder of the value in help (`id` in `--exercise <id>`).
    public let valueName: String
    /// One line of help.
    public let help: String
    /// Option, flag or positional.
    public let kind: Kind
    /// Whether the command line must give it.
    public let isRequired: Bool
    /// The valid values, when they are a fixed set (shown in help and in errors).
    public let choices: [String]
    /// Renders the default from a command with every default (options stored into a
    /// non-optional property); `nil` for everything else.
    private let describeDefault: ((Command) -> String)?
    /// Whether a positional takes every remaining positional value (it must be the last one).
    public let isVariadic: Bool
    let store: (inout Command, String) throws(CLIError) -> Void

    /// The spelling on the command line: `--name` or `<name>`.
    public var displayName: String {
        kind == .positional ? "<\(valueName)>" : "--\(name)"
    }

    private init(
        name: String, valueName: String?, help: String, kind: Kind, isRequired: Bool, choices: [String],
        describeDefault: ((Command) -> String)? = nil, isVariadic: Bool = false,
        store: @escaping (inout Command, String) throws(CLIError) -> Void
    ) {
        self.name = name
        self.valueName = valueName ?? name
        self.help = help
        self.kind = kind
        self.isRequired = isRequired
        self.choices = choices
        self.describeDefault = describeDefault
        self.isVariadic = isVariadic
        self.store = store
    }

    /// The default as help shows it, read from `command` (a command with every default, e.g.
    /// `Command()`); `nil` when the argument has no default worth showing (required, optional,
    /// repeatable, flags, positionals, or an empty value).
    public func defaultDescription(in command: Command) -> String? {
        guard let text = describeDefault?(command), !text.isEmpty else { return nil }
        return text
    }

    static func convert<Value: ExpressibleByArgument>(
        _ string: String, for display: String, as type: Value.Type
    ) throws(CLIError) -> Value {
        guard let value = Value(argument: string) else {
            if Value.allValueStrings.isEmpty {
                throw CLIError.usage("invalid value \(string.quotedExcerpt()) for \(display)")
            }
            throw CLIError.usage(
                "invalid value \(string.quotedExcerpt()) for \(display); expected one of: "
                    + Value.allValueStrings.joined(separator: ", "))
        }
        return value
    }

    /// An option stored into a non-optional property; its value in the command's `init()` is
    /// the default, and help shows it (as ``ExpressibleByArgument/argumentDescription``).
    public static func option<Value: ExpressibleByArgument>(
        _ name: String, _ keyPath: WritableKeyPath<Command, Value>, valueName: String? = nil,
        help: String
    ) -> Argument {
        Argument(
            name: name, valueName: valueName, help: help, kind: .option(repeated: false), isRequired: false,
            choices: Value.allValueStrings,
            describeDefault: { command in command[keyPath: keyPath].argumentDescription }
        ) { (command: inout Command, string: String) throws(CLIError) in
            command[keyPath: keyPath] = try convert(string, for: "--\(name)", as: Value.self)
        }
    }

    /// An option stored into an optional property (`nil` when not given, unless `required`).
    public static func option<Value: ExpressibleByArgument>(
        _ name: String, _ keyPath: WritableKeyPath<Command, Value?>, valueName: String? = nil,
        required: Bool = false, help: String
    ) -> Argument {
        Argument(
            name: name, valueName: valueName, help: help, kind: .option(repeated: false),
            isRequired: required,
            choices: Value.allValueStrings
        ) { (command: inout Command, string: String) throws(CLIError) in
            command[keyPath: keyPath] = try convert(string, for: "--\(name)", as: Value.self)
        }
    }

    /// An option that may be repeated; each value is appended.
    public static func option<Value: ExpressibleByArgument>(
        _ name: String, _ keyPath: WritableKeyPath<Command, [Value]>, valueName: String? = nil,
        required: Bool = false, help: String
    ) -> Argument {
        Argument(
            name: name, valueName: valueName, help: help, kind: .option(repeated: true), isRequired: required,
            choices: Value.allValueStrings
        ) { (command: inout Command, string: String) throws(CLIError) in
            command[keyPath: keyPath].append(try convert(string, for: "--\(name)", as: Value.self))
        }
    }

    /// A flag: `true` when given.
    public static func flag(_ name: String, _ keyPath: WritableKeyPath<Command, Bool>, help: String)
        -> Argument
    {
        Argument(
            name: name, valueName: nil, help: help, kind: .flag, isRequired: false, choices: []
        ) { (command: inout Command, _: String) throws(CLIError) in
            command[keyPath: keyPath] = true
        }
    }

    /// A required positional argument.
    public static func positional<Value: ExpressibleByArgument>(
        _ name: String, _ keyPath: WritableKeyPath<Command, Value>, help: String
    ) -> Argument {
        Argument(
            name: name, valueName: name, help: help, kind: .positional, isRequired: true,
            choices: Value.allValueStrings
        ) { (command: inout Command, string: String) throws(CLIError) in
            command[keyPath: keyPath] = try convert(string, for: "<\(name)>", as: Value.self)
        }
    }

    /// An optional positional argument (`nil` when not given).
    public static func positional<Value: ExpressibleByArgument>(
        _ name: String, _ keyPath: WritableKeyPath<Command, Value?>, help: String
    ) -> Argument {
        Argument(
            name: name, valueName: name, help: help, kind: .positional, isRequired: false,
            choices: Value.allValueStrings
        ) { (command: inout Command, string: String) throws(CLIError) in
            command[keyPath: keyPath] = try convert(string, for: "<\(name)>", as: Value.self)
        }
    }

    /// Zero or more positional values, appended in order: the last positional of a command.
    public static func positional<Value: ExpressibleByArgument>(
        _ name: String, _ keyPath: WritableKeyPath<Command, [Value]>, help: String
    ) -> Argument {
        Argument(
            name: name, valueName: name, help: help, kind: .positional, isRequired: false,
            choices: Value.allValueStrings, isVariadic: true
        ) { (command: inout Command, string: String) throws(CLIError) in
            command[keyPath: keyPath].append(try convert(string, for: "<\(name)>", as: Value.self))
        }
    }
}

extension Logger.Level: ExpressibleByArgument {}
