import Foundation
import KinesiaBus
import KinesiaJSON
import KinesiaMotion
import KinesiaSystem

/// Where the broker of a deployment is: the one address every `kinesia` process takes.
///
/// - `--bus DIR`: IPC sockets in the directory `DIR` (made with mode 0700 if missing; an
///   existing one must be the running user's, with mode 0700, and is never changed):
///   publishers connect to `DIR/pub.sock` (the broker's XSUB frontend), subscribers to
///   `DIR/sub.sock` (its XPUB backend). The broker also keeps `DIR/broker.lock`.
/// - `--bus tcp://HOST:PORT`: publishers connect to `tcp://HOST:PORT`, subscribers to
///   `tcp://HOST:PORT+1`; the broker binds both (use `0.0.0.0` to listen on every interface).
///
/// Without `--bus`, the `KINESIA_BUS` environment variable is used (`kinesia up` and the
/// systemd units set it), else `$XDG_RUNTIME_DIR/kinesia`, else `/tmp/kinesia-<uid>`.
///
/// ```swift
/// let bus = try BusAddress(parsing: "/run/kinesia")
/// bus.publisherEndpoint    // "ipc:///run/kinesia/pub.sock"
/// bus.subscriberEndpoint   // "ipc:///run/kinesia/sub.sock"
/// try BusAddress(parsing: "tcp://10.0.0.5:5555").subscriberEndpoint   // "tcp://10.0.0.5:5556"
/// ```
public struct BusAddress: Hashable, Sendable, CustomStringConvertible {
    /// The transport and its place.
    public enum Kind: Hashable, Sendable {
        /// IPC socket files in a private directory (absolute path).
        case directory(String)
        /// TCP: the broker's publisher side at `port`, its subscriber side at `port + 1`.
        case tcp(host: String, port: Int)
    }

    /// The file name of the broker's frontend (publishers connect) in a bus directory.
    public static let publisherFileName = "pub.sock"
    /// The file name of the broker's backend (subscribers connect) in a bus directory.
    public static let subscriberFileName = "sub.sock"
    /// The file name of the coordinator's control socket (commands, pool workers) in a bus
    /// directory.
    public static let controlFileName = "control.sock"
    /// The file name of the broker's lock in a bus directory.
    public static let lockFileName = "broker.lock"

    /// Where the bus is.
    public let kind: Kind
    /// How clients authenticate to a TCP broker (CURVE keys); `nil` for an IPC bus, or a TCP bus
    /// run with `--insecure`. Never part of ``description``.
    public var credentials: BusCredentials?

    /// Makes an address from its kind (no checks: prefer ``init(parsing:)``).
    public init(kind: Kind) {
        self.kind = kind
    }

    /// Parses a `--bus` value: a directory (absolute, or relative to the working directory) or
    /// `tcp://HOST:PORT`.
    /// - Throws: ``BusAddressError`` for a malformed TCP address, a port out of range, or a
    ///   directory whose socket paths would exceed the 107-byte IPC limit.
    public init(parsing text: String) throws(BusAddressError) {
        if text.hasPrefix("tcp://") {
            let rest = text.dropFirst("tcp://".count)
            guard let colon = rest.lastIndex(of: ":") else { throw .malformedTCP(text) }
            var host = String(rest[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty, let port = Int(rest[rest.index(after: colon)...]) else {
                throw .malformedTCP(text)
            }
            guard (1...65534).contains(port) else { throw .portOutOfRange(port) }
            kind = .tcp(host: host, port: port)
            return
        }
        guard !text.isEmpty else { throw .emptyDirectory }
        if text.contains("://") { throw .unsupportedTransport(text) }
        var path = text.hasPrefix("/") ? text : FileManager.default.currentDirectoryPath + "/" + text
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        path = URL(fileURLWithPath: path).standardizedFileURL.path
        let longest =
            path.utf8.count + 1 + max(Self.publisherFileName.utf8.count, Self.subscriberFileName.utf8.count)
        guard longest <= IPCDirectory.maximumPathLength else {
            throw .pathTooLong(path, length: longest, limit: IPCDirectory.maximumPathLength)
        }
        kind = .directory(path)
    }

    /// The address a command uses: `--bus` if given, else `KINESIA_BUS`, else the per-user default.
    /// - Parameters:
    ///   - option: The value of `--bus`, if any.
    ///   - environment: The process environment.
    /// - Throws: ``BusAddressError``, as ``init(parsing:)``.
    public static func resolve(_ option: String?, environment: [String: String]) throws(BusAddressError)
        -> BusAddress
    {
        if let option { return try BusAddress(parsing: option) }
        if let value = environment["KINESIA_BUS"], !value.isEmpty { return try BusAddress(parsing: value) }
        return try BusAddress(parsing: defaultDirectory(environment: environment))
    }

    /// `$XDG_RUNTIME_DIR/kinesia` when `XDG_RUNTIME_DIR` is set, else `/tmp/kinesia-<uid>`.
    public static func defaultDirectory(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/kinesia"
        }
        return "/tmp/kinesia-\(ProcessIdentity.userID)"
    }

    /// The bus directory, or `nil` over TCP.
    public var directory: String? {
        if case .directory(let path) = kind { return path }
        return nil
    }

    /// Where publishers connect and the broker binds its XSUB frontend.
    public var publisherEndpoint: String {
        switch kind {
        case .directory(let path): "ipc://\(path)/\(Self.publisherFileName)"
        case .tcp(let host, let port): "tcp://\(Self.bracketed(host)):\(port)"
        }
    }

    /// Where subscribers connect and the broker binds its XPUB backend.
    public var subscriberEndpoint: String {
        switch kind {
        case .directory(let path): "ipc://\(path)/\(Self.subscriberFileName)"
        case .tcp(let host, let port): "tcp://\(Self.bracketed(host)):\(port + 1)"
        }
    }

    /// Where the coordinator binds its control socket (a ROUTER) and commands and pool workers
    /// connect: `control.sock` in the directory, or TCP `port + 2`.
    public var controlEndpoint: String {
        switch kind {
        case .directory(let path): "ipc://\(path)/\(Self.controlFileName)"
        case .tcp(let host, let port): "tcp://\(Self.bracketed(host)):\(port + 2)"
        }
    }

    /// Where the broker of a TCP bus with keys binds its replay port (a ROUTER behind the same
    /// CURVE key, ZAP handler and rights as the bus) and replay clients and servers connect:
    /// TCP `port + 3`. `nil` for a bus directory (replay stays direct on one box: see
    /// `docs/wire-format.md`, section 11) and for a port above 65532.
    public var replayEndpoint: String? {
        guard case .tcp(let host, let port) = kind, port + 3 <= 65535 else { return nil }
        return "tcp://\(Self.bracketed(host)):\(port + 3)"
    }

    /// The directory, or `tcp://HOST:PORT`, as `--bus` takes it.
    public var description: String {
        switch kind {
        case .directory(let path): path
        case .tcp(let host, let port): "tcp://\(Self.bracketed(host)):\(port)"
        }
    }

    /// Makes the bus directory (mode 0700) when the bus is IPC and it is missing, or checks the
    /// existing one; nothing over TCP.
    ///
    /// The directory must be a real directory (a symbolic link is never followed), owned by the
    /// running user, without group or other permissions; so must the broker's files in it
    /// (``publisherFileName``, ``subscriberFileName``, ``lockFileName``) when they exist. An
    /// existing directory is never changed: a loose one is refused, not `chmod`ed.
    /// - Throws: ``BusAddressError/directoryUnusable(_:reason:)`` when it cannot be made, or
    ///   is not a private directory of the running user.
    public func prepare() throws(BusAddressError) {
        guard let directory else { return }
        do {
            let opened = try PrivateDirectory.open(directory, creating: true)
            for name in [Self.publisherFileName, Self.subscriberFileName, Self.lockFileName] {
                try opened.checkEntry(name)
            }
        } catch {
            throw .directoryUnusable(directory, reason: error.description)
        }
    }

    private static func bracketed(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }
}

/// Why a `--bus` value cannot be used.
public enum BusAddressError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `tcp://` without `HOST:PORT`.
    case malformedTCP(String)
    /// A port outside 1...65534 (the subscriber side needs PORT+1).
    case portOutOfRange(Int)
    /// An empty directory.
    case emptyDirectory
    /// A transport other than a directory or `tcp://`.
    case unsupportedTransport(String)
    /// The IPC socket paths would be longer than the system allows.
    case pathTooLong(String, length: Int, limit: Int)
    /// The directory cannot be made or used.
    case directoryUnusable(String, reason: String)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .malformedTCP(let text): "invalid bus address \(text.quotedExcerpt()): expected tcp://HOST:PORT"
        case .portOutOfRange(let port):
            "invalid bus port \(port): expected 1...65534 (subscribers use PORT+1)"
        case .emptyDirectory: "the bus directory is empty"
        case .unsupportedTransport(let text):
            "unsupported bus address \(text.quotedExcerpt()): expected a directory or tcp://HOST:PORT"
        case .pathTooLong(let path, let length, let limit):
            "bus directory \(path) is too long for IPC sockets: its socket paths take \(length) bytes, "
                + "the system allows \(limit); choose a shorter directory"
        case .directoryUnusable(let path, let reason):
            "cannot use bus directory \(path): \(reason); use a directory of your own with mode 0700 "
                + "(--bus DIR, or set KINESIA_BUS or XDG_RUNTIME_DIR)"
        }
    }
}
