import KinesiaCLI
import KinesiaService
import Testing

struct CommandContextTests {
    @Test func theContextTakesItsLevelFromTheEnvironment() {
        let sink = CapturedText()
        let context = CommandContext(
            standardOutput: CapturedText(), standardError: sink, environment: ["KINESIA_LOG_LEVEL": "warning"]
        )
        context.logger.info("no")
        context.logger.warning("yes")
        #expect(sink.lines == ["kinesia: warning: yes"])
    }
}
