import Foundation
import KinesiaTestSupport
import Testing

/// POSIX is reached through KinesiaSystem: no other target imports Glibc (a serial line's
/// `termios` is `FileDescriptor+Terminal`, the journal's group sync `DescriptorSync`; the evdev
/// `ioctl`s are the C target's).
struct POSIXBoundaryTests {
    @Test func onlyKinesiaSystemImportsGlibc() throws {
        let root = PackagePaths.path("")
        let sources = PackagePaths.path("Sources")
        let enumerator = try #require(FileManager.default.enumerator(atPath: sources))
        var importing: Set<String> = []
        var scanned = 0
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let path = "Sources/" + relative
            if path.hasPrefix("Sources/KinesiaSystem/") || path.hasPrefix("Sources/C") { continue }
            scanned += 1
            let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
            let imports = text.split(separator: "\n").contains { line in
                let words = line.split(separator: " ")
                return words.last == "Glibc"
                    && words.dropLast().allSatisfy {
                        ["import", "public", "package", "@preconcurrency"].contains($0)
                    }
            }
            if imports { importing.insert(path) }
        }
        #expect(scanned > 200)
        #expect(importing.isEmpty, "import Glibc outside KinesiaSystem: \(importing.sorted())")
    }
}
