import CKinesiaMemory

/// The heap that a process freed, given back to the system.
///
/// glibc keeps the memory `free` returns in its arenas for later allocations: a server that
/// held thousands of connections (libzmq allocates each one's pipes and buffers on its I/O
/// thread's arena) keeps their resident memory after they left, scattered between live blocks
/// that the arena's automatic trimming (only the top of each heap) never reaches.
/// ``returnToSystem()`` (`malloc_trim(0)`) releases every free page of every arena. It walks
/// the arenas under their locks, which costs milliseconds on a heap of hundreds of megabytes:
/// call it after many connections left, not on a hot path.
///
/// ```swift
/// if departedSinceTrim >= 64 { FreedMemory.returnToSystem() }
/// ```
public enum FreedMemory {
    /// Gives the free pages of every malloc arena back to the system (`malloc_trim(0)`).
    /// - Returns: Whether some memory was released.
    @discardableResult
    public static func returnToSystem() -> Bool {
        kinesia_malloc_trim() == 1
    }
}
