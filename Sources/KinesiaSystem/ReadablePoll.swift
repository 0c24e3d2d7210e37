import Glibc

/// One `poll(2)` of several descriptors for reading, its table kept from one wait to the next
/// (nothing allocated per wait).
///
/// ```swift
/// var poll = ReadablePoll()
/// let pipe = poll.add(descriptor)
/// if try poll.wait(timeout: .milliseconds(100)), poll.isReadable(pipe) { ... }
/// ```
public struct ReadablePoll: Sendable {
    private var entries: [pollfd] = []

    /// An empty table.
    public init() {}

    /// The number of descriptors added.
    public var count: Int { entries.count }

    /// Adds a descriptor to wait for readable.
    ///
    /// - Returns: Its index for ``isReadable(_:)``.
    @discardableResult
    public mutating func add(_ descriptor: Int32) -> Int {
        entries.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        return entries.count - 1
    }

    /// Removes the descriptors added after the first `count` (those at `count` and later).
    public mutating func removeDescriptors(from count: Int) {
        entries.removeSubrange(min(max(count, 0), entries.count)...)
    }

    /// Waits until a descriptor is readable (or hung up, or closed: what a read would tell),
    /// or `timeout` passes (rounded up to milliseconds).
    ///
    /// - Returns: Whether one is (`false`: the time ran out, or a signal interrupted the wait).
    /// - Throws: ``Errno`` (`EINVAL`, `ENOMEM`).
    public mutating func wait(timeout: Duration) throws(Errno) -> Bool {
        let milliseconds = timeout.millisecondsRoundedUp
        let count = nfds_t(entries.count)
        let result = entries.withUnsafeMutableBufferPointer { table in
            poll(table.baseAddress, count, milliseconds)
        }
        if result >= 0 { return result > 0 }
        let code = errno
        if code == EINTR {
            for index in entries.indices { entries[index].revents = 0 }
            return false
        }
        throw Errno(rawValue: code)
    }

    /// Whether the last ``wait(timeout:)`` found descriptor `index` readable (or hung up, or
    /// closed).
    public func isReadable(_ index: Int) -> Bool { entries[index].revents != 0 }
}
