import KinesiaBus
import KinesiaTestSupport
import Testing

struct StreamEpochsTests {
    @Test func aNewerOrEqualEpochGoesOnAndAnOlderOneIsStale() {
        var epochs = StreamEpochs()
        #expect(admit(&epochs, 1, epoch: 4))
        #expect(admit(&epochs, 1, epoch: 4))
        #expect(admit(&epochs, 1, epoch: 5))
        #expect(!admit(&epochs, 1, epoch: 4))
        #expect(!admit(&epochs, 1, epoch: 0))
        #expect(admit(&epochs, 1, epoch: 5))
        #expect(admit(&epochs, 1, epoch: .max))
        #expect(!admit(&epochs, 1, epoch: 5))
    }

    @Test func eachStreamHasItsOwnEpoch() {
        var epochs = StreamEpochs()
        #expect(admit(&epochs, 1, epoch: 9))
        #expect(admit(&epochs, 2, epoch: 3))
        #expect(!admit(&epochs, 2, epoch: 2))
        #expect(!admit(&epochs, 1, epoch: 3))
        #expect(epochs.count == 2)
    }

    @Test func afterItsCapacityEveryStreamIsForgottenSoNothingIsRefusedWrongly() {
        var epochs = StreamEpochs(capacity: 2)
        #expect(admit(&epochs, 1, epoch: 9))
        #expect(admit(&epochs, 2, epoch: 9))
        #expect(admit(&epochs, 3, epoch: 1))
        #expect(epochs.forgotten == 1)
        #expect(epochs.count == 1)
        // Stream 1 was forgotten: its next message goes on, whatever its epoch.
        #expect(admit(&epochs, 1, epoch: 2))
        #expect(!admit(&epochs, 3, epoch: 0))
    }

    /// Random orders of epochs on a few streams: no message admitted has an epoch below the
    /// highest admitted before it on its stream, and every refused one has.
    @Test(arguments: 1...20)
    func noAdmittedMessageIsBelowAnEpochAdmittedBeforeOnItsStream(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var epochs = StreamEpochs()
        var highest: [UInt64: UInt64] = [:]
        for _ in 0..<500 {
            let stream = random.next() % 4
            let epoch = random.next() % 8
            let admitted = admit(&epochs, stream, epoch: epoch)
            let before = highest[stream]
            #expect(admitted == (before.map { epoch >= $0 } ?? true))
            if admitted { highest[stream] = max(before ?? 0, epoch) }
        }
    }

    @Test func theFrameAndTheStreamAreReadWhereTheWireFormatPutsThem() {
        let frame: [UInt8] = [0x4B, 0x45, 7, 0, 0, 0, 0, 0, 0, 1]
        #expect(frame.withUnsafeBytes { StreamEpochs.epoch(inFrame: $0) } == 0x0100_0000_0000_0007)
        #expect(Array(frame.dropLast()).withUnsafeBytes { StreamEpochs.epoch(inFrame: $0) } == nil)
        #expect(
            ([0x4B, 0x57] + frame.dropFirst(2)).withUnsafeBytes { StreamEpochs.epoch(inFrame: $0) } == nil)
        let payload: [UInt8] = [0x4B, 0x57, 1, 2, 0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01]
        #expect(payload.withUnsafeBytes { StreamEpochs.stream(ofPayload: $0) } == 0x0123_4567_89AB_CDEF)
        #expect(Array(payload.dropLast()).withUnsafeBytes { StreamEpochs.stream(ofPayload: $0) } == nil)
    }
}

/// `epochs.admit(stream:epoch:)` (a mutating call cannot be written inside `#expect`).
private func admit(_ epochs: inout StreamEpochs, _ stream: UInt64, epoch: UInt64) -> Bool {
    epochs.admit(stream: stream, epoch: epoch)
}
