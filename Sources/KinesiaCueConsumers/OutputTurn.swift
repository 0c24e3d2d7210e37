import Foundation
package import KinesiaSystem

/// Turns on one sound output shared by several `kinesia voice` processes: an advisory `flock`
/// on a lock file named after the output, held for the length of one utterance.
///
/// Two voices on one camera (a patient's in pt-BR and a therapist's in en, say) each decide
/// their own cues; on one sound output they take turns per utterance, so that neither talks
/// over the other: a voice waits while the other plays, then plays its own whole. After its
/// turn a voice lets ``pause`` pass before it asks again, so a voice with more to say cannot
/// take every turn, and a listener hears a breath between two voices. The kernel releases the
/// lock when its holder exits, even by SIGKILL, so a voice that dies never silences another.
///
/// The same file serves two voices writing to one `--output DIR` (`DIR/utterances.lock`):
/// they take turns per utterance there too, and the numbering goes on from the other's files.
///
/// ```swift
/// let turn = try OutputTurn(path: "/run/user/1000/kinesia-voice-output-1000-0a1b2c3d.lock")
/// let played = try turn.take(within: .seconds(3)) { try player.play(file) }  // nil: too late
/// ```
package final class OutputTurn: Sendable {
    /// The lock file.
    package let path: String
    /// How long a voice waits after its own turn before it asks for the next.
    package let pause: Duration
    private let descriptor: FileDescriptor

    /// Opens (or makes) the lock file.
    /// - Throws: ``CueConsumerError/failure(_:)`` when it cannot be opened.
    package init(path: String, pause: Duration = .milliseconds(120)) throws(CueConsumerError) {
        self.path = path
        self.pause = pause
        do {
            descriptor = try FileDescriptor.open(path, .readWrite.creating, permissions: 0o600)
        } catch {
            throw CueConsumerError.failure("cannot open the lock file \(path): \(error)")
        }
    }

    /// Waits for the turn for at most `wait`, runs `body` holding it, then releases it and lets
    /// ``pause`` pass.
    /// - Returns: What `body` returned, or `nil` when the turn did not come within `wait`
    ///   (another voice held the output all that time).
    /// - Throws: What `body` throws, or ``CueConsumerError/failure(_:)`` when the lock fails.
    package func take<Result>(within wait: Duration, _ body: () throws -> Result) throws -> Result? {
        try take(until: wait, on: ElapsedClock(ContinuousClock()), body)
    }

    /// Waits for the turn until `deadline` (on `clock`), runs `body` holding it, then releases
    /// it and lets ``pause`` pass.
    /// - Returns: What `body` returned, or `nil` when the turn did not come by `deadline`.
    /// - Throws: What `body` throws, or ``CueConsumerError/failure(_:)`` when the lock fails.
    package func take<Result>(until deadline: Duration, on clock: ElapsedClock, _ body: () throws -> Result)
        throws -> Result?
    {
        while true {
            let taken: Bool
            do {
                taken = try descriptor.tryLock()
            } catch {
                throw CueConsumerError.failure("cannot lock \(path): \(error)")
            }
            if taken { break }
            guard clock.now < deadline else { return nil }
            ThreadSleep.sleep(.milliseconds(10))
        }
        defer {
            try? descriptor.unlock()
            ThreadSleep.sleep(pause)
        }
        return try body()
    }

    /// The lock file of a sound output, in `$XDG_RUNTIME_DIR` (else the temporary directory),
    /// named after the output and the user: `kinesia-voice-output-1000-0a1b2c3d4e5f6a7b.lock`.
    /// - Parameter output: What identifies the output (``AudioPlayer/output``).
    package static func path(forOutput output: String, environment: [String: String]) -> String {
        var directory = environment["XDG_RUNTIME_DIR"] ?? ""
        var isDirectory: ObjCBool = false
        if directory.isEmpty || !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
            || !isDirectory.boolValue
        {
            directory = NSTemporaryDirectory()
        }
        if directory.hasSuffix("/") { directory.removeLast() }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in output.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        let digits = String(hash, radix: 16)
        let name = String(repeating: "0", count: 16 - digits.count) + digits
        return directory + "/kinesia-voice-output-\(ProcessIdentity.userID)-\(name).lock"
    }
}
