import Foundation
import KinesiaClient
import KinesiaSystem

/// What a broker holds while it serves an IPC bus: the bus directory open and locked, and the
/// identity of the socket files it bound there.
///
/// A second bind on an IPC path silently takes the socket file over, so two brokers on one
/// directory would each serve half of the processes. The lock is an `flock(LOCK_EX | LOCK_NB)`
/// (``FileDescriptor/tryLock()``) on the directory itself, through the descriptor held open:
/// removing or replacing `DIR/broker.lock` cannot release it, so a second broker is refused
/// for as long as the first runs. The kernel releases it when the holder exits, even by
/// SIGKILL, so a crashed broker never blocks the next. `DIR/broker.lock` holds the holder's
/// pid, for the message (and is locked too, for a broker of an older version that locks only
/// the file).
///
/// Everything in the directory is reached relative to the open descriptor, never through a
/// symbolic link, and checked (``PrivateDirectory``): the directory and its files must be the
/// running user's, without group or other permissions. At the stop, a socket file is removed
/// only if it is still the one this broker bound (same device and inode).
final class BrokerLock {
    /// The bus directory.
    let directory: String
    /// The open directory, locked until ``release()``, closed with this object.
    private let held: PrivateDirectory
    /// The open pid file, locked until ``release()``, closed with this object.
    private let pidFile: FileDescriptor
    /// Whether the locks are held.
    private var isLocked = true
    /// The socket files bound by this broker, by name.
    private var sockets: [String: FileStatus] = [:]

    /// Takes the lock, or fails at once if another process holds it.
    /// - Throws: ``BrokerError`` naming the other broker's pid, a directory or file
    ///   that is not private to the user, or the system error.
    init(directory: String) throws(BrokerError) {
        self.directory = directory
        let opened: PrivateDirectory
        do {
            opened = try PrivateDirectory.open(directory, creating: true)
        } catch {
            throw Self.unusable(directory, error)
        }
        let pidFile: FileDescriptor
        do {
            pidFile = try opened.openFile(BusAddress.lockFileName, .readWrite.creating)
        } catch {
            throw Self.unusable(directory, error)
        }
        var locked: Bool
        do {
            locked = try opened.descriptor.tryLock()
            if locked { locked = try pidFile.tryLock() }
        } catch {
            throw BrokerError("cannot lock \(directory): \(error)")
        }
        guard locked else {
            let bytes = (try? pidFile.read(upTo: 32)) ?? []
            let pid = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw BrokerError(
                "another broker already serves \(directory)"
                    + (pid.isEmpty || !pid.allSatisfy(\.isNumber) ? "" : " (pid \(pid))")
                    + "; stop it first, or give this one another --bus")
        }
        // The pid is for the message of a second broker only: a failure to write it is ignored.
        try? pidFile.truncate(to: 0)
        try? pidFile.write(Array("\(ProcessIdentity.id)\n".utf8), at: 0)
        self.pidFile = consume pidFile
        held = consume opened
    }

    /// Records the identity (device and inode) of the socket files just bound, so that
    /// ``removeSockets()`` removes these and no other.
    ///
    /// - Throws: ``BrokerError`` when one is missing or not private to the user.
    func recordSockets(_ names: [String]) throws(BrokerError) {
        for name in names {
            let status: FileStatus?
            do {
                status = try held.checkEntry(name)
            } catch {
                throw Self.unusable(directory, error)
            }
            guard let status, status.kind == .socket else {
                throw BrokerError("\(directory)/\(name) is not the socket this broker bound")
            }
            sockets[name] = status
        }
    }

    /// Removes the socket files this broker bound, each only if it is still the same file:
    /// one that another process put there since is left alone.
    func removeSockets() {
        for (name, status) in sockets {
            held.removeEntry(name, ifStill: status)
        }
        sockets = [:]
    }

    /// Releases the lock (the pid file stays: removing it would not matter, the lock is the
    /// directory's).
    func release() {
        guard isLocked else { return }
        isLocked = false
        try? pidFile.unlock()
        try? held.descriptor.unlock()
    }

    /// The failure for a directory or file that ``PrivateDirectory`` refuses (the words of
    /// ``BusAddressError/directoryUnusable(_:reason:)``, as every other command says them).
    private static func unusable(_ directory: String, _ error: PrivateDirectoryError) -> BrokerError {
        BrokerError(BusAddressError.directoryUnusable(directory, reason: error.description).description)
    }

    deinit {
        release()
    }
}
