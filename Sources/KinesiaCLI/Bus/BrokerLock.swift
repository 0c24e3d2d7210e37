import Foundation
import Glibc
import KinesiaClient
import KinesiaSystem

/// The exclusive lock a broker holds on `DIR/broker.lock` while it serves an IPC bus.
///
/// A second bind on an IPC path silently takes the socket file over, so two brokers on one
/// directory would each serve half of the processes. `flock(LOCK_EX | LOCK_NB)`
/// (``FileDescriptor/tryLock()``) refuses the second one; the kernel releases the lock when the
/// holder exits, even by SIGKILL, so a crashed broker never blocks the next. The file holds the
/// holder's pid, for the message.
final class BrokerLock {
    /// The lock file.
    let path: String
    /// The locked file, until ``release()``.
    private var descriptor: FileDescriptor?

    /// Takes the lock, or fails at once if another process holds it.
    /// - Throws: ``CLIError/failure(_:)`` naming the other broker's pid, or the system error.
    init(directory: String) throws(CLIError) {
        path = directory + "/" + BusAddress.lockFileName
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, O_RDWR | O_CREAT, permissions: 0o600)
        } catch {
            throw CLIError.failure("cannot open \(path): \(error)")
        }
        let locked: Bool
        do {
            locked = try descriptor.tryLock()
        } catch {
            throw CLIError.failure("cannot lock \(path): \(error)")
        }
        guard locked else {
            let bytes = (try? descriptor.read(upTo: 32)) ?? []
            let pid = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw CLIError.failure(
                "another broker already serves \(directory)"
                    + (pid.isEmpty ? "" : " (pid \(pid))")
                    + "; stop it first, or give this one another --bus")
        }
        // The pid is for the message of a second broker only: a failure to write it is ignored.
        try? descriptor.truncate(to: 0)
        try? descriptor.write(Array("\(getpid())\n".utf8), at: 0)
        self.descriptor = consume descriptor
    }

    /// Releases the lock (the file stays: removing it could let two brokers lock two files).
    func release() {
        guard let descriptor = descriptor.take() else { return }
        try? descriptor.unlock()
        try? descriptor.close()
    }

    deinit {
        release()
    }
}
