import Foundation
import Glibc

/// Makes a child of `kinesia up` stop when its supervisor dies, even by SIGKILL.
///
/// `kinesia up` puts its pid in the `KINESIA_SUPERVISOR_PID` environment variable of each
/// `kinesia` child (not of other executables). A `kinesia` process calls
/// ``adoptFromEnvironment()`` first thing: it asks the kernel (`prctl(PR_SET_PDEATHSIG,
/// SIGTERM)`) for a SIGTERM when its parent goes away, so the command's own graceful shutdown
/// runs; and if the supervisor is already gone (it died between the spawn and this call) it
/// exits at once. A process started any other way does nothing.
///
/// The kernel may send the signal several times in a row (once for each thread of the dying
/// supervisor that the child is handed to): a command must treat repeated SIGTERMs as one.
public enum ParentDeathSignal {
    /// Requests SIGTERM on the supervisor's death when started by `kinesia up`.
    ///
    /// - Returns: Whether the request was made (the process runs under a supervisor).
    @discardableResult
    public static func adoptFromEnvironment() -> Bool {
        guard let value = getenv("KINESIA_SUPERVISOR_PID"), let parent = Int32(String(cString: value))
        else { return false }
        // Not for the grandchildren: they are not the supervisor's children.
        unsetenv("KINESIA_SUPERVISOR_PID")
        guard let prctl = prctlFunction, prctl(prctlSetParentDeathSignal, UInt(SIGTERM), 0, 0, 0) == 0
        else { return false }
        if getppid() != parent, kill(parent, 0) != 0 {
            // The supervisor died before the request: nobody will send the signal.
            exit(0)
        }
        return true
    }

    /// `PR_SET_PDEATHSIG` from `<sys/prctl.h>` (not imported into Swift).
    private static let prctlSetParentDeathSignal: Int32 = 1

    private typealias PrctlFunction = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32

    /// `prctl` is variadic in C, so Swift does not import it; this is the same symbol called
    /// with its five integer arguments, which the Linux calling conventions pass alike.
    private static let prctlFunction: PrctlFunction? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prctl") else { return nil }
        return unsafeBitCast(symbol, to: PrctlFunction.self)
    }()
}
