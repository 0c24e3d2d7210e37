public import Foundation

/// What the demo's consumers leave behind: the recorder's database, the report and the voice's
/// WAV files, all in one directory that outlives the demo.
public struct DemoOutput: Hashable, Sendable {
    /// Keeps the output in `directory` (absolute).
    public init(directory: String) {
        self.directory = directory
    }

    /// The directory (absolute).
    public var directory: String

    /// `kinesia record --db`'s database.
    public var database: String { directory + "/record.sqlite" }
    /// The HTML page of `kinesia report`.
    public var report: String { directory + "/report.html" }
    /// `kinesia voice --output`'s directory: `0001.wav`... and `utterances.jsonl`.
    public var voice: String { directory + "/voice" }

    /// `kinesia web`'s tokens' directory (the demo's dashboard token, kept hashed).
    public var webTokens: String { directory + "/web-tokens" }

    /// The names in the directory that a demo writes: one of them there means an earlier demo's
    /// output, which a new run would mix with its own (two runs in one database).
    public static let names = ["record.sqlite", "report.html", "voice"]

    /// `kinesia-demo-20261201-183015` for `date`, in the local time zone.
    public static func defaultName(at date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return "kinesia-demo-" + formatter.string(from: date)
    }

    /// The output directory for `--out` (`nil`: ``defaultName(at:)``), made absolute against
    /// `currentDirectory`.
    public static func resolve(_ out: String?, currentDirectory: String, now: Date) -> DemoOutput {
        let path = out ?? defaultName(at: now)
        let absolute = path.hasPrefix("/") ? path : currentDirectory + "/" + path
        return DemoOutput(directory: URL(fileURLWithPath: absolute).standardized.path)
    }

    /// Makes the directory (and its parents).
    /// - Throws: ``DemoError/failure(_:)`` when it cannot be made, is not a directory, or
    ///   already holds a demo's output.
    public func prepare() throws(DemoError) {
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        if files.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw DemoError.failure("--out \(directory) is not a directory")
            }
            let present = Self.names.filter { files.fileExists(atPath: directory + "/" + $0) }
            guard present.isEmpty else {
                throw DemoError.failure(
                    "\(directory) already holds a demo's output (\(present.joined(separator: ", "))): "
                        + "give another --out DIR")
            }
        } else {
            do {
                try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw DemoError.failure(
                    "cannot make the output directory \(directory): \(error.localizedDescription)")
            }
        }
        guard files.isWritableFile(atPath: directory) else {
            throw DemoError.failure("the output directory \(directory) is not writable")
        }
    }
}
