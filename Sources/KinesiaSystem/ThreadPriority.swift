public import Foundation
import Glibc

/// How much of a contended processor a thread asks for: its nice value, which Linux keeps per
/// thread (`setpriority(PRIO_PROCESS, 0, …)` changes the calling thread only, not its process).
///
/// Work that may run late without anyone waiting for it (a journal's write-behind and its
/// syncs) runs at ``background``: when the processors are busy, the scheduler gives the live
/// threads (a worker's analysis, the bus's receive) about nine tenths of a processor they share
/// with it, instead of half, and the background thread catches up when they sleep. On an idle
/// machine it makes no difference.
///
/// ```swift
/// let thread = Thread.named("kinesia.journal-write", priority: .background) { loop() }
/// ```
public enum ThreadPriority: Sendable, Hashable {
    /// The priority the thread was made with (the process's).
    case inherited
    /// Nice ``backgroundNiceness`` (or the process's own, when that is lower already).
    case background

    /// The nice value of ``background``: 10, a weight of 110 against a live thread's 1024.
    public static let backgroundNiceness: Int32 = 10

    /// Gives the calling thread `priority`. Best effort: a thread keeps its priority when the
    /// kernel refuses (nothing does for a lower one).
    /// - Returns: Whether the thread runs at `priority` now.
    @discardableResult
    public static func apply(_ priority: ThreadPriority) -> Bool {
        switch priority {
        case .inherited:
            return true
        case .background:
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
            errno = 0
            let current = getpriority(which, 0)
            if errno == 0, current >= backgroundNiceness { return true }
            return setpriority(which, 0, backgroundNiceness) == 0
        }
    }

    /// The calling thread's nice value (`nil` when the kernel does not say).
    public static var currentNiceness: Int32? {
        errno = 0
        let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        return errno == 0 ? value : nil
    }
}

extension Thread {
    /// A thread, not started, that runs `body` named `name` for Foundation and for the kernel
    /// (``KernelThreadName``), at `priority`.
    public static func named(
        _ name: String, priority: ThreadPriority, _ body: @escaping @Sendable () -> Void
    ) -> Thread {
        named(name) {
            ThreadPriority.apply(priority)
            body()
        }
    }
}
