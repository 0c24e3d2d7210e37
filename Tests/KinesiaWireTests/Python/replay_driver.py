#!/usr/bin/env python3
"""Checks the ExactlyOnce state machine of kinesia.exactly_once (clients/python) with no I/O, for the Swift
tests (PythonReplayTests): a simulated publisher with a replay server, a lossy live path
(drops, duplicates, a late join, a quiet tail, a retention window, a record damaged in the
server's journal), and the machine must hand
on every message exactly once and in order. Prints one line per scenario, then "ok"."""

import random
import sys

from kinesia.exactly_once import ExactlyOnce
from kinesia.replay import (REPLAY_MAX_BATCH, decode_replay_reply, decode_replay_request,
                            encode_replay_reply, encode_replay_request)

TOPIC = "event/cam0/left/"
STREAM = "0123456789abcdef"
KEY = (TOPIC, STREAM)
ENDPOINT = "ipc:///tmp/bus/replay/worker.sock"


def serve(request, published, first, damaged=()):
    """The replay server's answer to a request, as decoded replies (through the codec)."""
    frame = encode_replay_request(request["request_id"], request["topic"], request["stream_id"],
                                  request["from"], request["limit"])
    request = decode_replay_request(frame)
    last = published - 1
    if request["from"] < first:
        reply = {"type": "error", "request_id": request["request_id"], "code": "notRetained",
                 "stream_id": STREAM, "first": first, "last": last, "message": "gone"}
        return [decode_replay_reply(encode_replay_reply(reply))]
    end = min(last, request["from"] + min(request["limit"], REPLAY_MAX_BATCH) - 1)
    replies = []
    for sequence in range(request["from"], end + 1):
        if sequence in damaged:  # never served: the batch goes past it
            continue
        entry = {"type": "entry", "request_id": request["request_id"], "stream_id": STREAM,
                 "sequence": sequence, "frames": [TOPIC.encode(), b"payload%d" % sequence]}
        replies.append(decode_replay_reply(encode_replay_reply(entry)))
    next_ = end + 1 if end >= request["from"] else max(request["from"], first)
    done = {"type": "batchEnd", "request_id": request["request_id"], "stream_id": STREAM,
            "first": first, "last": last, "next": min(next_, last + 1),
            "count": sum(1 for s in range(request["from"], end + 1) if s not in damaged)}
    replies.append(decode_replay_reply(encode_replay_reply(done)))
    return replies


def run(seed, start, count, drop, join_at, first=0, damaged=()):
    rng = random.Random(seed)
    machine = ExactlyOnce(start=start, accepts=("event/",), max_buffered=64)
    delivered, lost, queue, live = [], [], [], []
    now = 0.0

    def perform(actions):
        for action in actions:
            if action[0] == "deliver":
                delivered.append(action[3])
            elif action[0] == "lost":
                lost.append((action[2], action[3]))
            else:
                queue.append(action[2])

    def answer_requests(published):
        while queue:
            request = queue.pop(0)
            for reply in serve(request, published, first, damaged):
                if reply["type"] == "entry":
                    perform(machine.received(KEY, reply["sequence"], reply["frames"][1], False, now))
                elif reply["type"] == "error":
                    perform(machine.replay_failed(reply, now))
                else:
                    perform(machine.replay_ended(reply, now))

    for sequence in range(count):
        now += 0.01
        if sequence >= join_at and rng.random() >= drop:
            live.append(sequence)
            perform(machine.received(KEY, sequence, b"payload%d" % sequence, True, now))
            if rng.random() < 0.1:
                perform(machine.received(KEY, sequence, b"payload%d" % sequence, True, now))
        if sequence % 100 == 0 and sequence >= join_at:
            announcement = {"endpoint": ENDPOINT,
                            "streams": [{"topic": TOPIC, "stream": STREAM, "first": first, "last": sequence}]}
            perform(machine.announced(announcement, now))
        if rng.random() < 0.3:
            answer_requests(sequence + 1)
    # The stream goes quiet: heartbeats carry its last sequence number.
    for _ in range(4):
        now += 1.0
        announcement = {"endpoint": ENDPOINT,
                        "streams": [{"topic": TOPIC, "stream": STREAM, "first": first, "last": count - 1}]}
        perform(machine.announced(announcement, now))
        answer_requests(count)
        perform(machine.tick(now))
        answer_requests(count)
    return delivered, lost, machine, live[0]


def main():
    scenarios = [
        ("lossy live from now", dict(seed=1, start="now", count=3000, drop=0.3, join_at=0)),
        ("late join from the beginning", dict(seed=2, start="beginning", count=3000, drop=0.2, join_at=1500)),
        ("retention window", dict(seed=3, start="beginning", count=2000, drop=0.1, join_at=1000, first=500)),
        ("from a sequence", dict(seed=4, start=700, count=2000, drop=0.5, join_at=0)),
        ("damaged record", dict(seed=5, start="beginning", count=2000, drop=0.2, join_at=1000, damaged=(400,))),
    ]
    failed = False
    for name, args in scenarios:
        delivered, lost, machine, first_live = run(**args)
        begin = {"now": first_live, "beginning": args.get("first", 0)}.get(args["start"], args["start"])
        damaged = args.get("damaged", ())
        expected = [b"payload%d" % sequence for sequence in range(begin, args["count"]) if sequence not in damaged]
        expected_lost = [(0, args["first"])] if args.get("first") else []
        expected_lost += [(sequence, sequence + 1) for sequence in damaged]
        ok = delivered == expected and lost == expected_lost
        failed |= not ok
        print(f"{'ok' if ok else 'FAIL'} {name}: {len(delivered)} delivered, lost {lost}, {machine.counters}")
    if failed:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
