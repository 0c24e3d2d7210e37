#!/usr/bin/env python3
"""How fast a journaled worker answers live again after kill -9, late in a long session.

Starts a broker, one `kinesia ingest` per camera (`sim:shoulderAbduction`, paced at 60 poses/s,
journaled: as deployed) and one `kinesia worker` hosting a left and a right session per camera
(journaled, checkpointed: as deployed), and subscribes to every pose and every snapshot. At each
`--kill-at` minute of the session it kills the worker with SIGKILL and starts the same command
again at once (as `kinesia up` does, without its back-off), then measures, for every camera:

- first answer: from the kill to the first snapshot received again;
- live again: from the kill to the first snapshot of a pose sent after the kill that arrives
  within 100 ms of its pose (the worker has caught up with the camera).

The figure is the worst camera's. It also checks that no snapshot or event sequence number is
missing on any stream (the worker publishes what it missed while it was down; a live
subscriber sees it arrive late), and prints one JSON line per kill.

    .venv/bin/python scripts/recovery.py [--kinesia .build/release/kinesia] [--cameras 8] [--kill-at 10,60]
"""
import argparse
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

import zmq

from kinesia.wire import HEADER_SIZE, decode_header, parse_topic

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIVE_LATENCY = 0.100


def t_of(payload):
    """The pose time of a snapshot (its JSON's "t")."""
    body = payload[HEADER_SIZE:]
    return json.loads(body.decode())["t"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinesia", default=os.path.join(ROOT, ".build", "release", "kinesia"))
    parser.add_argument("--cameras", type=int, default=8)
    parser.add_argument("--kill-at", default="10,60",
                        help="minutes of session at which the worker is killed (comma-separated)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    kills = sorted(float(m) * 60 for m in args.kill_at.split(","))
    if not os.access(args.kinesia, os.X_OK):
        sys.exit(f"recovery: no kinesia at {args.kinesia} (swift build -c release --product kinesia)")

    base = tempfile.mkdtemp(prefix="kinesia-recovery-")
    bus = os.path.join(base, "bus")
    processes = []

    def start(command, name):
        log = open(os.path.join(base, f"{name}.log"), "a")
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT)
        processes.append(process)
        return process

    start([args.kinesia, "broker", "--bus", bus], "broker")
    deadline = time.monotonic() + 10
    while not os.path.exists(os.path.join(bus, "sub.sock")):
        if time.monotonic() > deadline:
            sys.exit("recovery: the broker did not start")
        time.sleep(0.05)
    # Enough reps for the longest session (a shoulder abduction rep takes a few seconds).
    reps = int(kills[-1] / 2) + 100
    for k in range(args.cameras):
        start([args.kinesia, "ingest", "--bus", bus, "--camera", f"cam{k}", "--state",
               os.path.join(base, f"ingest{k}"),
               "--source", f"sim:shoulderAbduction,seed={k + 1},reps={reps}"], f"ingest{k}")
    worker_command = [args.kinesia, "worker", "--bus", bus, "--name", "worker0",
                      "--state", os.path.join(base, "worker0")]
    for k in range(args.cameras):
        worker_command += ["--session", f"cam{k}/left=shoulderAbduction:left",
                           "--session", f"cam{k}/right=shoulderAbduction:right"]
    worker = start(worker_command, "worker0")

    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.RCVHWM, 0)
    sub.connect(f"ipc://{bus}/sub.sock")
    for prefix in (b"pose/", b"snapshot/", b"event/"):
        sub.setsockopt(zmq.SUBSCRIBE, prefix)

    sent = {}          # camera -> {pose time: send time (s, CLOCK_REALTIME of the ingest)}
    last_seq = {}      # (topic, stream) -> last sequence number seen
    missing = {}       # topic -> sequence numbers never seen (holes)
    first_pose = None
    kill_time = None
    results = []
    measuring = None   # per camera: [first answer, live again] since the kill

    def receive(timeout_ms):
        nonlocal first_pose
        if not sub.poll(timeout_ms):
            return
        while True:
            try:
                topic, payload = sub.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            now = time.time()
            info = parse_topic(topic)
            kind, camera = info["kind"], info["camera"]
            header = decode_header(payload)
            if kind == "pose":
                if first_pose is None:
                    first_pose = time.monotonic()
                pose_t = struct.unpack_from("<d", payload, HEADER_SIZE)[0]
                times = sent.setdefault(camera, {})
                times[pose_t] = header["sent_at_ns"] / 1e9
                if len(times) > 20_000:  # the last minute or so is enough
                    for old in list(times)[:10_000]:
                        del times[old]
                continue
            key = (topic, header["stream_id"])
            last = last_seq.get(key)
            sequence = header["sequence"]
            if last is not None and sequence > last + 1:
                missing.setdefault(topic, set()).update(range(last + 1, sequence))
            elif last is not None and sequence <= last:
                missing.get(topic, set()).discard(sequence)
            if last is None or sequence > last:
                last_seq[key] = sequence
            if kind != "snapshot" or measuring is None or camera not in measuring:
                continue
            entry = measuring[camera]
            if entry[0] is None:
                entry[0] = now - kill_time
            sent_at = sent.get(camera, {}).get(t_of(payload))
            if entry[1] is None and sent_at is not None and sent_at > kill_time \
                    and now - sent_at <= LIVE_LATENCY:
                entry[1] = now - kill_time

    try:
        while first_pose is None:
            receive(200)
            if time.monotonic() - deadline > 70:
                sys.exit("recovery: no pose in 60 s")
        for at in kills:
            while time.monotonic() - first_pose < at:
                receive(100)
            load = os.getloadavg()[0]
            worker.send_signal(signal.SIGKILL)
            worker.wait()
            kill_time = time.time()
            measuring = {f"cam{k}": [None, None] for k in range(args.cameras)}
            worker = start(worker_command, "worker0")
            until = time.monotonic() + 30
            while time.monotonic() < until and any(v[1] is None for v in measuring.values()):
                receive(50)
            firsts = [v[0] for v in measuring.values()]
            lives = [v[1] for v in measuring.values()]
            result = {
                "bench": "recovery", "cameras": args.cameras, "session_minutes": at / 60,
                "first_answer_s": None if None in firsts else round(max(firsts), 3),
                "live_again_s": None if None in lives else round(max(lives), 3),
                "live_again_median_s": None if None in lives else round(sorted(lives)[len(lives) // 2], 3),
                "load_average": round(load, 2),
            }
            measuring = None
            results.append(result)
            print(json.dumps(result), flush=True)
        # Late answers (published while catching up) are in: any hole left is a loss.
        until = time.monotonic() + 5
        while time.monotonic() < until:
            receive(100)
        holes = sum(len(v) for v in missing.values())
        print(json.dumps({"bench": "recovery-check", "streams": len(last_seq), "sequence_holes": holes}),
              flush=True)
        ok = holes == 0 and all(r["live_again_s"] is not None for r in results)
        return 0 if ok else 1
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        sub.close(0)
        context.term()
        if args.keep:
            print(f"recovery: kept {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
