import KinesiaService
import Testing

struct LoggerTests {
    @Test func writesLabelledLinesAtOrAboveItsLevel() {
        let sink = CapturedText()
        let logger = Logger(label: "worker", level: .notice, sink: sink)
        logger.debug("hidden")
        logger.info("hidden too")
        logger.notice("restarted")
        logger.warning("dropped 3 poses")
        logger.error("socket closed")
        #expect(
            sink.lines == [
                "worker: notice: restarted", "worker: warning: dropped 3 poses",
                "worker: error: socket closed",
            ])
    }

    @Test func doesNotBuildMessagesBelowItsLevel() {
        let logger = Logger(label: "x", level: .error, sink: CapturedText())
        var built = false
        logger.debug(
            {
                built = true; return "expensive"
            }())
        #expect(!built)
    }
}
