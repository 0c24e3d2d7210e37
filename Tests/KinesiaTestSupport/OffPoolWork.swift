/// What the body given to ``offCooperativePool(_:_:)`` mostly does, which sets the priority of
/// its thread.
package enum OffPoolWork: Hashable, Sendable {
    /// It waits (a child process, a socket, a semaphore, a sleep): its thread has the priority
    /// of the others, so that it wakes up on time.
    case waiting
    /// It computes for seconds: its thread has a lower priority (its nice value 10 above the process's), so that the threads
    /// of the cooperative pool, which every other test's next step waits for, run first.
    case computing

    /// How much the body's thread raises its nice value.
    var niceness: Int32 {
        switch self {
        case .waiting: 0
        case .computing: 10
        }
    }
}
