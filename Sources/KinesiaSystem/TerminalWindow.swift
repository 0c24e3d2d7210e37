import Glibc

/// The terminal on standard output, if there is one: whether it is a terminal (or another
/// descriptor is one), and the size of
/// its window (`TIOCGWINSZ`).
///
/// ```swift
/// if TerminalWindow.standardOutputIsTerminal, let size = TerminalWindow.standardOutputSize { … }
/// ```
public enum TerminalWindow {
    /// Whether standard output is a terminal (`isatty`).
    public static var standardOutputIsTerminal: Bool { isTerminal(STDOUT_FILENO) }

    /// Whether the open descriptor `descriptor` is a terminal (`isatty`): `false` for a file, a
    /// pipe, a socket or a descriptor that is not open.
    ///
    /// ```swift
    /// let lineBuffered = TerminalWindow.isTerminal(FileHandle.standardOutput.fileDescriptor)
    /// ```
    public static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) != 0 }

    /// The window of the terminal on standard output (columns, rows); `nil` when standard
    /// output is not a terminal or the terminal tells no size.
    public static var standardOutputSize: (columns: Int, rows: Int)? {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0
        else {
            return nil
        }
        return (Int(window.ws_col), Int(window.ws_row))
    }
}
