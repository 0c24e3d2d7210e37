// libFuzzer target for every KinesiaWire decoder. Built and run by `scripts/fuzz` (SwiftPM does
// not see this directory: it builds only Sources/ and Tests/ targets, and its executables rename
// the entry point, which libFuzzer's driver does not expect).
//
// Input layout: byte 0 is the topic length n (taken modulo 160), then n topic bytes, then the
// payload. Every decoder also sees the whole input as a payload. A decoder may refuse anything
// with a WireError; it must never crash, and what decodes must survive re-encoding.

import KinesiaMotion
import KinesiaWire

@_cdecl("LLVMFuzzerTestOneInput")
public func wireFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    decodeEverything(input)
    guard size > 0 else { return 0 }
    let topicLength = min(Int(input[0]) % 160, size - 1)
    let topic = UnsafeRawBufferPointer(rebasing: input[1..<(1 + topicLength)])
    let payload = UnsafeRawBufferPointer(rebasing: input[(1 + topicLength)...])
    decodeEverything(payload)
    _ = try? Topic(parsing: topic)
    if let message = try? WireMessage.decode(topic: topic, payload: payload) {
        // A decoded message re-encodes to frames that decode to the same message.
        guard let frames = try? message.encode(),
            let again = try? WireMessage.decode(topic: frames.topic, payload: frames.payload),
            again == message
        else {
            fatalError("message changed through re-encoding")
        }
    }
    return 0
}

private func decodeEverything(_ payload: UnsafeRawBufferPointer) {
    _ = try? WireHeader.decode(from: payload)
    _ = try? Topic(parsing: payload)
    _ = try? JSONPayloadCodec.decode(payload)
    if let (header, pose) = try? PoseCodec.decode(payload) {
        guard let bytes = try? PoseCodec.encode(pose, header: header),
            let again = try? PoseCodec.decode(bytes), again.pose == pose, again.header == header
        else {
            fatalError("pose changed through re-encoding")
        }
        // Canonical: re-encoding the re-encoded pose gives the same bytes.
        guard let twice = try? PoseCodec.encode(again.pose, header: header), twice == bytes else {
            fatalError("pose encoding is not canonical")
        }
    }
}
