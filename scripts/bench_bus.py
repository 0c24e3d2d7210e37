#!/usr/bin/env python3
"""Runs the bus benchmark of the three implementations and prints the ratios.

    scripts/bench_bus.py [--rounds 5] [--messages 200000] [--round-trips 20000]
                         [--transport tcp|ipc|inproc|all] [--no-build]

Builds `kinesia-bench` (release; not with --no-build) and, when missing, scripts/bench_zmq_floor.c
(scripts/bench_programs.py, into .build/bench-c/), then runs
Swift (`kinesia-bench bus`), C (the floor) and Python (scripts/bench_zmq_pyzmq.py, skipped if
pyzmq is missing) in interleaved rounds, so that the noise of a shared machine hits all three
alike. Every raw result is printed as a JSON line on stdout, then one summary line per metric:

    {"summary":"throughput","path":"proxy","transport":"tcp","c":..,"swift":..,"pyzmq":..,
     "swift_over_c":..,"pyzmq_over_c":..,"swift_over_pyzmq":..}

It also runs `kinesia-bench broker` in every round: `[topic, 256-byte payload]` messages through
the broker over TCP, with libzmq's zmq_proxy and with the broker's own forwarding loop (ZAP and
the per-role rights filter), each without and with CURVE, and prints

    {"summary":"broker","path":"forwarder_curve","transport":"tcp","swift":..,
     "over_zmq_proxy":..,"over_plain":..}

(over_zmq_proxy: this path / zmq_proxy with the same security; over_plain: this path / the same
path without CURVE).

Values are the medians over the rounds (msg/s for throughput, microseconds for latency).
BENCHMARKS.md ("Targets"): Swift throughput >= C / 1.5, Swift median latency <= 1.2 x C,
Swift throughput >= 2 x pyzmq. Timings on a shared 2-core box are noisy: compare ratios from
the same run, never absolute figures from different runs.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import bench_programs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_lines(command):
    output = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--messages", type=int, default=200000)
    parser.add_argument("--round-trips", type=int, default=20000)
    parser.add_argument("--transport", choices=["tcp", "ipc", "inproc", "all"], default="all",
                        help="inproc runs C and Swift only (pyzmq's processes cannot share it)")
    parser.add_argument("--no-build", action="store_true", help="use the binaries already built")
    args = parser.parse_args()

    swift = os.path.join(ROOT, ".build", "release", "kinesia-bench")
    if not args.no_build:
        subprocess.run(["swift", "build", "-c", "release", "--product", "kinesia-bench"], check=True,
                       cwd=ROOT, stdout=sys.stderr)
    # The C floor is built whenever it is missing, --no-build or not (a fresh machine has none).
    floor = bench_programs.build()["bench_zmq_floor"]
    have_pyzmq = subprocess.run([sys.executable, "-c", "import zmq"], capture_output=True).returncode == 0
    if not have_pyzmq:
        print("bench_bus: pyzmq not installed, skipping the Python baseline", file=sys.stderr)

    transports = ["tcp", "ipc", "inproc"] if args.transport == "all" else [args.transport]
    sizes = ["--messages", str(args.messages), "--round-trips", str(args.round_trips)]
    results = []
    for round_index in range(args.rounds):
        if "tcp" in transports:
            for line in run_lines([swift, "broker", "--messages", str(args.messages)]):
                line["round"] = round_index
                print(json.dumps(line, separators=(",", ":")), flush=True)
                results.append(line)
        for transport in transports:
            commands = [[floor, *sizes, "--transport", transport],
                        [swift, "bus", *sizes, "--transport", transport]]
            if have_pyzmq and transport != "inproc":
                commands.append([sys.executable, os.path.join(ROOT, "scripts", "bench_zmq_pyzmq.py"),
                                 *sizes, "--transport", transport])
            for command in commands:
                for line in run_lines(command):
                    line["round"] = round_index
                    print(json.dumps(line, separators=(",", ":")), flush=True)
                    results.append(line)

    for transport in transports:
        for bench, metric in (("throughput", "msgs_per_sec"), ("latency", "median_us")):
            for path in ("direct", "proxy"):
                medians = {}
                for impl in ("c", "swift", "pyzmq"):
                    values = [r[metric] for r in results if r["impl"] == impl and r["bench"] == bench
                              and r["path"] == path and r["transport"] == transport]
                    if values:
                        medians[impl] = statistics.median(values)
                summary = {"summary": bench, "metric": metric, "path": path, "transport": transport,
                           **medians}
                for a, b in (("swift", "c"), ("pyzmq", "c"), ("swift", "pyzmq")):
                    if a in medians and b in medians and medians[b]:
                        summary[f"{a}_over_{b}"] = round(medians[a] / medians[b], 3)
                print(json.dumps(summary, separators=(",", ":")), flush=True)

    broker = {}
    for path in ("zmq_proxy", "forwarder", "zmq_proxy_curve", "forwarder_curve"):
        values = [r["msgs_per_sec"] for r in results if r["bench"] == "broker" and r["path"] == path]
        if values:
            broker[path] = statistics.median(values)
    for path, value in broker.items():
        summary = {"summary": "broker", "metric": "msgs_per_sec", "path": path, "transport": "tcp",
                   "swift": value}
        proxy = "zmq_proxy_curve" if path.endswith("_curve") else "zmq_proxy"
        plain = path[:-len("_curve")] if path.endswith("_curve") else None
        if broker.get(proxy):
            summary["over_zmq_proxy"] = round(value / broker[proxy], 3)
        if plain and broker.get(plain):
            summary["over_plain"] = round(value / broker[plain], 3)
        print(json.dumps(summary, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
