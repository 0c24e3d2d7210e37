/// A language of the voice cues: each has a texts file compiled into the binary
/// (`Sources/KinesiaVoice/Texts/<code>.json`), which a therapist can copy, edit and load with
/// ``VoiceTexts/init(json:source:)`` (`kinesia voice --texts FILE`).
public enum VoiceLanguage: String, CaseIterable, Sendable, Hashable {
    /// English (espeak-ng voice `en-us`).
    case english = "en"
    /// Brazilian Portuguese (espeak-ng voice `pt-br`).
    case brazilianPortuguese = "pt-BR"
    /// Spanish (espeak-ng voice `es`).
    case spanish = "es"

    /// The code used on the command line and in the texts file's `"language"`: `en`, `pt-BR`, `es`.
    public var code: String { rawValue }

    /// The bytes of the built-in texts file of this language.
    public var builtInTextsFile: [UInt8] {
        switch self {
        case .english: PackageResources.en_json
        case .brazilianPortuguese: PackageResources.pt_BR_json
        case .spanish: PackageResources.es_json
        }
    }

    /// The built-in texts file's name, for messages: `Texts/pt-BR.json`.
    public var builtInTextsName: String { "Texts/\(rawValue).json" }
}
