/// Renders usage lines and help pages from a command's ``Argument`` list.
enum HelpFormatter {
    static func usage<Command: ParsableCommand>(for type: Command.Type) -> String {
        var parts = ["kinesia", Command.configuration.name]
        for spec in Command.arguments {
            let text: String
            switch spec.kind {
            case .positional: text = "<\(spec.valueName)>" + (spec.isVariadic ? " ..." : "")
            case .flag: text = "--\(spec.name)"
            case .option(let repeated): text = "--\(spec.name) <\(spec.valueName)>" + (repeated ? " ..." : "")
            }
            parts.append(spec.isRequired ? text : "[\(text)]")
        }
        return parts.joined(separator: " ")
    }

    static func help<Command: ParsableCommand>(for type: Command.Type) -> String {
        let configuration = Command.configuration
        var out = "USAGE: \(usage(for: type))\n\n\(configuration.summary)\n"
        if !configuration.discussion.isEmpty { out += "\n\(configuration.discussion)\n" }
        let specs = Command.arguments
        let defaults = Command()
        let positionals = specs.filter { $0.kind == .positional }
        let options = specs.filter { $0.kind != .positional }
        if !positionals.isEmpty {
            out += "\nARGUMENTS:\n"
            for spec in positionals { out += row("<\(spec.valueName)>", details(spec, defaults: defaults)) }
        }
        out += "\nOPTIONS:\n"
        for spec in options {
            let label = spec.kind == .flag ? "--\(spec.name)" : "--\(spec.name) <\(spec.valueName)>"
            out += row(label, details(spec, defaults: defaults))
        }
        out += row("-h, --help", "Show this help.")
        return out
    }

    private static func details<Command>(_ spec: Argument<Command>, defaults: Command) -> String {
        var text = spec.help
        if !spec.choices.isEmpty { text += " (values: \(spec.choices.joined(separator: ", ")))" }
        if let value = spec.defaultDescription(in: defaults) { text += " (default: \(value))" }
        if case .option(repeated: true) = spec.kind { text += " (repeatable)" }
        return text
    }

    static func row(_ label: String, _ text: String) -> String {
        let width = 26
        let padded =
            label.count < width - 2
            ? "  " + label + String(repeating: " ", count: width - 2 - label.count)
            : "  " + label + "\n" + String(repeating: " ", count: width)
        return padded + text + "\n"
    }
}
