#!/usr/bin/env python3
"""Builds the C programs the benchmarks run, and checks that they run.

    scripts/bench_programs.py [--into DIR]     # build what is missing or older than its source
    scripts/bench_programs.py --check [--into DIR]   # build, then run each one briefly

The programs: scripts/bench_zmq_floor.c (the bus benchmark's bare-libzmq floor),
scripts/bench_e2e_floor.c (the end-to-end benchmark's floor) and scripts/malloc_count.c (the
allocation counter the engine benchmark preloads). They go to .build/bench-c/ in the checkout,
never to TMPDIR, so a machine that never ran a benchmark (an empty TMPDIR) builds them on the
first `scripts/bench`, whatever `--no-build` says about the Swift products. `--check` is what
`scripts/test` runs, into a new empty directory, to prove exactly that.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIR = os.path.join(ROOT, ".build", "bench-c")

# name -> (source, extra compiler arguments, linker libraries)
PROGRAMS = {
    "bench_zmq_floor": ("bench_zmq_floor.c", [], ["-lzmq", "-lpthread"]),
    "bench_e2e_floor": ("bench_e2e_floor.c", [], ["-lzmq", "-lpthread", "-lm"]),
    "malloc_count.so": ("malloc_count.c", ["-shared", "-fPIC"], []),
}


def compiler():
    return shutil.which("gcc") or shutil.which("cc") or shutil.which("clang") or "gcc"


def path(name, directory=DEFAULT_DIR):
    """Where program `name` is (after build)."""
    return os.path.join(directory, name)


def build(directory=DEFAULT_DIR):
    """Compiles every program that is missing or older than its source; returns name -> path."""
    os.makedirs(directory, exist_ok=True)
    built = {}
    for name, (source, flags, libraries) in PROGRAMS.items():
        source_path = os.path.join(ROOT, "scripts", source)
        output = path(name, directory)
        if not os.path.exists(output) or os.path.getmtime(output) < os.path.getmtime(source_path):
            print(f"bench_programs: {compiler()} -O2 {' '.join(flags)} scripts/{source}",
                  file=sys.stderr, flush=True)
            subprocess.run([compiler(), "-O2", *flags, "-o", output, source_path, *libraries],
                           check=True, cwd=ROOT)
        built[name] = output
    return built


def write_pose_records(poses, path):
    """Writes `poses` (dicts of the recordings' JSON shape) as bench_e2e_floor's `--pose-records`
    file: each the wire format's pose record as `kinesia ingest` publishes it (by the Python
    client's encoder), after its length (UInt32, little-endian)."""
    client = os.path.join(ROOT, "clients", "python")
    if client not in sys.path:
        sys.path.insert(0, client)
    from kinesia import wire
    with open(path, "wb") as output:
        for pose in poses:
            record = wire.encode_pose(pose, 1, 0, 0)
            output.write(len(record).to_bytes(4, "little") + record)


def check_analyzing_floor(program, directory):
    """The floor's `--analyze` on real poses (a MediaPipe recording of the repository): every
    answer comes back; a record cut short is refused by its decoder, not analysed."""
    recording = os.path.join(ROOT, "data", "recordings", "p2s_balance_cam01_mediapipe.jsonl")
    with open(recording) as lines:
        poses = [json.loads(line) for _, line in zip(range(60), lines)]
    records = os.path.join(directory, "records.bin")
    write_pose_records(poses, records)
    run = subprocess.run([program, "--cameras", "2", "--workers", "1", "--seconds", "1.5",
                          "--warmup", "0.3", "--pose-records", records, "--analyze", "1"],
                         check=True, capture_output=True, text=True, timeout=120)
    result = json.loads(run.stdout.strip().splitlines()[-1])
    if not result["samples"] or result["lost_answers"] or "failed to decode" in run.stderr:
        raise SystemExit(f"bench_programs: bench_e2e_floor --analyze printed {run.stdout!r} {run.stderr!r}")
    # The first record whole but its last byte (the last confidence's): truncated, nothing else.
    with open(records, "rb") as file:
        first = file.read(int.from_bytes(file.read(4), "little"))
    if first[:4] != b"KW\x01\x01":
        raise SystemExit(f"bench_programs: {records} does not start with a pose record")
    cut = os.path.join(directory, "cut.bin")
    with open(cut, "wb") as output:
        output.write((len(first) - 1).to_bytes(4, "little") + first[:-1])
    run = subprocess.run([program, "--cameras", "1", "--seconds", "1", "--warmup", "0.2",
                          "--pose-records", cut, "--analyze", "1"],
                         check=True, capture_output=True, text=True, timeout=120)
    if "failed to decode" not in run.stderr:
        raise SystemExit(f"bench_programs: bench_e2e_floor --analyze took a cut record: {run.stderr!r}")


def check(directory):
    """Runs each program briefly; raises when one fails or prints nothing useful."""
    programs = build(directory)
    for name, program in programs.items():
        if not os.path.isfile(program):
            raise SystemExit(f"bench_programs: {program} was not built")
    # The bus floor: a tiny run over inproc prints its JSON lines.
    output = subprocess.run([programs["bench_zmq_floor"], "--messages", "1000", "--round-trips",
                             "20", "--transport", "inproc"], check=True, capture_output=True,
                            text=True, timeout=120).stdout
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    if len(lines) < 4:
        raise SystemExit(f"bench_programs: bench_zmq_floor printed {output!r}")
    # The end-to-end floor: one camera for a moment.
    output = subprocess.run([programs["bench_e2e_floor"], "--cameras", "1", "--seconds", "0.5",
                             "--warmup", "0.2"], check=True, capture_output=True, text=True,
                            timeout=120).stdout
    if not any(line.startswith("{") for line in output.splitlines()):
        raise SystemExit(f"bench_programs: bench_e2e_floor printed {output!r}")
    check_analyzing_floor(programs["bench_e2e_floor"], directory)
    # The allocation counter: preloaded, it counts this Python's allocations.
    count = subprocess.run(
        [sys.executable, "-c",
         "import ctypes; print(ctypes.c_uint64.in_dll(ctypes.CDLL(None), 'kinesia_malloc_count').value)"],
        check=True, capture_output=True, text=True, timeout=60,
        env=dict(os.environ, LD_PRELOAD=programs["malloc_count.so"])).stdout.strip()
    if not count.isdigit() or int(count) == 0:
        raise SystemExit(f"bench_programs: malloc_count.so counted {count!r}")
    print(f"bench_programs: built and ran {', '.join(programs)} in {directory}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--into", help=f"the directory (default {os.path.relpath(DEFAULT_DIR, ROOT)})")
    parser.add_argument("--check", action="store_true",
                        help="build into a new empty directory (or --into) and run each program")
    args = parser.parse_args()
    if args.check:
        if args.into:
            check(args.into)
        else:
            with tempfile.TemporaryDirectory(prefix="kinesia-bench-c-") as directory:
                check(directory)
    else:
        build(args.into or DEFAULT_DIR)


if __name__ == "__main__":
    main()
