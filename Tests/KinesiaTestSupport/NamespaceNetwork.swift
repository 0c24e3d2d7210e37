import Foundation
import Glibc
import Synchronization

/// Several "hosts" on one machine for tests of a deployment over several boxes: each host is a
/// Linux network namespace of its own, and every host is joined to a hub host by a veth pair
/// whose hub end is a port of a bridge, as boxes plugged into one switch:
///
/// ```text
///  ingest 10.77.0.2 --veth--+
///  worker 10.77.0.3 --veth--+-- br0 10.77.0.1 (hub: the broker)
///  consumer 10.77.0.4 -veth-+
/// ```
///
/// The addresses exist only inside the namespaces (the test process's own network namespace
/// never sees them, and nothing is routed out), and every interface is created directly inside
/// a namespace, never in the machine's own. Every host has its loopback up.
///
/// ```swift
/// let network = try NamespaceNetwork(hub: "broker", hosts: ["ingest", "consumer"])
/// defer { network.tearDown() }
/// let broker = try KinesiaProcess(
///     "broker", ["broker", "--bus", "tcp://\(network.hubAddress):5555"], directory: directory,
///     launcher: network.launcher(for: "broker"))
/// ```
///
/// **Cleanup is guaranteed three ways.** ``tearDown()`` (call it in a `defer`; `deinit` calls it
/// too) kills every process still inside the namespaces and deletes them, which deletes their
/// interfaces. Every process started through ``launcher(for:)`` runs under `timeout`, so it ends
/// by itself after ``processLifetime`` even when the test process was killed and no `defer` ran.
/// And names are unique per run (`kntest-<pid>-<n>-<host>`): the first network a test process
/// makes sweeps the namespaces left by runs whose process is gone (``sweepStaleNamespaces()``).
///
/// Needs root (or `CAP_SYS_ADMIN` and `CAP_NET_ADMIN`), iproute2 and coreutils' `timeout`;
/// ``unavailableReason`` says what is missing, ``howToRun`` what to do.
package final class NamespaceNetwork: Sendable {
    /// The prefix of every namespace these tests create; nothing else is ever deleted.
    package static let prefix = "kntest-"

    /// The longest a process started through ``launcher(for:)`` may run before `timeout` ends it
    /// (SIGTERM, SIGKILL 5 s later).
    package static let processLifetime = 300

    /// What to do to run the tests that need namespaces.
    package static let howToRun =
        "the tests between hosts in network namespaces need root and iproute2 (`ip netns`); run them as "
        + "root: `sudo swift test --filter NamespaceHostTests` or `scripts/test` (CI runs it as root); "
        + "KINESIA_NAMESPACE_TESTS=skip skips them on purpose"

    /// Why namespace tests cannot run here (not root, no `ip`, no `timeout`), or `nil`; a
    /// ``Failure`` with it says how to run them.
    package static var unavailableReason: String? {
        if geteuid() != 0 { return "not root (uid \(geteuid()))" }
        if ip == nil { return "no `ip` (iproute2) in /usr/sbin, /sbin, /usr/bin or /bin" }
        if timeout == nil { return "no `timeout` (coreutils) in /usr/bin or /bin" }
        return nil
    }

    /// Whether the environment asks to skip the namespace tests (`KINESIA_NAMESPACE_TESTS=skip`).
    package static var skippedOnPurpose: Bool {
        ProcessInfo.processInfo.environment["KINESIA_NAMESPACE_TESTS"] == "skip"
    }

    /// A step of making or using the network failed.
    package struct Failure: Error, CustomStringConvertible {
        /// What failed, with the command's output.
        package var message: String

        /// A failure saying `message`, then how to run the tests.
        package init(message: String) { self.message = message }

        package var description: String { "\(message): \(NamespaceNetwork.howToRun)" }
    }

    /// One host.
    package struct Host: Sendable, Hashable {
        /// The name the test gave it.
        package var name: String
        /// Its network namespace (`ip netns list`).
        package var namespace: String
        /// Its IPv4 address on the test network.
        package var address: String
    }

    /// The hub: its address is on the bridge every other host is plugged into.
    package let hub: Host
    /// Every host by name, the hub included.
    package let hosts: [String: Host]
    /// The namespaces made so far (and not yet deleted), hub first.
    private let namespaces = Mutex<[String]>([])

    /// The hub's address, the one every other host reaches it at.
    package var hubAddress: String { hub.address }

    /// Makes the hub and the other hosts, each in a new namespace, and joins them.
    ///
    /// - Parameters:
    ///   - hub: The hub's name.
    ///   - others: The other hosts' names, at most 200; each at most 12 bytes of `a-z 0-9 -`.
    /// - Throws: ``Failure`` when a command fails; whatever was made is deleted first.
    package init(hub hubName: String, hosts others: [String]) throws(Failure) {
        if let reason = Self.unavailableReason { throw Failure(message: reason) }
        precondition(others.count <= 200 && Set(others + [hubName]).count == others.count + 1)
        for name in others + [hubName] {
            precondition(
                (1...12).contains(name.utf8.count)
                    && name.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 45 },
                "host name \(name): 1 to 12 of a-z 0-9 -")
        }
        Self.sweepOnce()
        let run = "\(Self.prefix)\(getpid())-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        hub = Host(name: hubName, namespace: "\(run)-\(hubName)", address: "10.77.0.1")
        var all = [hubName: hub]
        for (index, name) in others.enumerated() {
            all[name] = Host(name: name, namespace: "\(run)-\(name)", address: "10.77.0.\(index + 2)")
        }
        hosts = all
        do {
            try make(others: others)
        } catch {
            tearDown()
            throw error
        }
    }

    deinit { tearDown() }

    private func make(others: [String]) throws(Failure) {
        for host in [hub] + others.map({ hosts[$0]! }) {
            namespaces.withLock { $0.append(host.namespace) }
            try Self.ip(["netns", "add", host.namespace])
            try Self.ip(["-n", host.namespace, "link", "set", "lo", "up"])
        }
        try Self.ip(["-n", hub.namespace, "link", "add", "br0", "type", "bridge"])
        try Self.ip(["-n", hub.namespace, "addr", "add", "\(hub.address)/24", "dev", "br0"])
        try Self.ip(["-n", hub.namespace, "link", "set", "br0", "up"])
        for name in others {
            let host = hosts[name]!
            // Both ends are made inside their namespaces: the machine's own never has them.
            let port = "p-\(name)"
            try Self.ip([
                "-n", hub.namespace, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns",
                host.namespace,
            ])
            try Self.ip(["-n", hub.namespace, "link", "set", port, "master", "br0"])
            try Self.ip(["-n", hub.namespace, "link", "set", port, "up"])
            try Self.ip(["-n", host.namespace, "addr", "add", "\(host.address)/24", "dev", "eth0"])
            try Self.ip(["-n", host.namespace, "link", "set", "eth0", "up"])
        }
    }

    /// The host called `name`.
    package subscript(name: String) -> Host {
        guard let host = hosts[name] else { preconditionFailure("no host \(name) in \(hosts.keys.sorted())") }
        return host
    }

    /// The command that runs a program on host `name`: `ip netns exec NS timeout ...`, followed
    /// by the program and its arguments. `ip` joins the namespace and execs `timeout` in its
    /// place, which forwards SIGTERM and SIGINT to the program and ends it after
    /// ``processLifetime`` seconds.
    package func launcher(for name: String) -> [String] {
        [
            Self.ip!, "netns", "exec", self[name].namespace, Self.timeout!, "--kill-after=5",
            "\(Self.processLifetime)",
        ]
    }

    /// The pids of the processes inside host `name`'s namespace.
    package func processes(on name: String) -> [Int32] {
        Self.pids(in: self[name].namespace)
    }

    /// Kills every process still inside the namespaces (SIGKILL), then deletes the namespaces
    /// and with them their interfaces. Idempotent; synchronous, for `defer`.
    ///
    /// - Returns: The namespaces it could not delete (none, normally).
    @discardableResult
    package func tearDown() -> [String] {
        let all = namespaces.withLock { names in
            defer { names = [] }
            return names
        }
        return all.filter { !Self.delete(namespace: $0) }
    }

    /// The namespaces of this machine whose names start with ``prefix``.
    package static func existingNamespaces() -> [String] {
        guard let ip, let list = try? TestProcess.run(ip, ["netns", "list"], environment: [:]),
            list.status == 0
        else { return [] }
        // `NAME` or `NAME (id: N)`.
        return list.output.split(separator: "\n").compactMap { line in
            let name = String(line.split(separator: " ").first ?? "")
            return name.hasPrefix(prefix) ? name : nil
        }
    }

    /// Deletes the namespaces of earlier runs whose test process is gone (their name holds its
    /// pid: `kntest-<pid>-...`), after killing the processes still in them. Namespaces of a
    /// process still running (another test run) are left alone.
    ///
    /// - Returns: The namespaces deleted.
    @discardableResult
    package static func sweepStaleNamespaces() -> [String] {
        existingNamespaces().filter { name in
            let owner = name.dropFirst(prefix.count).split(separator: "-").first.flatMap { Int32($0) }
            guard let owner, owner != getpid(), kill(owner, 0) != 0, errno == ESRCH else { return false }
            return delete(namespace: name)
        }
    }

    // MARK: - Commands

    private static let counter = Atomic<Int>(0)
    private static let swept = Mutex<Bool>(false)

    private static func sweepOnce() {
        swept.withLock { done in
            guard !done else { return }
            done = true
            sweepStaleNamespaces()
        }
    }

    private static func executable(_ name: String, in directories: [String]) -> String? {
        directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// iproute2's `ip`, or `nil`.
    package static let ip = executable("ip", in: ["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
    private static let timeout = executable("timeout", in: ["/usr/bin", "/bin"])

    /// Runs `ip ARGUMENTS`; throws with its output unless it succeeds.
    private static func ip(_ arguments: [String]) throws(Failure) {
        guard let ip else { throw Failure(message: "no ip") }
        let result: (status: Int32, output: String)
        do {
            result = try TestProcess.run(ip, arguments, environment: [:])
        } catch {
            throw Failure(message: "ip \(arguments.joined(separator: " ")): \(error)")
        }
        guard result.status == 0 else {
            throw Failure(
                message: "ip \(arguments.joined(separator: " ")) exited \(result.status): \(result.output)")
        }
    }

    private static func pids(in namespace: String) -> [Int32] {
        guard let ip, let result = try? TestProcess.run(ip, ["netns", "pids", namespace], environment: [:])
        else { return [] }
        return result.output.split(separator: "\n").compactMap { Int32($0) }
    }

    /// Kills the processes inside `namespace` until none is left (a killed `timeout` leaves its
    /// program behind for a moment), then deletes it.
    private static func delete(namespace: String) -> Bool {
        for _ in 0..<50 {
            let inside = pids(in: namespace)
            if inside.isEmpty { break }
            for pid in inside { kill(pid, SIGKILL) }
            usleep(20_000)
        }
        return (try? ip(["netns", "delete", namespace])) != nil
    }
}
