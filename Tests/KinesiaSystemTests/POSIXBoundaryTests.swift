import Foundation
import KinesiaTestSupport
import Testing

/// POSIX is reached through KinesiaSystem: no other target imports Glibc, but for the device
/// drivers of the haptic output (evdev `ioctl`s, a serial line's `termios`) and the journal's
/// group sync (the `fdatasync` of duplicated raw descriptors on a thread of its own).
struct POSIXBoundaryTests {
    static let allowed: Set<String> = [
        "Sources/KinesiaHaptic/EvdevDevice.swift",
        "Sources/KinesiaHaptic/HapticDeviceError.swift",
        "Sources/KinesiaHaptic/HapticDeviceLink.swift",
        "Sources/KinesiaHaptic/SerialHapticDevice.swift",
        "Sources/KinesiaJournal/JournalGroupSync.swift",
    ]

    @Test func onlyKinesiaSystemAndTheDeviceDriversImportGlibc() throws {
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
        #expect(
            importing == Self.allowed,
            "import Glibc outside KinesiaSystem: \(importing.subtracting(Self.allowed).sorted())")
    }
}
