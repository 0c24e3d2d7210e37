import KinesiaSystem

/// The `.skipped` files of a worker's session starts, each held open for appending after its
/// first line: a hole given up live costs one `write` on the live thread, not an open, a
/// status check, a write and two closes of the directory and the file.
///
/// A file is opened `O_APPEND`, so the line goes at the end even after
/// ``SessionStarts/save(camera:sessions:segments:)`` has emptied the file through another
/// descriptor. A file whose last line a kill tore (no final newline) gets a newline first,
/// so the torn line stays one line that is passed over and the new line reads back whole.
/// At most ``limit`` files are held open; past it, all are closed and reopened as needed (a
/// worker whose sessions start new runs all day keeps a bounded number of descriptors).
///
/// Used by one thread (the worker's live loop).
final class SkipFiles {
    /// The most files held open at once.
    static let limit = 64

    private final class OpenFile {
        let descriptor: FileDescriptor
        init(_ descriptor: consuming FileDescriptor) { self.descriptor = descriptor }
    }

    private let directory: String
    private var files: [String: OpenFile] = [:]

    /// The `.skipped` files in `directory`.
    init(directory: String) {
        self.directory = directory
    }

    /// Appends `line` (ending with a newline) to the file `name`.
    ///
    /// - Throws: ``PrivateDirectoryError`` or ``Errno``, as `description`s in a
    ///   ``WorkerStateError`` by the caller.
    func append(_ line: [UInt8], to name: String) throws {
        if let file = files[name] {
            try file.descriptor.write(line, at: 0)
            return
        }
        if files.count >= Self.limit { files.removeAll() }
        let opened = try PrivateDirectory.open(directory, creating: false)
        let file = OpenFile(try opened.openFile(name, .readWrite.creating.appending))
        opened.close()
        let size = try file.descriptor.size()
        if size > 0, try file.descriptor.read(upTo: 1, at: size - 1) != [UInt8(ascii: "\n")] {
            try file.descriptor.write([UInt8(ascii: "\n")], at: 0)
        }
        try file.descriptor.write(line, at: 0)
        files[name] = file
    }
}
