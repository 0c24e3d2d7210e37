import Foundation
import KinesiaTestSupport
import Testing

/// The shared test support finds the package and the built `kinesia`, and says what is
/// missing instead of hanging or skipping.
struct TestSupportTests {
    @Test func thePackageRootIsTheFolderWithPackageSwift() {
        #expect(FileManager.default.fileExists(atPath: PackagePaths.path("Package.swift")))
        #expect(
            PackagePaths.packageRoot(above: PackagePaths.url("Tests/KinesiaCLITests/x.swift"))
                == PackagePaths.root)
    }

    @Test func aFolderWithNoPackageAboveItHasNoRoot() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-noroot-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(PackagePaths.packageRoot(above: directory.appendingPathComponent("a/b.swift")) == nil)
    }

    @Test func theKinesiaOfThisBuildIsFoundNextToTheTests() throws {
        let path = try PackagePaths.kinesia()
        #expect(URL(fileURLWithPath: path).deletingLastPathComponent() == PackagePaths.buildProducts)
        // The configuration being tested, not whichever was built last.
        #if DEBUG
            #expect(PackagePaths.buildProducts.lastPathComponent == "debug")
        #else
            #expect(PackagePaths.buildProducts.lastPathComponent == "release")
        #endif
        let message = PackagePaths.MissingExecutable(path: "/x/kinesia").description
        #expect(message.contains("swift build --build-tests"))
    }

    @Test func theSeededGeneratorRepeatsItsSequence() {
        var a = SplitMix64(seed: 7)
        var b = SplitMix64(seed: 7)
        var c = SplitMix64(seed: 8)
        let first = (0..<8).map { _ in a.next() }
        #expect(first == (0..<8).map { _ in b.next() })
        #expect(first != (0..<8).map { _ in c.next() })
        // The published first output of SplitMix64 seeded with 0.
        var zero = SplitMix64(seed: 0)
        #expect(zero.next() == 0xE220_A839_7B1D_CDAF)
    }
}
