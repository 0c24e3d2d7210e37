public import Foundation

/// A directory of its own under the temporary directory, removed when the value goes away:
/// where a test writes its files.
///
/// ```swift
/// let scratch = try ScratchDirectory("supervisor")
/// try Data("{}".utf8).write(to: URL(fileURLWithPath: scratch.path("topology.json")))
/// ```
public final class ScratchDirectory {
    /// The directory.
    public let url: URL

    /// Makes `kinesia-<purpose>-<pid>-<random>` under the temporary directory.
    public init(_ purpose: String = "test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-\(purpose)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` in the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The lines of the file `name` (none when it cannot be read).
    public func lines(_ name: String) -> [String] {
        ((try? String(contentsOfFile: path(name), encoding: .utf8)) ?? "").split(separator: "\n").map(
            String.init)
    }

    /// Whether `name` exists in the directory.
    public func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    deinit { try? FileManager.default.removeItem(at: url) }
}
