import KinesiaWire
import Testing

struct EpochFrameTests {
    @Test func anEpochFrameIsTheTagKEAndTheEpochLittleEndian() {
        #expect(EpochFrame.encode(7).hex == "4b45" + "0700000000000000")
        #expect(EpochFrame.encode(0x0102_0304_0506_0708).hex == "4b45" + "0807060504030201")
        #expect(EpochFrame.encode(.max).count == EpochFrame.size)
    }

    @Test(arguments: [0, 1, 4, 5, 0x0102_0304_0506_0708, UInt64.max])
    func anEpochFrameReadsBackItsEpoch(epoch: UInt64) {
        #expect(EpochFrame.decode(EpochFrame.encode(epoch)) == epoch)
    }

    @Test func aFrameOfAnotherSizeOrTagIsNoEpoch() {
        let frame = EpochFrame.encode(5)
        #expect(EpochFrame.decode(frame.dropLast()) == nil)
        #expect(EpochFrame.decode(frame + [0]) == nil)
        #expect(EpochFrame.decode([0x4B, 0x57] + frame.dropFirst(2)) == nil)
        #expect(EpochFrame.decode([UInt8]()) == nil)
    }
}
