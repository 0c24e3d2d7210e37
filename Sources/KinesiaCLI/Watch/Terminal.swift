import KinesiaService
import KinesiaSystem

/// What the live views need to know about standard output: whether it is a terminal they may
/// redraw, and its size.
enum Terminal {
    /// Whether `sink` is the process's standard output and that is a terminal that understands
    /// cursor movement (not `TERM=dumb`).
    static func isRedrawable(_ sink: any TextSink, environment: [String: String]) -> Bool {
        guard let sink = sink as? FileDescriptorSink, sink === FileDescriptorSink.standardOutput else {
            return false
        }
        guard TerminalWindow.standardOutputIsTerminal else { return false }
        return environment["TERM"] != "dumb"
    }

    /// The size of the terminal on standard output (columns, rows), from `TIOCGWINSZ`, else
    /// `COLUMNS`/`LINES`, else 100 x 40.
    static func size(environment: [String: String]) -> (columns: Int, rows: Int) {
        if let size = TerminalWindow.standardOutputSize { return size }
        let columns = environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? 100
        let rows = environment["LINES"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? 40
        return (columns, rows)
    }

    /// Hides the cursor and clears the screen (before the first frame).
    static let enter = "\u{1B}[?25l\u{1B}[2J"
    /// Shows the cursor again (after the last frame).
    static let leave = "\u{1B}[?25h"
}
