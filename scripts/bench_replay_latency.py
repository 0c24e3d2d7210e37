#!/usr/bin/env python3
"""How long a worker that found a hole in a camera's poses waits for the ingest's answer: the
round trip of one-pose replay requests to a real `kinesia ingest` (a simulation at 60 poses/s,
paced and journaled, as deployed: the loop that paces its poses serves its replay), against a
replay server that does nothing but wait for requests (the floor), measured by
`kinesia-bench replay-latency` in the same run, request by request alternated.

    python3 scripts/bench_replay_latency.py [--requests N] [--no-build] [--binaries DIR]

Prints one JSON object: medians and 90th percentiles in microseconds, and their ratio.
"""

import argparse
import os
import subprocess
import sys
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
    bus = bench_e2e.Bus()
    try:
        ingest = bus.start([bench_e2e.KINESIA, "ingest", "--bus", bus.dir, "--camera", "cam0",
                            "--source", "sim:shoulderAbduction,fps=60,seed=1", "--loop",
                            "--name", "ingest0", "--state", os.path.join(bus.dir, "state"),
                            "--wait-seconds", "0"], "ingest")
        socket = os.path.join(bus.dir, "replay", "ingest0.sock")
        deadline = time.monotonic() + 15
        while not os.path.exists(socket):
            if time.monotonic() > deadline or ingest.poll() is not None:
                raise RuntimeError("the ingest did not start serving replay")
            time.sleep(0.02)
        time.sleep(2)  # 120 poses journaled: every request asks for one of the first 50
        process = subprocess.run([bench_e2e.BENCH, "replay-latency", "--endpoint", f"ipc://{socket}",
                                  "--requests", str(args.requests)], stdout=subprocess.PIPE, text=True,
                                 check=True)
        sys.stdout.write(process.stdout)
    finally:
        bus.close()


if __name__ == "__main__":
    main()
