#!/usr/bin/env python3
"""The camera ingest's speed: detector frames per second on data/video/s2d_demo_walk.mp4, and
the share of each frame's time spent outside the detector (decoding, conversion, the pipe to the
ingest, the bus).

    scripts/bench_detector.py [--rounds R] [--no-build]

Each round runs the release `kinesia broker`, a `kinesia worker` (shoulderAbduction, both sides)
and `kinesia ingest --source video:data/video/s2d_demo_walk.mp4 --pace max`, which prints the
detector's figures at the end: frames, wall time from the model loaded to the last frame written,
and per frame the milliseconds in MediaPipe's process() call, in decoding, in converting. Outside
the detector = wall time - time in process(): decoding, conversion, writing the line (a full
pipe when the ingest or the bus lags behind), everything but the model. Needs the detector's
environment (scripts/setup-detector).

Prints one JSON object per round, then {"summary": "detector", ...} with medians and spreads.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import time

from bench_common import KINESIA, ROOT, build_kinesia, speaker

VIDEO = os.path.join(ROOT, "data", "video", "s2d_demo_walk.mp4")
SUMMARY = re.compile(
    r"detector: (\d+) frames in ([\d.]+) s \(([\d.]+) fps\), per frame ([\d.]+) ms detecting, "
    r"([\d.]+) ms decoding, ([\d.]+) ms converting, ([\d.]+) ms outside the detector in all; "
    r"(\d+) frames dropped")


say = speaker("bench_detector")


def one_round(directory):
    bus = os.path.join(directory, "bus")
    started = []
    try:
        broker = subprocess.Popen([KINESIA, "broker", "--bus", bus], stderr=subprocess.DEVNULL)
        started.append(broker)
        time.sleep(0.3)
        worker = subprocess.Popen(
            [KINESIA, "worker", "--bus", bus, "--camera", "bench", "--session",
             "left=shoulderAbduction:left", "--session", "right=shoulderAbduction:right"],
            stderr=subprocess.DEVNULL)
        started.append(worker)
        ingest = subprocess.run(
            [KINESIA, "ingest", "--bus", bus, "--camera", "bench", "--source", f"video:{VIDEO}",
             "--pace", "max", "--wait-seconds", "10"],
            stderr=subprocess.PIPE, text=True, check=True)
    finally:
        for process in reversed(started):
            process.terminate()
            process.wait()
    match = SUMMARY.search(ingest.stderr)
    if not match:
        raise SystemExit(f"bench_detector: no detector summary in:\n{ingest.stderr}")
    frames, wall, fps, detecting, decoding, converting, outside, dropped = match.groups()
    return {"bench": "detector", "frames": int(frames), "wall_s": float(wall), "fps": float(fps),
            "detector_ms": float(detecting), "decode_ms": float(decoding),
            "convert_ms": float(converting), "outside_ms": float(outside),
            "outside_share": float(outside) / (float(outside) + float(detecting)),
            "dropped": int(dropped)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        build_kinesia()
    rounds = []
    for index in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="kinesia-bench-detector.") as directory:
            record = one_round(directory)
        record["round"] = index
        rounds.append(record)
        print(json.dumps(record), flush=True)
        say(f"round {index}: {record['fps']:.1f} fps, {record['detector_ms']:.1f} ms detecting, "
            f"{record['outside_ms']:.1f} ms outside ({100 * record['outside_share']:.1f} %)")
    summary = {"summary": "detector", "rounds": len(rounds), "frames": rounds[0]["frames"]}
    for key in ("fps", "detector_ms", "decode_ms", "convert_ms", "outside_ms", "outside_share"):
        values = [r[key] for r in rounds]
        summary[key] = statistics.median(values)
        summary[f"{key}_spread"] = [min(values), max(values)]
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
