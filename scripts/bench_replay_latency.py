#!/usr/bin/env python3
"""How long a worker that found a hole in a camera's poses waits for the ingest's answer: the
round trip of one-pose replay requests to a real `kinesia ingest`, journaled as deployed, against
a replay server that does nothing but wait for requests (the floor), measured by
`kinesia-bench replay-latency` in the same run, request by request alternated. Two ingests, one
after the other: a simulation paced at 60 poses/s (the loop that paces its poses serves its
replay), and a live source, standard input fed 30 poses/s of a real recording (as a camera's
detector sends them: the ingest waits for its next pose and for requests together).

    python3 scripts/bench_replay_latency.py [--requests N] [--no-build] [--binaries DIR]

Prints one JSON object per ingest: medians and 90th percentiles in microseconds, and their ratio.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import bench_e2e
from bench_common import speaker

say = speaker("bench_replay_latency")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--binaries", help="the directory of the kinesia and kinesia-bench to measure "
                        "(another commit's release build, for a comparison; implies --no-build)")
    args = parser.parse_args()
    if args.binaries:
        bench_e2e.KINESIA = os.path.join(os.path.abspath(args.binaries), "kinesia")
        bench_e2e.BENCH = os.path.join(os.path.abspath(args.binaries), "kinesia-bench")
        args.no_build = True
    if not args.no_build:
        for product in ("kinesia", "kinesia-bench"):
            subprocess.run(["swift", "build", "-c", "release", "--product", product], check=True,
                           cwd=bench_e2e.ROOT, stdout=sys.stderr)
    measure(args, "sim:shoulderAbduction,fps=60,seed=1 (paced)",
            ["--source", "sim:shoulderAbduction,fps=60,seed=1", "--loop"], feed=None)
    measure(args, "standard input, 30 poses/s", ["--source", "-"], feed=RECORDING)


RECORDING = os.path.join(bench_e2e.ROOT, "data", "recordings", "p2s_balance_cam01_mediapipe.jsonl")


def feeder(process, path, stop):
    """Writes the recording's poses to `process`'s standard input, 30 a second, looped, each
    with a time 1/30 s after the last."""
    with open(path, encoding="utf-8") as file:
        lines = [json.loads(line) for line in file if line.strip()]
    index = 0
    started = time.monotonic()
    try:
        while not stop.is_set():
            pose = dict(lines[index % len(lines)])
            pose["t"] = index / 30
            process.stdin.write((json.dumps(pose) + "\n").encode())
            process.stdin.flush()
            index += 1
            stop.wait(max(0.0, started + index / 30 - time.monotonic()))
    except (BrokenPipeError, ValueError):
        pass


def measure(args, label, source, feed):
    bus = bench_e2e.Bus()
    stop = threading.Event()
    thread = None
    try:
        command = [bench_e2e.KINESIA, "ingest", "--bus", bus.dir, "--camera", "cam0", *source,
                   "--name", "ingest0", "--state", os.path.join(bus.dir, "state"), "--wait-seconds", "0"]
        ingest = bus.start(command, "ingest", stdin=subprocess.PIPE if feed else None)
        if feed:
            thread = threading.Thread(target=feeder, args=(ingest, feed, stop), daemon=True)
            thread.start()
        socket = os.path.join(bus.dir, "replay", "ingest0.sock")
        deadline = time.monotonic() + 15
        while not os.path.exists(socket):
            if time.monotonic() > deadline or ingest.poll() is not None:
                raise RuntimeError(f"the ingest of {label} did not start serving replay")
            time.sleep(0.02)
        time.sleep(2.5)  # 60 poses or more journaled: every request asks for one of the first 50
        process = subprocess.run([bench_e2e.BENCH, "replay-latency", "--endpoint", f"ipc://{socket}",
                                  "--requests", str(args.requests)], stdout=subprocess.PIPE, text=True,
                                 check=True)
        for line in process.stdout.splitlines():
            if line.startswith("{"):
                record = json.loads(line)
                record["source"] = label
                print(json.dumps(record), flush=True)
    finally:
        stop.set()
        if thread:
            ingest.stdin.close()
        bus.close()


if __name__ == "__main__":
    main()
