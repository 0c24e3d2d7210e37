import Foundation
import Synchronization
import Testing

@testable import KinesiaSystem

/// A thread made by `Thread.named` shows its name to the kernel (`top -H`, `perf`), without
/// the package's prefix and within the kernel's 15 bytes.
struct KernelThreadNameTests {
    @Test func aNamedThreadShowsItsNameToTheKernel() {
        let seen = Mutex<(api: String, comm: String)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.named("kinesia.journal-write") {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            seen.withLock { $0 = (KernelThreadName.current, comm.trimmingCharacters(in: .newlines)) }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        let names = seen.withLock { $0 }
        #expect(names?.api == "journal-write")
        #expect(names?.comm == "journal-write")
    }

    @Test(arguments: [
        ("kinesia.journal-write", "journal-write"),
        ("kinesia-bus-messages", "bus-messages"),
        ("kinesia.demo.view", "demo.view"),
        ("kinesia.", "kinesia."),
        ("worker cam0/left and more", "worker cam0/lef"),
        ("câmera-sessão-esquerda", "câmera-sessão"),
        ("kinesia.aaaaaaaaaaaaaaçb", "aaaaaaaaaaaaaa"),
    ])
    func namesAreCutToWholeCharactersWithinFifteenBytes(name: String, kernel: String) {
        #expect(KernelThreadName.kernelName(name) == kernel)
        #expect(KernelThreadName.kernelName(name).utf8.count <= KernelThreadName.maximumBytes)
    }
}
