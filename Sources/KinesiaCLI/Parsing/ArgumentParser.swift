import KinesiaJSON
import KinesiaMotion

/// The command-line grammar shared by every `kinesia` command.
///
/// - `--name value` and `--name=value` for options; `--flag` for flags (a flag takes no value);
/// - positionals in order, anywhere between options; after `--` everything is positional;
/// - a repeated option appends; a single-valued option given twice keeps the last value;
/// - `-h` or `--help` anywhere (before `--`) asks for help;
/// - a lone `-` is a value (standard input), not an option.
enum ArgumentParser {
    static func parse<Command: ParsableCommand>(_ arguments: [String], as type: Command.Type) throws(CLIError)
        -> Command
    {
        // Help wins over anything wrong on the same command line.
        for argument in arguments.prefix(while: { $0 != "--" }) where argument == "-h" || argument == "--help"
        {
            throw CLIError.help(Command.helpText)
        }
        let specs = Command.arguments
        var command = Command()
        var given = Set<String>()
        let positionals = specs.filter { $0.kind == .positional }
        var positionalIndex = 0
        var onlyPositionals = false
        var index = 0

        func storePositional(_ value: String) throws(CLIError) {
            guard positionalIndex < positionals.count else {
                throw CLIError.usage("unexpected argument \(value.quotedExcerpt())")
            }
            let spec = positionals[positionalIndex]
            try spec.store(&command, value)
            given.insert(spec.name)
            if !spec.isVariadic { positionalIndex += 1 }
        }

        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                try storePositional(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            guard argument.hasPrefix("--") else {
                // A negative number where a positional is expected ("-5") is a value.
                if Double(argument) != nil {
                    try storePositional(argument)
                    continue
                }
                throw CLIError.usage(
                    "unknown option \(argument.quotedExcerpt()); valid options: \(optionList(specs))")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let spec = specs.first(where: { $0.kind != .positional && $0.name == name }) else {
                throw CLIError.usage("unknown option \"--\(name)\"; valid options: \(optionList(specs))")
            }
            switch spec.kind {
            case .flag:
                if inlineValue != nil { throw CLIError.usage("--\(name) takes no value") }
                try spec.store(&command, "")
            case .option:
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count, !looksLikeOption(arguments[index]) else {
                        throw CLIError.usage("missing value for --\(name)\(choicesHint(spec))")
                    }
                    value = arguments[index]
                    index += 1
                }
                try spec.store(&command, value)
            case .positional:
                break  // excluded above
            }
            given.insert(spec.name)
        }

        for spec in specs where spec.isRequired && !given.contains(spec.name) {
            throw CLIError.usage(
                "missing \(spec.kind == .positional ? "argument" : "option") \(spec.displayName)\(choicesHint(spec))"
            )
        }
        return command
    }

    /// `--name`-like (but not `-` alone or a negative number, which are values).
    private static func looksLikeOption(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument != "-" && Double(argument) == nil
    }

    private static func choicesHint<Command>(_ spec: Argument<Command>) -> String {
        spec.choices.isEmpty ? "" : "; expected one of: " + spec.choices.joined(separator: ", ")
    }

    private static func optionList<Command>(_ specs: [Argument<Command>]) -> String {
        (specs.filter { $0.kind != .positional }.map(\.displayName) + ["--help"]).joined(separator: ", ")
    }
}
