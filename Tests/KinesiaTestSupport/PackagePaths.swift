package import Foundation

/// Where the package's files and the `kinesia` executable of the current build are, for every
/// test target.
///
/// ```swift
/// let recording = PackagePaths.url("data/recordings/s2d_demo_walk_mediapipe.jsonl")
/// let kinesia = try PackagePaths.kinesia()
/// ```
package enum PackagePaths {
    /// The package root: the first folder above this source file that holds `Package.swift`.
    package static let root: URL = {
        guard let root = packageRoot(above: URL(fileURLWithPath: #filePath)) else {
            fatalError("Package.swift not found above \(#filePath)")
        }
        return root
    }()

    /// The first folder above `file` (or `file` itself) that holds `Package.swift`, or `nil`
    /// when none does up to `/`.
    package static func packageRoot(above file: URL) -> URL? {
        var url = file.standardizedFileURL
        while true {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url
            }
            if url.path == "/" { return nil }
            url.deleteLastPathComponent()
        }
    }

    /// `root/relative`.
    package static func url(_ relative: String) -> URL {
        root.appendingPathComponent(relative)
    }

    /// `root/relative` as a path.
    package static func path(_ relative: String) -> String {
        url(relative).path
    }

    /// The build products folder of the running tests (`.build/debug`, `.build/release`...):
    /// the folder of the test bundle, where `swift build --build-tests` also puts `kinesia`.
    package static let buildProducts: URL = {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent()
    }()

    /// The `kinesia` executable is not in ``buildProducts``.
    package struct MissingExecutable: Error, CustomStringConvertible {
        /// Where it was looked for.
        package var path: String

        /// The executable is missing at `path`.
        package init(path: String) { self.path = path }

        package var description: String {
            "kinesia is not built at \(path): run `swift build --build-tests` (in the configuration of "
                + "`swift test`) before the tests that start it"
        }
    }

    /// The clone's Python environment is missing.
    package struct MissingPython: Error, CustomStringConvertible {
        /// Where its Python was looked for.
        package var path: String

        /// No executable Python at `path`.
        package init(path: String) { self.path = path }

        package var description: String {
            "the clone's Python environment is missing (no \(path)): run scripts/setup, which makes .venv "
                + "with the Python client (clients/python) and pyzmq"
        }
    }

    /// The Python of the clone's environment, `.venv/bin/python` (scripts/setup makes it): the
    /// Python client of `clients/python` installed editable, with pyzmq. Every test that runs a
    /// Python script of the project runs it with this one.
    ///
    /// - Throws: ``MissingPython`` saying what to run: a test that needs it fails, it is never
    ///   skipped.
    package static func python() throws(MissingPython) -> String {
        let path = self.path(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: path) else { throw MissingPython(path: path) }
        return path
    }

    /// The `kinesia` executable built with these tests (the same configuration, never one
    /// installed elsewhere).
    ///
    /// - Throws: ``MissingExecutable`` saying what to build: a test that needs it fails, it is
    ///   never skipped.
    package static func kinesia() throws(MissingExecutable) -> String {
        let path = buildProducts.appendingPathComponent("kinesia").path
        guard FileManager.default.isExecutableFile(atPath: path) else { throw MissingExecutable(path: path) }
        return path
    }
}
