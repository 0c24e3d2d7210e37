/// `X0,Y0,X1,Y1`: a rectangle of a frame in pixels, `X1` and `Y1` excluded.
public struct FrameRegion: Hashable, Sendable, CustomStringConvertible {
    /// The left edge.
    public var x0: Int
    /// The top edge.
    public var y0: Int
    /// The right edge (excluded).
    public var x1: Int
    /// The bottom edge (excluded).
    public var y1: Int

    /// A region; `nil` unless `0 <= x0 < x1` and `0 <= y0 < y1`.
    public init?(x0: Int, y0: Int, x1: Int, y1: Int) {
        guard x0 >= 0, y0 >= 0, x1 > x0, y1 > y0 else { return nil }
        (self.x0, self.y0, self.x1, self.y1) = (x0, y0, x1, y1)
    }

    /// Parses `X0,Y0,X1,Y1`.
    public init?(parsing argument: String) {
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 4, let x0 = parts[0], let y0 = parts[1], let x1 = parts[2], let y1 = parts[3]
        else { return nil }
        self.init(x0: x0, y0: y0, x1: x1, y1: y1)
    }

    /// `X0,Y0,X1,Y1`.
    public var description: String { "\(x0),\(y0),\(x1),\(y1)" }
}
