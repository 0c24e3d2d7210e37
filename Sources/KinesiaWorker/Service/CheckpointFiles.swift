import KinesiaJournal
import KinesiaSystem
import KinesiaWire

/// Where a worker keeps its cameras' checkpoints: `STATE/checkpoints/<camera>+<first session's
/// stream id>/<16 digits>.ckpt`, one folder per worker and camera (as ``SessionStarts``), the
/// newest ``kept`` files of each, numbered in the order they were written.
///
/// A file is `KINESIA-CHECKPOINT 1\n`, the payload's length (8 bytes, little-endian), its
/// CRC-32C (4 bytes, little-endian), then the payload; it is written to a temporary name and
/// renamed, so after a kill a file either is whole or is not there (once ``kept`` files are
/// there, the oldest is renamed to the temporary name and written over: no file is made). It
/// is not synced (no sync on the worker's live loop; the kernel writes it back within about
/// 30 s): one that a power cut
/// tore or lost is passed over, like any file that does not read back (damaged, another version,
/// a payload the caller refuses), for an older one, never trusted; with none, the rebuild starts
/// from the sessions' first pose.
struct CheckpointFiles {
    /// The files kept per camera.
    static let kept = 3
    static let magic = Array("KINESIA-CHECKPOINT 1\n".utf8)

    /// `STATE/checkpoints`.
    let directory: String

    init(state: String) throws(WorkerStateError) {
        directory = state + "/checkpoints"
        do {
            try PrivateDirectory.open(directory, creating: true).close()
        } catch {
            throw WorkerStateError("state directory: \(error)")
        }
    }

    static func folderName(camera: String, sessions: [StreamID]) -> String {
        camera + (sessions.first.map { "+\($0)" } ?? "")
    }

    /// The bytes of a file holding `payload`.
    static func file(holding payload: [UInt8]) -> [UInt8] {
        var crc = CRC32C()
        crc.update(payload)
        var bytes = magic
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { bytes += $0 }
        withUnsafeBytes(of: crc.value.littleEndian) { bytes += $0 }
        return bytes + payload
    }

    /// The payload of a file's bytes, or `nil` when they are not a whole checkpoint.
    static func payload(of bytes: [UInt8]) -> [UInt8]? {
        let header = magic.count + 12
        guard bytes.count >= header, Array(bytes.prefix(magic.count)) == magic else { return nil }
        var length: UInt64 = 0
        var expected: UInt32 = 0
        withUnsafeMutableBytes(of: &length) { $0.copyBytes(from: bytes[magic.count..<(magic.count + 8)]) }
        withUnsafeMutableBytes(of: &expected) { $0.copyBytes(from: bytes[(magic.count + 8)..<header]) }
        guard UInt64(bytes.count - header) == UInt64(littleEndian: length) else { return nil }
        let payload = Array(bytes[header...])
        var crc = CRC32C()
        crc.update(payload)
        return crc.value == UInt32(littleEndian: expected) ? payload : nil
    }

    /// Writes `payload` as the newest checkpoint of `camera`'s `sessions`; removes the older
    /// files beyond ``kept``.
    func save(_ payload: [UInt8], camera: String, sessions: [StreamID]) throws(WorkerStateError) {
        let folder = directory + "/" + Self.folderName(camera: camera, sessions: sessions)
        do {
            let opened = try PrivateDirectory.open(folder, creating: true)
            let names = try Self.checkpointNames(in: opened)
            let number = (names.last.flatMap { UInt64($0.dropLast(5)) } ?? 0) &+ 1
            let name = String(repeating: "0", count: max(0, 16 - String(number).count)) + "\(number).ckpt"
            let temporary = name + ".new"
            let bytes = Self.file(holding: payload)
            var older = names
            let file: FileDescriptor
            if older.count >= Self.kept {
                // The oldest file is written over under the temporary name rather than a file
                // made and one deleted: a worker of 64 cameras checkpoints 32 times a second, and
                // the file system's inode allocation for each new file was 4 % of its CPU.
                try opened.descriptor.renameEntry(older.removeFirst(), to: temporary)
                file = try opened.openFile(temporary, .write)
                try file.write(bytes, at: 0)
                try file.truncate(to: bytes.count)
            } else {
                file = try opened.openFile(temporary, .write.creating.truncating)
                try file.write(bytes, at: 0)
            }
            try file.close()
            try opened.descriptor.renameEntry(temporary, to: name)
            for old in (older + [name]).dropLast(Self.kept) {
                try? opened.descriptor.removeEntry(old)
            }
        } catch {
            throw WorkerStateError("cannot write a checkpoint of \(camera) in \(folder): \(error)")
        }
    }

    /// The newest checkpoint of `camera`'s `sessions` that reads back and that `accept` takes
    /// (it returns `nil` for a payload it refuses), and how many newer files were passed over.
    func newest<Value>(camera: String, sessions: [StreamID], accept: ([UInt8]) -> Value?) -> (
        value: Value?, passedOver: Int
    ) {
        let folder = directory + "/" + Self.folderName(camera: camera, sessions: sessions)
        guard let opened = try? PrivateDirectory.open(folder, creating: false),
            let names = try? Self.checkpointNames(in: opened)
        else { return (nil, 0) }
        var passedOver = 0
        for name in names.reversed() {
            if let file = try? opened.openFile(name, .read),
                let size = try? file.size(), size <= 1 << 28,
                let bytes = try? file.read(upTo: size, at: 0), let payload = Self.payload(of: bytes),
                let value = accept(payload)
            {
                return (value, passedOver)
            }
            passedOver += 1
        }
        return (nil, passedOver)
    }

    /// The checkpoint files of a folder, oldest first.
    private static func checkpointNames(in folder: borrowing PrivateDirectory) throws -> [String] {
        try folder.descriptor.entryNames().filter { $0.hasSuffix(".ckpt") && $0.count == 21 }.sorted()
    }
}
