public import Foundation
import Glibc

/// The name the kernel knows a thread by: what `top -H`, `ps -L`, `perf` and
/// `/proc/<pid>/task/<tid>/comm` show. Foundation's `Thread.name` does not reach it on Linux:
/// every thread showed the name of the Dispatch thread that made it (`oot.default-qos`), and a
/// per-thread profile could not tell a worker's loop from its journal's thread.
///
/// ```swift
/// let thread = Thread.named("kinesia.journal-write") { loop() }   // the kernel: journal-write
/// thread.start()
/// ```
public enum KernelThreadName {
    /// The most bytes of a name the kernel keeps.
    public static let maximumBytes = 15

    /// `name` as the kernel keeps it: without the `kinesia.` or `kinesia-` every one of the
    /// package's threads has (the process's name says it), cut to ``maximumBytes`` bytes of
    /// whole characters.
    public static func kernelName(_ name: String) -> String {
        var kept = Substring(name)
        for prefix in ["kinesia.", "kinesia-"] where kept.hasPrefix(prefix) && kept.count > prefix.count {
            kept = kept.dropFirst(prefix.count)
        }
        var result = ""
        for character in kept {
            guard result.utf8.count + character.utf8.count <= maximumBytes else { break }
            result.append(character)
        }
        return result
    }

    /// Names the calling thread ``kernelName(_:)`` of `name` (best effort: a `/proc` that
    /// cannot be written leaves the name as it was).
    public static func set(_ name: String) {
        let descriptor = open(commPath, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(kernelName(name).utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// The calling thread's name, as the kernel has it (empty when `/proc` cannot be read).
    public static var current: String {
        let descriptor = open(commPath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: maximumBytes + 2)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return "" }
        return String(decoding: bytes[..<count].filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    /// The calling thread's name in `/proc` (what `prctl(PR_SET_NAME)` sets, without a variadic
    /// call).
    private static let commPath = "/proc/thread-self/comm"
}

extension Thread {
    /// A thread, not started, that runs `body` named `name` for Foundation and for the kernel
    /// (``KernelThreadName``).
    public static func named(_ name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        let thread = Thread {
            KernelThreadName.set(name)
            body()
        }
        thread.name = name
        return thread
    }
}
