/// A source of poses: a camera, a recording, a simulator, a socket.
///
/// Every pose it yields keeps the contract of ``Pose``. A provider serves one stream at a
/// time; to measure both sides with one camera, create two ``MotionSession``s and give each
/// pose to both from a single loop.
public protocol PoseProvider: Sendable {
    /// The poses, in capture order. The stream ends when the source ends.
    func poses() -> AsyncStream<Pose>
}
