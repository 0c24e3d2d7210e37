extension Kinesia {
    /// Every subcommand, in the order `kinesia help` lists them. Adding a command is one file
    /// with a ``ParsableCommand`` and one line here.
    public static let commands: [any ParsableCommand.Type] = [
        AnalyzeCommand.self,
        BrokerCommand.self,
        IngestCommand.self,
        WorkerCommand.self,
        CoordinatorCommand.self,
        SessionCommand.self,
        ListenCommand.self,
        WatchCommand.self,
        StatusCommand.self,
        RecordCommand.self,
        ReportCommand.self,
        DemoCommand.self,
        UpCommand.self,
        KeysCommand.self,
        VoiceCommand.self,
        HapticCommand.self,
        WebCommand.self,
    ]
}
