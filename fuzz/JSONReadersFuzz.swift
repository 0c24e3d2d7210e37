// libFuzzer target for every JSON reader that takes outside input. Built and run by
// `scripts/fuzz`, like WireFuzz.swift (SwiftPM does not see this directory).
//
// The whole input is given, as text, to each reader: a pose line of `kinesia ingest --source -`
// (standard input), a JSON Lines recording, an OpenPose frame, an event or snapshot line
// (`MotionJSON`, what `listen` and `watch` read from the bus), a health report and a topology
// file of `kinesia up`. A reader may refuse anything with its typed error; it must never crash,
// and what it accepts must survive re-encoding where the project writes that format.

import Foundation
import KinesiaMotion
import KinesiaSupervisor
import KinesiaWire

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonReadersFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)

    // Standard input of `kinesia ingest --source -`: one pose per line.
    if let pose = try? PoseJSONLine.decode(text) {
        guard let again = try? PoseJSONLine.decode(PoseJSONLine.encode(pose)), again == pose else {
            fatalError("pose changed through its JSON line")
        }
    }
    // Recordings: JSON Lines files and OpenPose frames.
    _ = try? JSONLinesRecording.decode(bytes, file: "fuzz.jsonl")
    _ = try? OpenPoseRecording.decodeFrame(bytes, timestamp: 0)
    // Events, snapshots and summaries, as consumers read them from the bus.
    _ = try? MotionJSON.decode(text)
    // Health reports.
    if let report = try? HealthReport(json: text) {
        guard let json = try? report.json(),
            let again = try? HealthReport(json: String(decoding: json, as: UTF8.self)), again == report
        else {
            fatalError("health report changed through its JSON")
        }
    }
    // Topology files of `kinesia up`.
    _ = try? Topology.decode(bytes, file: "fuzz.json")
    return 0
}
