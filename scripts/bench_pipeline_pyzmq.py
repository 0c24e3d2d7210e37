#!/usr/bin/env python3
"""The worker a user would otherwise write in Python with pyzmq: the baseline of the throughput
benchmark (scripts/bench_e2e.py runs it in place of `kinesia worker`, at the same load).

    scripts/bench_pipeline_pyzmq.py --bus DIR --cameras cam0,cam1,... [--sessions 2]

For every pose on pose/<camera>/: decode the wire record (kinesia.wire, clients/python: the
project's own Python decoder), track the sequence number, and for each of the camera's sessions compute a
trivial angle (shoulder abduction: the upper arm against the trunk, left and right), count a
"rep" on a simple threshold crossing, and publish a JSON event on event/<camera>/<session>/
at most 15 times a second of pose time (as `kinesia worker` throttles its snapshots) and on
every rep. This is far less analysis than the Swift worker does (no smoothing, no form rules,
no visibility, setup or baseline): the Python figure is a generous baseline.

On SIGTERM/SIGINT it drains what is already queued (at most half a second) and prints, like
`kinesia worker`, "stopped: N poses, E events, S snapshots, M missing" on standard error.
"""

import argparse
import math
import os
import signal
import sys
import time

import zmq

from kinesia.sequence import SequenceTracker
from kinesia.wire import WireError, decode_message, encode_json_payload

STOP = False


def on_signal(signum, frame):
    global STOP
    STOP = True


def angle(points, side):
    shoulder = points.get(f"{side}Shoulder")
    elbow = points.get(f"{side}Elbow")
    hip = points.get(f"{side}Hip")
    if shoulder is None or elbow is None or hip is None:
        return None
    ax, ay = elbow[0] - shoulder[0], elbow[1] - shoulder[1]
    bx, by = hip[0] - shoulder[0], hip[1] - shoulder[1]
    return abs(math.degrees(math.atan2(ax * by - ay * bx, ax * bx + ay * by)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bus", required=True)
    parser.add_argument("--cameras", required=True, help="comma-separated camera names")
    parser.add_argument("--sessions", type=int, default=2)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.RCVHWM, 10000)
    sub.setsockopt(zmq.LINGER, 0)
    for camera in args.cameras.split(","):
        sub.setsockopt(zmq.SUBSCRIBE, f"pose/{camera}/".encode())
    sub.connect(f"ipc://{args.bus}/sub.sock")
    pub = context.socket(zmq.PUB)
    pub.setsockopt(zmq.SNDHWM, 10000)
    pub.setsockopt(zmq.LINGER, 500)
    pub.connect(f"ipc://{args.bus}/pub.sock")
    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)

    stream_id = int.from_bytes(os.urandom(8), "little")
    sides = ["left", "right"]
    tracker = SequenceTracker()
    sessions = {}
    poses = events = 0
    out_sequence = {}

    def handle(topic, payload):
        nonlocal poses, events
        try:
            message = decode_message(topic, payload)
        except WireError:
            return
        tracker.record(message["topic"], message["header"])
        poses += 1
        pose = message["pose"]
        camera = message["topic"].split("/")[1]
        t = pose["t"]
        for index in range(args.sessions):
            name = sides[index % 2] if index < 2 else f"s{index}"
            key = (camera, name)
            state = sessions.setdefault(key, {"up": False, "reps": 0, "last": None})
            value = angle(pose["points"], sides[index % 2])
            rep = False
            if value is not None:
                if not state["up"] and value > 60:
                    state["up"] = True
                elif state["up"] and value < 30:
                    state["up"] = False
                    state["reps"] += 1
                    rep = True
            if rep or state["last"] is None or t - state["last"] >= 1 / 15:
                state["last"] = t
                event_topic = f"event/{camera}/{name}/"
                sequence = out_sequence.get(event_topic, 0)
                out_sequence[event_topic] = sequence + 1
                text = ('{"type":"angle","t":%r,"value":%s,"repCount":%d}'
                        % (t, "null" if value is None else repr(value), state["reps"]))
                body = encode_json_payload("event", text, stream_id, sequence, time.time_ns())
                pub.send_multipart([event_topic.encode(), body])
                events += 1

    while not STOP:
        if not poller.poll(100):
            continue
        while True:
            try:
                topic, payload = sub.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                break
            handle(topic.decode("ascii", "replace"), payload)
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        try:
            topic, payload = sub.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            break
        handle(topic.decode("ascii", "replace"), payload)
    print(f"stopped: {poses} poses, {events} events, 0 snapshots, {tracker.missing} missing",
          file=sys.stderr, flush=True)
    sub.close()
    pub.close()
    context.term()


if __name__ == "__main__":
    main()
