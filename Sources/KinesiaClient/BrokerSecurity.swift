/// How the broker (and the coordinator beside it) admits connections (`kinesia broker` resolves it from `--bus`, `--key`,
/// `--allowed` and `--insecure`).
package enum BrokerSecurity: Hashable, Sendable {
    /// A bus directory: only the broker's own user (checked by user id over IPC).
    case localUser
    /// TCP with CURVE: the broker's key and the allowed-keys directory (`<role>/*.pub`).
    case curve(BusKey, allowedDirectory: String)
    /// TCP without keys (`--insecure`): anyone who reaches the port.
    case insecure
}
