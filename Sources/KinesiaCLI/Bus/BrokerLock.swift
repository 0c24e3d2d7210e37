import Foundation
import Glibc
import KinesiaClient

/// The exclusive lock a broker holds on `DIR/broker.lock` while it serves an IPC bus.
///
/// A second bind on an IPC path silently takes the socket file over, so two brokers on one
/// directory would each serve half of the processes. `flock(LOCK_EX | LOCK_NB)` refuses the
/// second one; the kernel releases the lock when the holder exits, even by SIGKILL, so a
/// crashed broker never blocks the next. The file holds the holder's pid, for the message.
final class BrokerLock {
    /// The lock file.
    let path: String
    private var descriptor: Int32

    /// Takes the lock, or fails at once if another process holds it.
    /// - Throws: ``CLIError/failure(_:)`` naming the other broker's pid, or the system error.
    init(directory: String) throws(CLIError) {
        path = directory + "/" + BusAddress.lockFileName
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CLIError.failure("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = read(descriptor, &buffer, buffer.count)
            close(descriptor)
            guard code == EWOULDBLOCK else {
                throw CLIError.failure("cannot lock \(path): \(String(cString: strerror(code)))")
            }
            let pid = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            throw CLIError.failure(
                "another broker already serves \(directory)"
                    + (pid.isEmpty ? "" : " (pid \(pid))")
                    + "; stop it first, or give this one another --bus")
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, text, text.count, 0)
        self.descriptor = descriptor
    }

    /// Releases the lock (the file stays: removing it could let two brokers lock two files).
    func release() {
        guard descriptor >= 0 else { return }
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit {
        release()
    }
}
