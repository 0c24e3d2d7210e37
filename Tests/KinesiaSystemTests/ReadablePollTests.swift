import Glibc
import KinesiaSystem
import Testing

struct ReadablePollTests {
    @Test func aWaitTellsWhichOfSeveralPipesIsReadable() throws {
        let quiet = try FileDescriptor.pipe()
        let busy = try FileDescriptor.pipe()
        var poll = ReadablePoll()
        let quietIndex = poll.add(quiet.readEnd.rawValue)
        let busyIndex = poll.add(busy.readEnd.rawValue)
        #expect(poll.count == 2)
        #expect(try !poll.wait(timeout: .milliseconds(1)))
        #expect(!poll.isReadable(quietIndex) && !poll.isReadable(busyIndex))

        #expect(write(busy.writeEnd.rawValue, "x", 1) == 1)
        #expect(try poll.wait(timeout: .seconds(30)))
        #expect(!poll.isReadable(quietIndex))
        #expect(poll.isReadable(busyIndex))
        // The same table again: readable until read, then quiet.
        #expect(try poll.wait(timeout: .zero))
        var byte: UInt8 = 0
        #expect(read(busy.readEnd.rawValue, &byte, 1) == 1)
        #expect(try !poll.wait(timeout: .zero))
        #expect(!poll.isReadable(busyIndex))
    }

    @Test func anEmptyTableOnlyWaits() throws {
        var poll = ReadablePoll()
        #expect(try !poll.wait(timeout: .milliseconds(1)))
    }

    @Test func aTimeoutIsWholeMillisecondsRoundedUpWithinPollsRange() {
        #expect(Duration.zero.millisecondsRoundedUp == 0)
        #expect(Duration.milliseconds(-5).millisecondsRoundedUp == 0)
        #expect(Duration.nanoseconds(1).millisecondsRoundedUp == 1)
        #expect(Duration.milliseconds(100).millisecondsRoundedUp == 100)
        #expect(Duration.microseconds(100_001).millisecondsRoundedUp == 101)
        #expect(Duration.seconds(3_000_000).millisecondsRoundedUp == Int32.max)
    }
}
