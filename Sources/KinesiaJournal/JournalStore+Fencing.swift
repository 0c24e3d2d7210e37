import KinesiaSystem

extension JournalStore {
    /// The file of a stream's directory that holds the epoch of the assignment its writer
    /// writes under (a decimal number): written by a pool worker's session once it holds the
    /// stream's lock.
    static let holderName = "holder"

    /// Opens `stream` for appending as the holder of the assignment at `epoch` (a pool worker's
    /// session, ``JournalWriter``'s lock and more).
    ///
    /// A writer whose lock is held by the holder of an *older* assignment (a worker paused past
    /// its lease, or hung, whose sessions the coordinator gave to another) does not wait for it:
    /// that holder no longer has the right to write (it stops by itself when it runs again), and
    /// its lock would keep the session from going on for as long as it is paused. The stream is
    /// **fenced**: its directory is renamed aside, its segments are copied into a new directory
    /// of the stream's name (a torn tail is cut as at any opening), and the old one is removed.
    /// The old holder's open files now belong to no stream: whatever it still writes is written
    /// nowhere anyone reads. A lock held with no epoch (a worker of `--session` flags, an
    /// ingest) or at the same or a newer epoch is never broken.
    ///
    /// - Returns: The writer; the epoch of the holder it was taken from (`nil`: none), and the
    ///   renamed directory of that holder when it could not be removed (to remove by hand).
    /// - Throws: ``JournalError/inUse(path:)`` when a holder of the same or a newer epoch, or of
    ///   no epoch, holds it; the errors of the file system.
    public func openWriter(for stream: JournalStream, epoch: UInt64) throws(JournalError) -> (
        writer: JournalWriter, fenced: UInt64?, leftBehind: String?
    ) {
        let path = path(of: stream)
        var fenced: UInt64?
        var leftBehind: String?
        let writer: JournalWriter
        do {
            writer = try openWriter(for: stream)
        } catch .inUse(let busy) {
            guard let held = Self.holderEpoch(at: path), held < epoch else { throw .inUse(path: busy) }
            leftBehind = try Self.fence(path, heldAt: held)
            fenced = held
            writer = try openWriter(for: stream)
        }
        do {
            let holder = try FileDescriptor.open(path + "/" + Self.holderName, .write.creating.truncating)
            try holder.write(Array("\(epoch)\n".utf8), at: 0)
        } catch {
            throw JournalError.from(error, path: path + "/" + Self.holderName, call: "write")
        }
        return (writer, fenced, leftBehind)
    }

    /// The epoch of the assignment whose holder last took `stream` (``openWriter(for:epoch:)``),
    /// `nil` when none did or its holder file does not read: a holder that finds a newer epoch
    /// there has lost the stream to another.
    public func holderEpoch(of stream: JournalStream) -> UInt64? {
        Self.holderEpoch(at: path(of: stream))
    }

    /// The epoch in the holder file of the stream directory at `path`, if it reads.
    static func holderEpoch(at path: String) -> UInt64? {
        guard let file = try? FileDescriptor.open(path + "/" + holderName, .read),
            let bytes = try? file.read(upTo: 32, at: 0)
        else { return nil }
        return UInt64(String(decoding: bytes.filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self))
    }

    /// Renames the stream directory at `path` aside, copies its segments into a new directory
    /// of its name, and removes the old one.
    ///
    /// - Returns: The old directory's path when it could not be removed, else `nil`.
    private static func fence(_ path: String, heldAt held: UInt64) throws(JournalError) -> String? {
        guard let slash = path.lastIndex(of: "/") else {
            throw .unsafePath("\(path): not a stream directory")
        }
        let parentPath = String(path[..<slash])
        let name = String(path[path.index(after: slash)...])
        let aside = "\(name).fenced-\(held)-\(ProcessIdentity.id)"
        let parent = try openPrivate(parentPath, creating: false)
        do {
            try parent.descriptor.renameEntry(name, to: aside)
        } catch {
            throw JournalError.from(error, path: path, call: "rename")
        }
        let old = try openPrivate(parentPath + "/" + aside, creating: false)
        let fresh = try openPrivate(path, creating: true)
        let names: [String]
        do {
            names = SegmentName.sorted(try old.descriptor.entryNames())
        } catch {
            throw JournalError.system(
                path: parentPath + "/" + aside, call: "readdir", message: error.description)
        }
        for segment in names {
            do {
                let source = try old.descriptor.open(entry: segment, .read)
                let bytes = try source.read(upTo: try source.size(), at: 0)
                let copy = try fresh.descriptor.open(entry: segment, .write.creating.truncating)
                try copy.write(bytes, at: 0)
            } catch {
                throw JournalError.from(error, path: path + "/" + segment, call: "copy")
            }
        }
        // Its files go with it (a holder still running writes into files no one reads).
        // A file that stays keeps the directory too: said by its path.
        for entry in (try? old.descriptor.entryNames()) ?? [] { try? old.descriptor.removeEntry(entry) }
        return (try? parent.descriptor.removeDirectory(entry: aside)) == nil ? parentPath + "/" + aside : nil
    }
}
