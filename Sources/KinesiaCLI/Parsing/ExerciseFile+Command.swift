import KinesiaControl
import KinesiaMotion

extension ExerciseFile {
    /// Reads the exercise file at `path` for a command: an invalid file is the command's
    /// failure (exit 1), with the file's message.
    ///
    /// - Throws: ``CLIError/failure(_:)`` with `PATH:LINE:COLUMN: ...`.
    static func loadForCommand(_ path: String) throws(CLIError) -> Exercise {
        do {
            return try load(path)
        } catch {
            throw CLIError.failure(error.message)
        }
    }
}
