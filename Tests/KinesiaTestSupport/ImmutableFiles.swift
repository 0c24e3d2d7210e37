import Foundation

/// Files made read-only for every user, root included, with the `immutable` attribute
/// (`chattr +i`): tests run as root, for whom permission bits (`chmod 444`) change nothing, and a
/// read-only mount needs a mount namespace that a test process cannot enter. On an immutable
/// directory nothing can be made, removed or renamed; an immutable file cannot be opened for
/// writing: what read-only media do.
///
/// ```swift
/// let immutable = try ImmutableFiles([directory, database])
/// defer { immutable.release() }
/// ```
package struct ImmutableFiles: Sendable {
    /// The paths made immutable.
    package let paths: [String]

    /// Makes `paths` immutable.
    /// - Throws: ``ImmutableFilesError`` when `chattr` fails (a file system without the
    ///   attribute, no `CAP_LINUX_IMMUTABLE`).
    package init(_ paths: [String]) throws {
        self.paths = paths
        try Self.chattr("+i", paths)
    }

    /// Makes the files writable again (so that the test can remove them).
    package func release() {
        try? Self.chattr("-i", paths)
    }

    private static func chattr(_ flag: String, _ paths: [String]) throws {
        let (status, output) = try TestProcess.run(
            "/usr/bin/chattr", [flag] + paths, environment: ProcessInfo.processInfo.environment)
        guard status == 0 else {
            throw ImmutableFilesError(message: "chattr \(flag) \(paths.joined(separator: " ")): \(output)")
        }
    }
}

/// `chattr` failed.
package struct ImmutableFilesError: Error, CustomStringConvertible {
    /// What it said.
    package var message: String
    package var description: String { message }
}
