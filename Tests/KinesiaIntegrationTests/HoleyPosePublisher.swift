import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire

/// A user's own publisher of one camera's poses, written from the wire format: it numbers its
/// stream itself, keeps no journal, serves no replay, and leaves out the sequence numbers it is
/// told to (holes on purpose).
final class HoleyPosePublisher {
    private let context: ZMQContext
    private let publisher: BusPublisher
    private let topic: Topic
    private let stream = StreamID(0x5EED)

    /// Connected to the broker of `bus`, publishing `camera`'s poses.
    init(bus: String, camera: String) throws {
        context = try ZMQContext()
        do {
            publisher = try BusPublisher(
                context: context, bus: try BusAddress(parsing: bus), connectionTimeout: .seconds(60))
            topic = try Topic.pose(camera: camera)
        } catch {
            context.terminate()
            throw error
        }
    }

    deinit {
        publisher.close()
        context.terminate()
    }

    /// Publishes pose `i` of `poses` as sequence number `i`, except those in `skipped`, resting
    /// 10 ms after every `burst` indices.
    ///
    /// On a thread of its own, resting in `Thread.sleep`: the pace is the publisher's whatever
    /// other tests hold the cooperative pool (resting in `Task.sleep`, the 700 poses of
    /// ``PoolSessionHoleTests`` once took 64 s in CI instead of 1.5, past the worker's lease).
    func publish(_ poses: [Pose], skipping skipped: Set<Int>, restingEvery burst: Int) async throws {
        try await offCooperativePool {
            for (index, pose) in poses.enumerated() where !skipped.contains(index) {
                publisher.continueStream(stream, on: topic, after: index == 0 ? nil : UInt64(index - 1))
                _ = try publisher.publish(pose, on: topic)
                if index % burst == 0 { Thread.sleep(forTimeInterval: 0.01) }
            }
        }
    }
}
