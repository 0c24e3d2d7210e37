// libFuzzer target for every computation on sequence numbers and counters that a peer's values
// reach: the exactly-once state machine (live and replayed messages, batch ends, failures,
// announcements, time), the sequence tracker, the worker's pose feed, and health reports'
// counters. Built and run by `scripts/fuzz`.
//
// Input layout: a list of operations, 9 bytes each: an opcode, then 8 bytes that pick a value
// (half of the time one at the edges of its type: 0, 1, 2^53, 2^63, UInt64.max - 1, UInt64.max,
// otherwise the bytes themselves). None may trap (an overflow is a crash here); and what each
// machine hands on is in order and never twice.

import KinesiaClient
import KinesiaWire
import KinesiaWorker

private let edges: [UInt64] = [0, 1, 2, 1 << 53, (1 << 53) + 1, 1 << 63, (1 << 63) + 1, .max - 1, .max]

private func value(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var raw: UInt64 = 0
    for byte in bytes { raw = raw << 8 | UInt64(byte) }
    if raw & 1 == 0 { return edges[Int((raw >> 1) % UInt64(edges.count))] }
    return raw >> 1
}

@_cdecl("LLVMFuzzerTestOneInput")
public func sequenceFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let topic = try! Topic.event(camera: "cam0", session: "left")
    let streams = [StreamID(1), StreamID(2)]
    var machine = ExactlyOnceStateMachine<UInt64>(
        start: .beginning, accepts: [.kind(.event)], maximumBuffered: 8, requestTimeout: .seconds(1),
        announcementTimeout: .seconds(2))
    var tracker = SequenceTracker<String>()
    var feed = PoseFeed<UInt64>(maximumHeld: 8, holeWait: .milliseconds(200))
    var delivered: [StreamID: UInt64] = [:]
    var analysed: [StreamID: UInt64] = [:]
    var requests: [ReplayRequest] = []
    var feedRequests: [UInt32] = []
    var now = Duration.zero

    func check(_ actions: [ExactlyOnceStateMachine<UInt64>.Action]) {
        for action in actions {
            switch action {
            case .deliver(let key, let sequence, _):
                if let last = delivered[key.stream], sequence <= last {
                    fatalError("delivered #\(sequence) of \(key) after #\(last)")
                }
                delivered[key.stream] = sequence
            case .request(_, let request): requests.append(request)
            case .lost(_, let range): _ = range.width
            }
        }
    }
    func check(_ outputs: [PoseFeed<UInt64>.Output]) {
        for output in outputs {
            if case .request(_, let id) = output { feedRequests.append(id) }
            guard case .analyse(let stream, let sequence, _, _) = output else { continue }
            if let last = analysed[stream], sequence <= last {
                fatalError("analysed #\(sequence) of \(stream) after #\(last)")
            }
            analysed[stream] = sequence
        }
    }

    var offset = 0
    while offset + 9 <= size {
        let opcode = input[offset]
        let number = value(UnsafeRawBufferPointer(rebasing: input[(offset + 1)..<(offset + 9)]))
        let stream = streams[Int(opcode >> 7)]
        let key = ReplayStreamKey(topic: topic, stream: stream)
        offset += 9
        switch opcode & 0x0F {
        case 0:
            check(machine.received(key, sequence: number, message: number, live: true, now: now))
        case 1:
            check(machine.received(key, sequence: number, message: number, live: false, now: now))
        case 2:
            let last: UInt64 = number & 3 == 0 ? .max : number >> 1
            let id = requests.popLast()?.requestID ?? UInt32(truncatingIfNeeded: number)
            check(
                machine.replayEnded(
                    ReplayBatchEnd(
                        requestID: id, stream: stream, first: number / 2, last: last, next: number,
                        count: UInt32(truncatingIfNeeded: number)), now: now))
        case 3:
            let id = requests.popLast()?.requestID ?? UInt32(truncatingIfNeeded: number)
            check(
                machine.replayFailed(
                    ReplayFailure(
                        requestID: id, code: number & 1 == 0 ? .notRetained : .unknownStream, stream: stream,
                        first: number, last: number, message: ""), now: now))
        case 4:
            let announcement = ReplayAnnouncement(
                endpoint: "ipc:///tmp/x.sock",
                streams: [ReplayStreamInfo(topic: topic, stream: stream, first: number / 3, last: number)])
            check(machine.announced(announcement, now: now))
        case 5:
            now += .milliseconds(Int64(number % 5000))
            check(machine.tick(now: now))
            check(feed.tick(now: now))
        case 6:
            _ = tracker.record(stream: stream, sequence: number, on: "t")
        case 7:
            _ = tracker.reconcile(stream: stream, through: number, on: "t")
        case 8:
            check(feed.live(stream: stream, sequence: number, pose: number, now: now))
        case 9:
            check(feed.replayed(stream: stream, sequence: number, pose: number, now: now))
        case 10:
            let id = feedRequests.popLast() ?? UInt32(truncatingIfNeeded: number)
            let last: UInt64 = number & 3 == 0 ? .max : number >> 1
            check(
                feed.replayEnded(
                    ReplayBatchEnd(
                        requestID: id, stream: stream, first: number / 2, last: last, next: number,
                        count: UInt32(truncatingIfNeeded: number)), now: now))
        case 11:
            let id = feedRequests.popLast() ?? UInt32(truncatingIfNeeded: number)
            check(
                feed.replayFailed(
                    requestID: id, stream: stream, first: number & 1 == 0 ? number : nil, now: now))
        case 12:
            check(feed.timedOut(now: now))
        case 13:
            check(feed.announced(stream: stream, last: number, now: now))
        default:
            let report = HealthReport(
                process: "p", role: "worker", pid: 1, uptime: 1,
                counters: [
                    "n": Int(truncatingIfNeeded: number), "lost": Int(clamping: tracker.totals.missing),
                ])
            guard let json = try? report.json(),
                let back = try? HealthReport(json: String(decoding: json, as: UTF8.self))
            else { fatalError("a health report did not read back: \(number)") }
            _ = back
        }
    }
    var counter: UInt64 = .max - 1
    counter.addSaturating(UInt64(size))
    return 0
}
