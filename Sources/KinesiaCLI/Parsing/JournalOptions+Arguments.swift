public import KinesiaJournal
public import KinesiaPublishJournal

extension JournalOptions {
    /// The options as arguments of a command.
    static func arguments<Command>(_ keyPath: WritableKeyPath<Command, JournalOptions>, resumes: String)
        -> [Argument<Command>]
    {
        [
            .option(
                "state", keyPath.appending(path: \.state), valueName: "dir",
                help: "The state directory: journals and stream identities (owner-only; default one per "
                    + "bus, $XDG_STATE_HOME/kinesia/bus-NAME or ~/.local/state/kinesia/bus-NAME, NAME the bus "
                    + "directory or address with every character but letters, digits, . and - as _)."),
            .flag(
                "no-journal", keyPath.appending(path: \.disabled),
                help: "Journal nothing; keep no stream identity."),
            .option(
                "fsync", keyPath.appending(path: \.fsync), valueName: "always|never|ms",
                help:
                    "When journal records reach the disk: after each, never forced, or within MS milliseconds "
                    + "(default: an ingest 200, a worker 1000)."
            ),
            .option(
                "journal-max-bytes", keyPath.appending(path: \.maximumBytes), valueName: "size",
                help: "The most the state directory's journals keep (e.g. 500M, 2G); the oldest segments go."),
            .option(
                "journal-max-age", keyPath.appending(path: \.maximumAge), valueName: "age",
                help: "The oldest journal segment kept (e.g. 12h, 30d)."),
            .flag("new-session", keyPath.appending(path: \.newSession), help: resumes),
        ]
    }
}

extension JournalPolicy.Sync: ExpressibleByArgument {
    /// `always`, `never` or milliseconds.
    public init?(argument: String) { self.init(parsing: argument) }
    /// The forms.
    public static var allValueStrings: [String] { ["always", "never", "<milliseconds>"] }
}

extension ByteCount: ExpressibleByArgument {
    /// Parses a positive size (``ByteCount/init(parsing:)``).
    public init?(argument: String) { self.init(parsing: argument) }
}

extension AgeLimit: ExpressibleByArgument {
    /// Parses a positive age (``AgeLimit/init(parsing:)``).
    public init?(argument: String) { self.init(parsing: argument) }
}
