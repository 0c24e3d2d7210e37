import KinesiaControl
import KinesiaWire
import Testing

@testable import KinesiaWorker

/// Which streams a pool worker announces as moving, with the time passed in.
struct MovingSessionsTests {
    static let left = try! SessionKey(camera: "cam7", name: "left")
    static let right = try! SessionKey(camera: "cam7", name: "right")

    @Test func aSessionHandedOverIsAnnouncedOnItsThreeTopicsForTenSeconds() {
        var moving = MovingSessions()
        moving.handedOver(Self.left, resume: RunResume(stream: 0x2F05, segments: []), at: .seconds(100))
        let streams = moving.streams(at: .seconds(101))
        #expect(
            streams.map(\.topic.string) == ["event/cam7/left/", "snapshot/cam7/left/", "session/cam7/left/"])
        #expect(Set(streams.map(\.stream)) == [StreamID(0x2F05)])
        #expect(moving.streams(at: .seconds(109.9)).count == 3)
        #expect(moving.streams(at: .seconds(110)).isEmpty)
    }

    @Test func aSessionWithoutAStreamIsNotAnnouncedAndOneHostedAgainIsNoLonger() {
        var moving = MovingSessions()
        moving.handedOver(Self.left, resume: nil, at: .zero)
        #expect(moving.streams(at: .zero).isEmpty)
        moving.handedOver(Self.left, resume: RunResume(stream: 1, segments: []), at: .zero)
        moving.handedOver(Self.right, resume: RunResume(stream: 2, segments: []), at: .zero)
        #expect(moving.streams(at: .seconds(1)).count == 6)
        moving.hostedAgain(Self.left)
        #expect(moving.streams(at: .seconds(1)).map(\.stream) == Array(repeating: StreamID(2), count: 3))
    }

    @Test func noMoreThanOneReportHoldsIsAnnouncedAtOnce() {
        var moving = MovingSessions()
        for index in 0..<30 {
            moving.handedOver(
                try! SessionKey(camera: "cam\(index)", name: "left"),
                resume: RunResume(stream: UInt64(index + 1), segments: []),
                at: .zero)
        }
        #expect(moving.streams(at: .zero).count == MovingStream.maximumPerReport)
    }
}
