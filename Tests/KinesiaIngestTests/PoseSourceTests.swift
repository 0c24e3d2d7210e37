import Foundation
import KinesiaMotion
import KinesiaSystem
import Testing

@testable import KinesiaIngest

/// Pose sources that loop.
struct PoseSourceTests {
    @Test func aLoopShiftsTimestampsByTheSpanAndOneFrame() {
        let poses = (0..<4).map { Pose(timestamp: 10 + Double($0) * 0.5) }
        #expect(PoseSource.loopShift(poses) == 2.0)
        #expect(PoseSource.loopShift([Pose(timestamp: 3)]) == 1.0 / 30)
    }

    @Test func aLoopingRecordingKeepsIncreasing() throws {
        let path = NSTemporaryDirectory() + "kinesia-loop-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "{\"t\":0,\"points\":{}}\n{\"t\":0.1,\"points\":{}}\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        var source = try PoseSource.open(path, loop: true)
        var times: [Double] = []
        for _ in 0..<5 {
            guard case .pose(let pose) = source.next(timeout: .zero) else { break }
            times.append(pose.timestamp)
        }
        #expect(times.count == 5)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        #expect(source.loops == 2)
    }

    @Test func aBadSimulationIsAUsageError() {
        #expect {
            try PoseSource.open("sim:flying", loop: false)
        } throws: { error in
            (error as? PoseSourceError)?.isUsageError == true
        }
    }

    @Test func onlyASourceThatWaitsForItsPosesHasADescriptorToWaitFor() throws {
        #expect(try PoseSource.open("sim:squat,seed=1", loop: false).waitableDescriptor == nil)
        #expect(try PoseSource.open("-", loop: false).waitableDescriptor != nil)
    }

    @Test func aLineReadersDescriptorIsReadableWhenALineComes() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[1]) }
        let reader = LineReader(FileDescriptor(owning: descriptors[0]))
        var table = pollfd(fd: reader.waitableDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&table, 1, 0) == 0)
        #expect(reader.nextLine(timeout: .zero) == .idle)
        _ = "{\"t\":0,\"points\":{}}\n".withCString { write(descriptors[1], $0, strlen($0)) }
        #expect(poll(&table, 1, 10_000) == 1)
        #expect(reader.nextLine(timeout: .zero) == .line(number: 1, text: "{\"t\":0,\"points\":{}}"))
    }

    @Test func standardInputLinesAreNumberedAndMalformedOnesReported() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let text = "{\"t\":0,\"points\":{}}\nnope\n\n{\"t\":1,\"points\":{}}"
        _ = text.withCString { write(descriptors[1], $0, strlen($0)) }
        close(descriptors[1])
        let reader = LineReader(FileDescriptor(owning: descriptors[0]))
        var lines: [String] = []
        loop: while true {
            switch reader.nextLine(timeout: .seconds(1)) {
            case .line(let number, let text): lines.append("\(number):\(text)")
            case .tooLong(let number, _): lines.append("\(number): too long")
            case .idle: continue
            case .end: break loop
            }
        }
        #expect(lines == ["1:{\"t\":0,\"points\":{}}", "2:nope", "3:", "4:{\"t\":1,\"points\":{}}"])
    }
}
