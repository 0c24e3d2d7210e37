extension Kinesia {
    /// Every subcommand, in the order `kinesia help` lists them. Adding a command is one file
    /// with a ``ParsableCommand`` and one line here.
    public static let commands: [any ParsableCommand.Type] = [
        AnalyzeCommand.self,
        BrokerCommand.self,
        WatchCommand.self,
        StatusCommand.self,
    ]
}
