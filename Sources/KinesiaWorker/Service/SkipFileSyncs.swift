import KinesiaSystem
import Synchronization

/// The `.skipped` files of a worker's session starts that wait to be forced to the device, and
/// whether a job that will do it is queued and not started.
///
/// A hole given up is appended on the live loop (``SkipFiles``: a write into the page cache,
/// which a kill keeps) before anything the poses after it cause is published; the line is
/// forced to the device by the journal's thread ahead of the records of what those poses cause,
/// as the starts file is (``SessionStarts/sync(in:camera:sessions:)``), so that a power cut
/// never keeps those records without the hole, which a rebuild would then wait for and perhaps
/// fill: other events under the same numbers.
///
/// One job flushes every file marked before it starts: the live loop queues a job only when none
/// is waiting (``mark(_:)``), so a publisher that leaves holes on purpose costs the journal's
/// thread at most one round of flushes a batch, never one a hole. A line appended while a job
/// runs is marked again and gets a job of its own, queued before the records that follow it.
///
/// Shared by the live loop (``mark(_:)``) and the journal's thread (``flush()``).
final class SkipFileSyncs: Sendable {
    private struct Ledger {
        var names: Set<String> = []
        var queued = false
    }

    /// `STATE/starts`.
    let directory: String
    private let ledger = Mutex(Ledger())

    /// The files of `directory`.
    init(directory: String) {
        self.directory = directory
    }

    /// Marks the file `name` (in ``directory``) as written since its last flush.
    /// - Returns: Whether the caller must queue a job that runs ``flush()``: no job is waiting
    ///   that would see this mark.
    func mark(_ name: String) -> Bool {
        ledger.withLock { ledger in
            ledger.names.insert(name)
            defer { ledger.queued = true }
            return !ledger.queued
        }
    }

    /// The files marked and not yet taken by a flush.
    var marked: Set<String> { ledger.withLock { $0.names } }

    /// Takes every file marked so far (a later mark queues another job) and forces each, and
    /// the directory (a file's first line made its entry), to the device. A file that is gone
    /// (its sessions' starts saved anew, which folds the holes in) is passed over.
    /// - Throws: ``WorkerStateError`` naming the directory and the first failure; the files
    ///   after it are still flushed.
    func flush() throws(WorkerStateError) {
        let names = ledger.withLock { ledger in
            defer { ledger = Ledger() }
            return ledger.names
        }
        guard !names.isEmpty else { return }
        var failure: String?
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            for name in names.sorted() {
                do {
                    guard try opened.checkEntry(name) != nil else { continue }
                    let file = try opened.openFile(name, .read)
                    try file.synchronizeData()
                    try file.close()
                } catch {
                    failure = failure ?? "\(name): \(error)"
                }
            }
            try opened.descriptor.synchronize()
        } catch {
            failure = failure ?? "\(error)"
        }
        if let failure {
            throw WorkerStateError("cannot sync the holes given up in \(directory): \(failure)")
        }
    }
}
