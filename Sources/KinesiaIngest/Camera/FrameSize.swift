/// `WxH`: a frame size in pixels.
public struct FrameSize: Hashable, Sendable, CustomStringConvertible {
    /// The width.
    public var width: Int
    /// The height.
    public var height: Int

    /// Parses `WxH` (both positive).
    public init?(parsing argument: String) {
        let parts = argument.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0
        else { return nil }
        (self.width, self.height) = (width, height)
    }

    /// `WxH`.
    public var description: String { "\(width)x\(height)" }
}
