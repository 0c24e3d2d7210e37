import Foundation
import KinesiaTestSupport
import Testing

/// Headless Chromium driven through its DevTools protocol (`scripts/browser_drive.py`: Python's
/// standard library only), as a person uses a page: open it, wait for what they would wait for,
/// click, look (a screenshot). Debian's `chromium`.
enum BrowserSession {

    /// Opens `url` in a new profile at `width` x `height` and runs `steps`; each step's line.
    static func run(_ url: String, steps: [String], width: Int = 1000, height: Int = 900) async throws
        -> [String]
    {
        let profile = NSTemporaryDirectory() + "kinesia-browser-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let (status, output) = try await Offload.run(
            try PackagePaths.python(),
            [
                PackagePaths.path("scripts/browser_drive.py"), "/usr/bin/chromium", profile, "\(width)",
                "\(height)", url,
            ]
                + steps,
            environment: Browser.environment)
        #expect(status == 0, "\(output.suffix(2000))")
        return output.split(separator: "\n").map(String.init)
    }

    /// JavaScript that waits (at most `seconds`) until `condition` holds, then gives `value`.
    static func whenever(_ condition: String, then value: String, seconds: Int = 30) -> String {
        """
        eval:new Promise(done => { const end = Date.now() + \(seconds * 1000); \
        const look = () => { if ((() => { try { return \(condition); } catch (e) { return false; } })() || Date.now() > end) \
        done(\(value)); else setTimeout(look, 100); }; look(); })
        """
    }

    /// The value of a JSON string line (`"text"` -> text).
    static func string(_ line: String?) -> String? {
        guard let line, let data = line.data(using: .utf8) else { return nil }
        return try? JSONDecoder().decode(String.self, from: data)
    }
}
