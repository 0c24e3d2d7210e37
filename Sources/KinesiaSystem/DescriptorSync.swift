import Glibc

/// A descriptor number handed between threads to be synced later: duplicated so that the
/// original may be closed meanwhile, synced (`fdatasync`) and closed once, by number (a
/// ``FileDescriptor`` cannot sit in a table shared by threads).
///
/// ```swift
/// guard let copy = DescriptorSync.duplicate(file.rawValue) else { return }
/// let synced = DescriptorSync.syncAndClose(copy)
/// ```
public enum DescriptorSync {
    /// A close-on-exec duplicate of `descriptor` (`F_DUPFD_CLOEXEC`); `nil` when it fails.
    public static func duplicate(_ descriptor: Int32) -> Int32? {
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        return duplicate >= 0 ? duplicate : nil
    }

    /// `fdatasync`s `descriptor`, then closes it; whether the sync succeeded.
    public static func syncAndClose(_ descriptor: Int32) -> Bool {
        defer { _ = Glibc.close(descriptor) }
        return fdatasync(descriptor) == 0
    }

    /// Closes a duplicate that will not be synced.
    public static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }
}
