/// How `kinesia voice` runs espeak-ng.
public enum VoiceEngine: String, CaseIterable, Sendable {
    /// libespeak-ng in the process: a few milliseconds per cue (the default).
    case library
    /// The `espeak-ng` command, one process per cue: every WAV is exactly what `espeak-ng -w`
    /// writes for its text, tens of milliseconds later.
    case command
}
