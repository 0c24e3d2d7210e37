import Foundation
import Glibc

/// A packet capture with Debian's `tcpdump` on one host of a ``NamespaceNetwork``: every TCP
/// packet on every interface of that host (`-i any`), whole (`-s 0`), written to a pcap file as
/// it arrives (`-U`), so the test can look for what an eavesdropper on the wire would see.
///
/// ```swift
/// let capture = try await PacketCapture.start(on: "broker", of: network, into: directory + "/wire.pcap")
/// ... traffic ...
/// await capture.stop()
/// #expect(capture.contains("repCompleted") == false)
/// ```
package final class PacketCapture: Sendable {
    /// The pcap file.
    package let path: String
    /// `tcpdump`'s standard error: its "listening on" line, its packet counts, its errors.
    package let errorPath: String
    private let process: TestProcess

    private init(path: String, errorPath: String, process: TestProcess) {
        self.path = path
        self.errorPath = errorPath
        self.process = process
    }

    /// The capture cannot start.
    package struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with `tcpdump`'s output.
        package var description: String
    }

    /// `tcpdump` from Debian's package of that name (`scripts/setup` installs it).
    package static let tcpdump = ["/usr/bin/tcpdump", "/usr/sbin/tcpdump"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Starts `tcpdump` on host `host` and waits until it captures.
    ///
    /// - Throws: ``Failure`` when `tcpdump` is missing or does not start capturing within 10 s.
    package static func start(
        on host: String, of network: NamespaceNetwork, into path: String
    ) async throws -> PacketCapture {
        guard let tcpdump else {
            throw Failure(
                description: "no tcpdump in /usr/bin or /usr/sbin: run scripts/setup (Debian's tcpdump)")
        }
        let launcher = network.launcher(for: host)
        let errorPath = path + ".err"
        // `-Z root`: Debian's tcpdump otherwise drops to its own user before writing the file,
        // which cannot write in the test's owner-only directory.
        let process = try TestProcess(
            executable: launcher[0],
            arguments: Array(launcher.dropFirst()) + [
                tcpdump, "-i", "any", "-n", "-s", "0", "-U", "-Z", "root", "-w", path, "tcp",
            ],
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"], standardError: errorPath)
        let capture = PacketCapture(path: path, errorPath: errorPath, process: process)
        let listening = await waitUntil(timeout: .seconds(10)) {
            TestProcess.readFile(errorPath).contains("listening on") || !process.isRunning
        }
        guard listening, process.isRunning else {
            await capture.stop()
            throw Failure(description: "tcpdump did not start: \(TestProcess.readFile(errorPath))")
        }
        return capture
    }

    /// Stops the capture (SIGINT: `tcpdump` writes what it holds and exits).
    package func stop() async {
        process.send(SIGINT)
        if await process.waitForExit(timeout: .seconds(5)) == nil { await process.stop(grace: .seconds(1)) }
    }

    /// The pcap file's bytes (headers and packets).
    package var bytes: [UInt8] {
        Array(FileManager.default.contents(atPath: path) ?? Data())
    }

    /// How many packets `tcpdump` says it captured (its "N packets captured" line after
    /// ``stop()``), or `nil` before.
    package var packetCount: Int? {
        let text = TestProcess.readFile(errorPath)
        guard let match = text.firstMatch(of: /([0-9]+) packets? captured/) else { return nil }
        return Int(match.1)
    }

    /// The strings of `needles` that occur in the capture as UTF-8 bytes.
    package func occurrences(of needles: [String]) -> [String] {
        let haystack = bytes
        return haystack.withUnsafeBytes { haystack in
            needles.filter { needle in
                let pattern = Array(needle.utf8)
                return !pattern.isEmpty && pattern.withUnsafeBytes { Self.find($0, in: haystack) }
            }
        }
    }

    /// Whether `pattern` occurs in `haystack` (`memchr` for its first byte, then `memcmp`: fast
    /// even in a debug build).
    private static func find(_ pattern: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let base = haystack.baseAddress, let first = pattern.first, pattern.count <= haystack.count
        else {
            return false
        }
        let last = base + (haystack.count - pattern.count)
        var cursor = base
        while cursor <= last {
            guard let hit = memchr(cursor, Int32(first), last - cursor + 1) else { return false }
            if memcmp(hit, pattern.baseAddress!, pattern.count) == 0 { return true }
            cursor = UnsafeRawPointer(hit) + 1
        }
        return false
    }

    /// The 8-byte values of `patterns` (read little-endian) that occur anywhere in the capture,
    /// at any alignment: for Float64 numbers as they travel in binary records.
    package func occurrences(ofLittleEndian patterns: Set<UInt64>) -> Set<UInt64> {
        let haystack = bytes
        guard haystack.count >= 8 else { return [] }
        // A filter on 16 bits of each value spares the set lookup at almost every offset.
        var filter = [Bool](repeating: false, count: 1 << 16)
        for pattern in patterns { filter[Int(truncatingIfNeeded: pattern >> 24) & 0xFFFF] = true }
        var found: Set<UInt64> = []
        haystack.withUnsafeBytes { bytes in
            for offset in 0...(bytes.count - 8) {
                let value = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                if filter[Int(truncatingIfNeeded: value >> 24) & 0xFFFF], patterns.contains(value) {
                    found.insert(value)
                }
            }
        }
        return found
    }
}
