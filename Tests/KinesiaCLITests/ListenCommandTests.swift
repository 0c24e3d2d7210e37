import KinesiaListen
import Testing

@testable import KinesiaCLI

/// `kinesia listen`'s options.
struct ListenCommandTests {
    @Test func prefixesAreAllThePositionals() throws {
        let command = try ListenCommand.parse(["event/", "--count", "3", "health/", "--format", "json"])
        #expect(command.prefixes == ["event/", "health/"])
        #expect(command.count == 3)
        #expect(command.format == .json)
        #expect(ListenCommand.usage.contains("[<topic-prefix> ...]"))
    }
}
