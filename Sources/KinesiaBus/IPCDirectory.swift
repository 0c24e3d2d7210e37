import CZeroMQ
import Foundation
import Synchronization

/// A new private directory (mode 0700) for IPC endpoints, made by ``makeTemporary(in:prefix:)``.
///
/// There is no way to adopt an existing directory here: a bus directory that may already exist
/// is checked (owner, mode, no link) and never changed by `BusAddress.prepare()` of
/// KinesiaClient.
///
/// An IPC socket file takes the process umask, and a second bind on the same path silently
/// takes it over; keeping a deployment's socket files in a directory that only its user can
/// enter makes both harmless. Bind inside it with ``ZMQSocket/bindRestricted(_:umask:)`` so the
/// socket files themselves are private too.
///
/// ```swift
/// let directory = try IPCDirectory.makeTemporary()
/// let endpoint = try directory.endpoint("broker-frontend")   // "ipc:///tmp/kinesia.Xa3b9Q/broker-frontend"
/// try frontend.bindRestricted(endpoint)
/// // ...
/// directory.remove()
/// ```
public struct IPCDirectory: Hashable, Sendable {
    /// The longest IPC path Linux accepts (`sizeof(sun_path) - 1`).
    public static let maximumPathLength = 107

    /// The directory's absolute path.
    public let path: String

    private init(created path: String) {
        self.path = path
    }

    /// Makes a new, uniquely named private directory (`mkdtemp`, mode 0700).
    ///
    /// - Parameters:
    ///   - parent: Where to make it: `$XDG_RUNTIME_DIR` if set, else `/tmp`.
    ///   - prefix: The start of the directory's name.
    /// - Throws: ``ZMQError`` with the system's `errno`.
    public static func makeTemporary(in parent: String? = nil, prefix: String = "kinesia") throws(ZMQError)
        -> IPCDirectory
    {
        let base =
            parent ?? ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "/tmp"
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { throw ZMQError.lastSystemError() }
        return IPCDirectory(
            created: String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// The IPC endpoint of a socket file named `name` in this directory.
    ///
    /// - Throws: ``ZMQError/invalidArgument`` if `name` is empty or holds a `/`,
    ///   ``ZMQError/nameTooLong`` if the path exceeds ``maximumPathLength`` bytes.
    public func endpoint(_ name: String) throws(ZMQError) -> String {
        guard !name.isEmpty, !name.contains("/"), !name.utf8.contains(0) else {
            throw ZMQError.invalidArgument
        }
        let file = "\(path)/\(name)"
        guard file.utf8.count <= Self.maximumPathLength else { throw ZMQError.nameTooLong }
        return "ipc://\(file)"
    }

    /// Removes the directory and everything in it (the socket files). Errors are ignored: the
    /// directory may already be gone.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Serialises the umask changes of ``ZMQSocket/bindRestricted(_:umask:)``.
private let umaskLock = Mutex(())

extension ZMQSocket {
    /// Binds with the process umask set to `umask` for the duration of the bind only, so an IPC
    /// socket file is made without group or other permissions.
    ///
    /// The umask is process-wide: a file that another thread creates during the bind also gets
    /// it (it can only be stricter). Binds through this method are serialised with each other.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint (usually from ``IPCDirectory/endpoint(_:)``).
    ///   - umask: The mask during the bind; `0o077` leaves the owner's permissions only.
    /// - Returns: The bound endpoint.
    /// - Throws: As ``bind(_:)``.
    @discardableResult
    public func bindRestricted(_ endpoint: String, umask: UInt32 = 0o077) throws(ZMQError) -> String {
        try umaskLock.withLock { _ throws(ZMQError) -> String in
            let previous = kinesia_umask(mode_t(umask))
            defer { _ = kinesia_umask(previous) }
            return try bind(endpoint)
        }
    }
}
