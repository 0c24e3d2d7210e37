import Foundation
import KinesiaCLI
import KinesiaService
import KinesiaTestSupport

/// Runs a `kinesia` command line in-process and captures what it prints.
struct CommandRun {
    var status: Int32
    var output: String
    var error: String

    var outputLines: [String] {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    static func run(_ arguments: [String]) async -> CommandRun {
        let output = CapturedText(), error = CapturedText()
        let context = CommandContext(standardOutput: output, standardError: error)
        let status = await Kinesia.main(arguments, context: context)
        return CommandRun(status: status, output: output.text, error: error.text)
    }
}

enum CLIFixtures {
    /// A file of the repository (``PackagePaths/path(_:)``).
    static func path(_ relative: String) -> String {
        PackagePaths.path(relative)
    }
}
