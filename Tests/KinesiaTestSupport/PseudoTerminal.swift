import CKinesiaPseudoTerminal
import Glibc
package import KinesiaSystem

/// A pseudo-terminal pair standing in for a serial wearable: the test holds the controller
/// side (what the wearable reads), the code under test opens ``path`` (`/dev/pts/N`) as its
/// serial port. Closing the controller (the value going away) is the wearable unplugged: writes
/// on the other side then fail with `EIO`.
package struct PseudoTerminal: ~Copyable {
    /// The controller side.
    package let controller: FileDescriptor
    /// The path of the other side.
    package let path: String

    /// Opens a new pair.
    /// - Throws: ``Errno`` when no pseudo-terminal can be made.
    package init() throws {
        var name = [CChar](repeating: 0, count: 64)
        let fd = kinesia_open_pseudo_terminal(&name, name.count)
        guard fd >= 0 else { throw Errno.current }
        controller = FileDescriptor(owning: fd)
        path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Reads until `count` bytes came, or `timeout` passed without any.
    package func read(_ count: Int, timeout: Duration = .seconds(5)) throws -> String {
        var bytes: [UInt8] = []
        while bytes.count < count {
            guard try controller.waitUntilReadable(timeout: timeout) else { break }
            var buffer = [UInt8](repeating: 0, count: count - bytes.count)
            guard case .bytes(let read) = try controller.read(into: &buffer) else { break }
            bytes += buffer.prefix(read)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// What arrives within `timeout` (at least what is there), as text; empty when nothing came.
    /// Before the other side is first opened, and after it is closed, the controller reads
    /// `EIO` (and polls as readable at once): that is nothing, not an error.
    package func readAvailable(timeout: Duration) throws -> String {
        var bytes: [UInt8] = []
        var wait = timeout
        do {
            while try controller.waitUntilReadable(timeout: wait) {
                var buffer = [UInt8](repeating: 0, count: 4096)
                guard case .bytes(let read) = try controller.read(into: &buffer), read > 0 else { break }
                bytes += buffer.prefix(read)
                wait = .zero
            }
        } catch {
            // EIO: no one has the other side open.
            guard error.rawValue == EIO else { throw error }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
