import Foundation

/// Where the pose detector is: the Python of the virtual environment that `scripts/setup`
/// makes, and the detector script.
///
/// - The environment's home is `$KINESIA_DETECTOR_HOME`, else
///   `${XDG_DATA_HOME:-$HOME/.local/share}/kinesia/detector` (per user, so that an installed
///   `kinesia` finds it from any directory); its Python is `venv/bin/python` there.
/// - The script is `$KINESIA_DETECTOR_SCRIPT`, else `detector/kinesia_detector.py` of the
///   checkout the running `kinesia` was built in (found above the executable), else the copy
///   `scripts/setup` puts in the home.
///
/// ```swift
/// let detector = try DetectorEnvironment.locate(environment: ProcessInfo.processInfo.environment)
/// print(detector.python, detector.script)
/// ```
public struct DetectorEnvironment: Hashable, Sendable {
    /// The virtual environment's Python.
    public var python: String
    /// `kinesia_detector.py`.
    public var script: String

    /// The environment's home directory for `environment`.
    public static func home(environment: [String: String]) -> String {
        if let home = environment["KINESIA_DETECTOR_HOME"], !home.isEmpty { return home }
        let data =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return data + "/kinesia/detector"
    }

    /// Finds the detector.
    /// - Throws: ``PoseSourceError/failure(_:)`` naming what is missing and how to install it.
    public static func locate(environment: [String: String]) throws(PoseSourceError) -> DetectorEnvironment {
        let home = home(environment: environment)
        let python = home + "/venv/bin/python"
        let files = FileManager.default
        guard files.isExecutableFile(atPath: python) else {
            throw PoseSourceError.failure(
                "the pose detector's environment is missing (no \(python)): run scripts/setup from a "
                    + "checkout of Kinesia Motion to install it, or set KINESIA_DETECTOR_HOME to where it is")
        }
        var candidates: [String] = []
        if let script = environment["KINESIA_DETECTOR_SCRIPT"], !script.isEmpty { candidates.append(script) }
        candidates += checkoutScripts()
        candidates.append(home + "/kinesia_detector.py")
        guard let script = candidates.first(where: { files.fileExists(atPath: $0) }) else {
            throw PoseSourceError.failure(
                "the pose detector's script is missing (no \(home)/kinesia_detector.py): run scripts/setup")
        }
        return DetectorEnvironment(python: python, script: script)
    }

    /// `detector/kinesia_detector.py` in the directories above the executable (a build in a
    /// checkout: `<checkout>/.build/<triple>/debug/kinesia`).
    private static func checkoutScripts() -> [String] {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        else { return [] }
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        var result: [String] = []
        for _ in 0..<4 {
            directory.deleteLastPathComponent()
            result.append(directory.appendingPathComponent("detector/kinesia_detector.py").path)
        }
        return result
    }
}
