package import Testing

extension Tag {
    /// Tests that start real processes (`kinesia`, `/bin/sh`, `python3`...): slower, and they
    /// need the `kinesia` of the same build (`swift build --build-tests` first). Integration
    /// tests, wherever they live: a missing executable fails them with what to build, never
    /// skips them.
    @Tag package static var process: Self
}
