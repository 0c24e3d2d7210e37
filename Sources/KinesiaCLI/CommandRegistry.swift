extension Kinesia {
    /// Every subcommand, in the order `kinesia help` lists them. Adding a command is one file
    /// with a ``ParsableCommand`` and one line here.
    public static let commands: [any ParsableCommand.Type] = [
        AnalyzeCommand.self,
        BrokerCommand.self,
        IngestCommand.self,
        WorkerCommand.self,
        ListenCommand.self,
        WatchCommand.self,
        StatusCommand.self,
        DemoCommand.self,
        UpCommand.self,
        VoiceCommand.self,
        HapticCommand.self,
    ]
}
