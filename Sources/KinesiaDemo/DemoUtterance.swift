import KinesiaJSON

/// One line of `utterances.jsonl`: what `kinesia voice --output` said, and in which file.
public struct DemoUtterance: Hashable, Sendable {
    /// The WAV file's name in the voice directory (`0001.wav`).
    public var file: String
    /// The text spoken.
    public var text: String
    /// What the cue is about (`repCounted`, `formFault.keepTrunkUpright`...).
    public var cue: String
    /// The session it came from (`left`).
    public var session: String

    /// The utterances of an `utterances.jsonl` text, in order; a line that is not an utterance
    /// (a torn last line of a voice that was killed) is left out.
    public static func parse(jsonLines text: String) -> [DemoUtterance] {
        text.split(separator: "\n").compactMap { line in
            guard case .object(let fields)? = try? JSONParser.parse(line),
                case .string(let file)? = fields["file"], case .string(let text)? = fields["text"],
                case .string(let cue)? = fields["cue"], case .string(let session)? = fields["session"]
            else { return nil }
            return DemoUtterance(file: file, text: text, cue: cue, session: session)
        }
    }
}
