import Foundation
import KinesiaBus

/// A ROUTER bound over IPC in a directory of its own, where a worker's pose replay client can
/// be pointed (the directory is its bus directory), removed afterwards.
enum ReplayRouterFixture {
    /// Runs `body` with the context, the ROUTER, its endpoint and the directory.
    static func with(_ body: (ZMQContext, ZMQSocket, String, String) throws -> Void) throws {
        let directory = NSTemporaryDirectory() + "kinesia-replay-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let context = try ZMQContext()
        defer { context.terminate() }
        let router = try ZMQSocket(.router, context: context)
        defer { router.close() }
        let endpoint = "ipc://\(directory)/replay.sock"
        try router.bind(endpoint)
        try body(context, router, endpoint, directory)
    }
}
