/// Why ``FileDescriptor/openRegularFile(_:_:)`` did not open a file.
public enum RegularFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `open` or `fstat` failed (``Errno/noSuchFile`` when nothing is there).
    case system(Errno)
    /// The path names something else than a regular file: a FIFO, a device, a directory...
    case notRegular(FileStatus.Kind)

    /// A sentence for people: `it is a FIFO, not a regular file`.
    public var description: String {
        switch self {
        case .system(let error): error.description
        case .notRegular(let kind): "it is \(kind.name), not a regular file"
        }
    }
}
