import KinesiaJSON

extension CheckpointError {
    /// Refuses a checkpoint of another format version, another exercise or another
    /// configuration: the checks every restore begins with.
    /// - Parameters:
    ///   - what: The checkpoint, for the message (`"a checkpoint"`, `"an analytics checkpoint"`).
    ///   - version: The checkpoint's format version, and the one this build reads.
    ///   - exercise: The checkpoint's exercise identifier, and the one restoring it.
    ///   - fingerprint: The checkpoint's configuration digest, and the restoring one's.
    /// - Throws: ``Kind/unsupportedVersion``, ``Kind/otherExercise`` or ``Kind/otherThresholds``.
    package static func checkFit(
        of what: String, version: (found: Int, expected: Int), exercise: (found: String, expected: String),
        fingerprint: (found: CheckpointFingerprint, expected: CheckpointFingerprint)
    ) throws(CheckpointError) {
        guard version.found == version.expected else {
            throw CheckpointError(
                .unsupportedVersion,
                detail:
                    "\(what) of format version \(version.found); this build reads version \(version.expected)"
            )
        }
        guard exercise.found == exercise.expected else {
            throw CheckpointError(
                .otherExercise,
                detail:
                    "\(what) of \(exercise.found.quotedExcerpt()), not of \(exercise.expected.quotedExcerpt())"
            )
        }
        guard fingerprint.found == fingerprint.expected else {
            throw CheckpointError(
                .otherThresholds,
                detail: "\(what) of \(exercise.expected.quotedExcerpt()) with other thresholds or rules "
                    + "(fingerprint \(fingerprint.found), expected \(fingerprint.expected))")
        }
    }
}
