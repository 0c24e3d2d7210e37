// libFuzzer target for every KinesiaWire decoder. Built and run by `scripts/fuzz` (SwiftPM does
// not see this directory: it builds only Sources/ and Tests/ targets, and its executables rename
// the entry point, which libFuzzer's driver does not expect).
//
// Input layout: byte 0 is the topic length n (taken modulo 160), then n topic bytes, then the
// payload. Every decoder also sees the whole input as a payload. A decoder may refuse anything
// with a WireError; it must never crash, and what decodes must survive re-encoding in a canonical
// form: WireRoundTrip holds the checks, shared with WireRobustnessTests.

import KinesiaMotion
import KinesiaWire

@_cdecl("LLVMFuzzerTestOneInput")
public func wireFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    do {
        _ = try WireRoundTrip.checkPayload(input)
        guard size > 0 else { return 0 }
        let topicLength = min(Int(input[0]) % 160, size - 1)
        let topic = UnsafeRawBufferPointer(rebasing: input[1..<(1 + topicLength)])
        let payload = UnsafeRawBufferPointer(rebasing: input[(1 + topicLength)...])
        _ = try WireRoundTrip.checkPayload(payload)
        _ = try? Topic(parsing: topic)
        _ = try WireRoundTrip.checkMessage(topic: topic, payload: payload)
    } catch {
        fatalError("\(error)")
    }
    return 0
}
