/// The `--flag value` arguments every `kinesia-bench` subcommand takes.
enum BenchArguments {
    /// `arguments` as `(flag, value)` pairs, in order; the value is `nil` when the last flag has
    /// none (the subcommand then answers with its usage).
    static func pairs(_ arguments: [String]) -> [(flag: String, value: String?)] {
        stride(from: 0, to: arguments.count, by: 2).map { index in
            (arguments[index], index + 1 < arguments.count ? arguments[index + 1] : nil)
        }
    }
}
