import Foundation
import KinesiaMotion
import KinesiaWire
import Testing

/// `PoseCodec.decode(_:into:)` (straight into a `FlatPose`) is the pose decoder without the
/// dictionaries: the same pose and header from every valid fixture, the same error from every
/// invalid one.
struct FlatPoseDecodeTests {
    func committed(_ file: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixturesDirectory.appendingPathComponent(file)))
    }

    @Test func validPoseFixturesDecodeToTheSamePoseInFlatForm() throws {
        // One flat pose for all, as the worker reuses it: nothing of a previous pose may stay.
        var flat = FlatPose()
        var checked = 0
        for vector in try WireFixtures.valid() {
            guard case .pose(let expected) = vector.message.body else { continue }
            let payload = try committed(vector.file)
            let (header, pose) = try PoseCodec.decode(payload)
            let flatHeader = try PoseCodec.decode(payload, into: &flat)
            #expect(flatHeader == header, "\(vector.file)")
            #expect(flatHeader == vector.message.header, "\(vector.file)")
            #expect(flat == FlatPose(pose), "\(vector.file)")
            #expect(flat.pose == expected, "\(vector.file)")
            checked += 1
        }
        #expect(checked == 4)
    }

    @Test func invalidFixturesAreRefusedWithTheSameErrorInFlatForm() throws {
        var flat = FlatPose()
        var refused = 0
        for vector in try WireFixtures.invalid() {
            let payload = try committed(vector.file)
            var poseError: WireError?
            var flatError: WireError?
            do { _ = try PoseCodec.decode(payload) } catch { poseError = error }
            do { _ = try PoseCodec.decode(payload, into: &flat) } catch { flatError = error }
            // Some are refused only at the message level (topic mismatch): both decoders accept.
            #expect(flatError == poseError, "\(vector.file)")
            if poseError != nil { refused += 1 }
        }
        #expect(refused >= 9)
    }

    @Test func everyTruncationIsRefusedWithTheSameErrorInFlatForm() throws {
        var flat = FlatPose()
        let full = try PoseCodec.encode(WireFixtures.fullPose, header: WireFixtures.header(.pose, 7))
        for length in 0..<full.count {
            let payload = Array(full.prefix(length))
            var poseError: WireError?
            var flatError: WireError?
            do { _ = try PoseCodec.decode(payload) } catch { poseError = error }
            do { _ = try PoseCodec.decode(payload, into: &flat) } catch { flatError = error }
            #expect(flatError != nil && flatError == poseError, "\(length) bytes")
        }
        _ = try PoseCodec.decode(full, into: &flat)
        #expect(flat.pose == WireFixtures.fullPose)
    }
}
