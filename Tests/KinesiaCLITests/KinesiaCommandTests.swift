import Foundation
import KinesiaCLI
import Testing

struct KinesiaCommandTests {
    @Test func helpListsEveryCommandOnStandardOutput() async {
        for arguments in [["help"], ["--help"], ["-h"]] {
            let run = await CommandRun.run(arguments)
            #expect(run.status == 0)
            #expect(run.error.isEmpty)
            #expect(run.output.contains("USAGE: kinesia <command>"))
            for command in Kinesia.commands {
                #expect(run.output.contains(command.configuration.name))
            }
        }
    }

    @Test func helpForACommandShowsItsOptions() async {
        let viaHelp = await CommandRun.run(["help", "analyze"])
        let viaFlag = await CommandRun.run(["analyze", "--help"])
        #expect(viaHelp.status == 0)
        #expect(viaFlag.status == 0)
        #expect(viaHelp.output == viaFlag.output)
        #expect(viaHelp.output.contains("--exercise <id>"))
        #expect(viaHelp.output.contains("values: shoulderFlexion, shoulderAbduction"))
    }

    @Test func anUnknownCommandIsAUsageErrorNamingTheCommands() async {
        let run = await CommandRun.run(["analyse", "x"])
        #expect(run.status == 64)
        #expect(run.output.isEmpty)
        #expect(run.error.hasPrefix("kinesia: error: unknown command \"analyse\"; valid commands: analyze"))
        #expect(run.error.contains("See 'kinesia help'."))
        let help = await CommandRun.run(["help", "nope"])
        #expect(help.status == 64)
    }

    @Test func noCommandIsAUsageError() async {
        let run = await CommandRun.run([])
        #expect(run.status == 64)
        #expect(run.error.contains("missing command"))
    }
}
