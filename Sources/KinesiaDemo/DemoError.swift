/// Why a demo could not start or go on.
public enum DemoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed, for the user: the output directory cannot be made, holds an earlier demo's
    /// output, is not writable.
    case failure(String)

    /// The message.
    public var description: String {
        switch self {
        case .failure(let message): message
        }
    }
}
