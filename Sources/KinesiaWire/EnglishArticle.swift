/// `an event`, `a pose`, `an ingest`: a name with its English article, for the sentences of
/// errors and logs (the names are the wire's and the roles' own, all lowercase words).
enum EnglishArticle {
    /// `name` with `an` before a vowel, `a` before anything else (an empty name too).
    static func prefixed(_ name: String) -> String {
        guard let first = name.first, "aeiou".contains(first) else { return "a " + name }
        return "an " + name
    }
}
