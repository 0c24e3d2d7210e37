#!/usr/bin/env python3
"""End-to-end latency and loss, and worker throughput, of the real `kinesia` processes, with the
bare-libzmq floor and the pyzmq pipeline as baselines measured in the same run.

    scripts/bench_e2e.py [--quick] [--rounds R] [--seconds S] [--cameras 1,8,64]
                         [--workers 1,2,4] [--skip-e2e] [--skip-throughput] [--no-build]

End to end (issue 5 item 3): `kinesia broker`; one `kinesia ingest` process per camera
(a looped 20 s recording of sim:shoulderAbduction made by `kinesia-bench poses`, at 60 poses/s,
both sides moving: the poses are held, as the floor's publishers hold their records, rather
than simulated as they go); `kinesia worker` processes (1 for one
camera, 2 otherwise: the cameras split between them) hosting two sessions per camera (left and
right) with a snapshot rate above the pose rate, so that every pose is answered by one snapshot
per session; and `kinesia-bench probe`, which sees every pose and every answer and measures
pose publish (the pose header's send time) -> answer receipt, and the answers lost. The floor
(scripts/bench_e2e_floor.c, compiled here) is the same process topology in bare libzmq doing
the same work: its publishers send the same recordings' poses as wire-format records, and its
workers decode each pose and analyse it for both sessions in C, answering with a snapshot JSON
of the same keys (`--analyze`). Rounds alternate ours and the floor. The journaled
pipeline (as deployed) is compared with the floor doing the same durable work (`--journal`:
each publisher writes every pose's journal record before sending it and syncs every 200 ms,
each worker writes its answers' records behind on a thread and syncs every second): "c" in the
summaries. The pipeline without journals is compared with the plain floor: "c_plain". The floor
as it was before it analysed (its workers relay a record of the answer's size without reading
the pose: the bus's and the journal's share alone) runs too, for reference: "c_relay".

Throughput (item 4): `kinesia-bench blast` offers a paced pose load spread over 64 cameras to
1, 2 or 4 `kinesia worker` processes (two sessions per camera, default snapshot rate); the rate
doubles until poses are lost, then bisects. A rate is sustained when every pose sent reached a
worker (nothing missing, nothing short) in two runs: the highest rate that passed is run once
more, and when that run loses something the next lower rate that passed is tried the same way. The same ramp runs the Python pipeline
(scripts/bench_pipeline_pyzmq.py) as one worker, and pools (`--no-pool` skips them): at 16
cameras, 1 and 2 `kinesia worker --pool` processes with the 32 sessions started through
`kinesia coordinator` by `kinesia session start`, against one worker with the same sessions by
`--session` ("sessions16").

Prints one JSON object per line: raw results, then {"summary": ...} lines with medians,
spreads and ratios.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import bench_programs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, ".build", "release")
KINESIA = os.path.join(RELEASE, "kinesia")
BENCH = os.path.join(RELEASE, "kinesia-bench")
FLOOR = bench_programs.path("bench_e2e_floor")
PYTHON_WORKER = os.path.join(ROOT, "scripts", "bench_pipeline_pyzmq.py")
# The clone's Python environment (scripts/setup): the kinesia package and pyzmq, for the worker.
PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
EXERCISE = "shoulderAbduction"
STOPPED = re.compile(r"stopped: (\d+) poses, (\d+) events, (\d+) snapshots, (\d+) missing")


def say(message):
    print(f"bench_e2e: {message}", file=sys.stderr, flush=True)


def emit(record):
    print(json.dumps(record, separators=(",", ":")), flush=True)


class Bus:
    """A `kinesia broker` on a fresh IPC directory, and the processes started on it."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="kb-", dir="/tmp")
        self.logs = []
        self.processes = []
        self.broker = self.start([KINESIA, "broker", "--bus", self.dir], "broker")
        deadline = time.monotonic() + 10
        while not os.path.exists(os.path.join(self.dir, "sub.sock")):
            if time.monotonic() > deadline or self.broker.poll() is not None:
                raise RuntimeError("the broker did not start")
            time.sleep(0.02)

    def start(self, command, name, stdout=subprocess.DEVNULL, stdin=None):
        log = open(os.path.join(self.dir, f"{name}.log"), "w+")
        process = subprocess.Popen(command, stdin=stdin, stdout=stdout, stderr=log, cwd=ROOT)
        process.log = log
        process.name = name
        self.processes.append(process)
        return process

    def stop(self, processes, timeout=5):
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stopped_counts(self, process, every=False):
        """The counts of the process's last "stopped:" line (`every`: of all of them together,
        one per session of a pool worker)."""
        process.log.flush()
        process.log.seek(0)
        matches = list(STOPPED.finditer(process.log.read()))
        if not matches:
            return None
        chosen = matches if every else matches[-1:]
        return {name: sum(int(m.group(index)) for m in chosen)
                for index, name in enumerate(("poses", "events", "snapshots", "missing"), start=1)}

    def close(self):
        self.stop([p for p in self.processes if p is not self.broker])
        self.stop([self.broker])
        for process in self.processes:
            process.log.close()
        if os.environ.get("KINESIA_BENCH_KEEP"):
            # The processes' logs, to see what went wrong in a run.
            say(f"kept {self.dir}")
            return
        shutil.rmtree(self.dir, ignore_errors=True)


def split(cameras, workers):
    return [[k for k in range(cameras) if k % workers == w] for w in range(workers)]


def journal_flags(bus, journal):
    """Journaling as deployed (a state directory in the bus's private directory), or off."""
    return ["--state", os.path.join(bus.dir, "state")] if journal else ["--no-journal"]


def swift_worker(bus, cameras, name, snapshot_rate=None, journal=True):
    command = [KINESIA, "worker", "--bus", bus.dir, "--name", name] + journal_flags(bus, journal)
    for k in cameras:
        command += ["--session", f"cam{k}/left={EXERCISE}:left",
                    "--session", f"cam{k}/right={EXERCISE}:right"]
    if snapshot_rate:
        command += ["--snapshot-rate", str(snapshot_rate)]
    return bus.start(command, name)


def pool_site(bus, workers, cameras):
    """A `kinesia coordinator` and `workers` pool workers (`--pool`), with both sessions of each
    camera started through the coordinator (`kinesia session start`, as a clinic's site starts
    them) and running."""
    state = os.path.join(bus.dir, "state")
    coordinator = bus.start([KINESIA, "coordinator", "--bus", bus.dir, "--state", state], "coordinator")
    processes = [bus.start([KINESIA, "worker", "--pool", "default", "--name", f"pool{w}", "--bus", bus.dir,
                            "--state", state, "--capacity", str(2 * len(cameras))], f"pool{w}")
                 for w in range(workers)]
    deadline = time.monotonic() + 30
    # Every worker joined before the first start: the sessions are placed across all of them.
    while True:
        coordinator.log.flush()
        with open(coordinator.log.name) as log:
            if log.read().count("joined pool default") >= workers:
                break
        if time.monotonic() > deadline or coordinator.poll() is not None:
            raise RuntimeError("the pool workers did not join")
        time.sleep(0.1)

    def session(*arguments):
        return subprocess.run([KINESIA, "session", *arguments, "--bus", bus.dir], capture_output=True,
                              text=True, timeout=60)

    sessions = [(f"cam{k}/{side}", side) for k in cameras for side in ("left", "right")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        started = list(pool.map(
            lambda s: session("start", s[0], "--exercise", EXERCISE, "--side", s[1]), sessions))
    refused = [r.stdout + r.stderr for r in started if "started on worker" not in r.stdout + r.stderr]
    if refused:
        raise RuntimeError(f"sessions not started: {refused[:3]}")
    while True:
        listed = json.loads(session("list", "--format", "json").stdout or "{}")
        running = [s for s in listed.get("sessions", []) if s.get("state") == "running"]
        if len(running) == len(sessions):
            break
        if time.monotonic() > deadline + 60:
            raise RuntimeError(f"the sessions did not all run: {len(running)} of {len(sessions)}")
        time.sleep(0.2)
    return [coordinator] + processes


def python_worker(bus, cameras, name):
    return bus.start([PYTHON, PYTHON_WORKER, "--bus", bus.dir, "--cameras",
                      ",".join(f"cam{k}" for k in cameras), "--sessions", "2"], name)


# End to end


# The end to end's cameras publish recordings of the simulator (RECORDED_SECONDS long, looped,
# RECORDINGS of them shared by the cameras), held in memory as the C floor's publishers hold
# their records: the source's work (a detector, outside the bus at a site; here the simulator)
# is not measured on either side. `SIMULATED_SOURCES = True` simulates each pose as it goes.
RECORDED_SECONDS = 20
RECORDINGS = 8
SIMULATED_SOURCES = False


def camera_sources(directory, cameras):
    """Each camera's `--source`: a recording made with `kinesia-bench poses` (both sides moving)."""
    if SIMULATED_SOURCES:
        return [f"sim:{EXERCISE},fps=60,seed={k + 1}" for k in range(cameras)]
    paths = []
    for k in range(min(cameras, RECORDINGS)):
        path = os.path.join(directory, f"recording{k}.jsonl")
        with open(path, "wb") as output:
            subprocess.run([BENCH, "poses", "--source", f"sim:{EXERCISE},fps=60,seed={k + 1}",
                            "--seconds", str(RECORDED_SECONDS)], stdout=output, check=True)
        paths.append(path)
    return [paths[k % len(paths)] for k in range(cameras)]


def e2e_ours(cameras, workers, seconds, warmup, journal=True):
    bus = Bus()
    try:
        worker_processes = [swift_worker(bus, group, f"worker{w}", snapshot_rate=1000, journal=journal)
                            for w, group in enumerate(split(cameras, workers))]
        time.sleep(0.5)
        sources = camera_sources(bus.dir, cameras)
        ingests = [bus.start([KINESIA, "ingest", "--bus", bus.dir, "--camera", f"cam{k}",
                              "--source", sources[k], "--loop",
                              "--wait-seconds", "20", "--name", f"ingest{k}"]
                             + journal_flags(bus, journal), f"ingest{k}")
                   for k in range(cameras)]
        # Every process up and sending before the probe's clock starts.
        time.sleep(1.0 + 0.03 * cameras)
        probe = bus.start([BENCH, "probe", "--bus", bus.dir, "--sessions", "2", "--seconds",
                           str(seconds), "--warmup", str(warmup)], "probe", stdout=subprocess.PIPE)
        out, _ = probe.communicate(timeout=seconds + 60)
        result = json.loads(out.strip().splitlines()[-1])
        # A process that ended before it was stopped (one that died at start, say) is named:
        # its cameras' answers would otherwise only show as lost.
        result["dead"] = [p.name for p in worker_processes + ingests if p.poll() is not None]
        for name in result["dead"]:
            say(f"{name} ended before it was stopped (kept in {bus.dir}/{name}.log with KINESIA_BENCH_KEEP=1)")
        bus.stop(ingests)
        bus.stop(worker_processes)
        missing = [bus.stopped_counts(p) for p in worker_processes]
        result["worker_missing"] = sum(m["missing"] for m in missing if m)
        return result
    finally:
        bus.close()


def floor_records(directory):
    """The recordings of camera_sources() as the floor's `--pose-records` files: each pose as
    `kinesia ingest` publishes it (the wire format's record, by the Python client's encoder),
    after its length (UInt32, little-endian)."""
    paths = []
    for k in range(RECORDINGS):
        poses = subprocess.run([BENCH, "poses", "--source", f"sim:{EXERCISE},fps=60,seed={k + 1}",
                                "--seconds", str(RECORDED_SECONDS)], capture_output=True,
                               check=True).stdout
        path = os.path.join(directory, f"records{k}.bin")
        bench_programs.write_pose_records((json.loads(line) for line in poses.splitlines()), path)
        paths.append(path)
    return paths


def e2e_floor(cameras, workers, seconds, warmup, pose_bytes, answer_bytes, journal=True,
              records=None):
    """The floor; with `journal`, doing the journaled pipeline's durable work, and with
    `records` (floor_records()), publishing those real poses and analysing each in its workers
    (`--analyze`): equal work. Without `records` it relays records of the sizes given."""
    command = [FLOOR, "--cameras", str(cameras), "--publishers", str(cameras), "--workers",
               str(workers), "--sessions", "2", "--fps", "60", "--seconds",
               str(seconds + 1.0 + 0.03 * cameras), "--warmup", str(warmup + 1.0 + 0.03 * cameras),
               "--pose-bytes", str(pose_bytes), "--answer-bytes", str(answer_bytes)]
    for path in records or []:
        command += ["--pose-records", path]
    if records:
        command += ["--analyze", "1"]
    journal_dir = tempfile.mkdtemp(prefix="kinesia-floor-journal-") if journal else None
    try:
        if journal_dir:
            command += ["--journal", journal_dir]
        run = subprocess.run(command, check=True, capture_output=True, text=True,
                             timeout=seconds + 120)
    finally:
        if journal_dir:
            shutil.rmtree(journal_dir, ignore_errors=True)
    for line in run.stderr.splitlines():
        say(line)  # the floor's own complaints (a pose record its workers could not decode)
    result = json.loads(run.stdout.strip().splitlines()[-1])
    result["impl"] = ("c" if journal else "c-plain") if records else "c-relay"
    return result


def run_e2e(args):
    records_dir = tempfile.mkdtemp(prefix="kinesia-floor-records-")
    try:
        return run_e2e_rounds(args, floor_records(records_dir))
    finally:
        shutil.rmtree(records_dir, ignore_errors=True)


def run_e2e_rounds(args, records):
    results = []
    sizes = {"pose": 549, "answer": 327}
    for round_index in range(args.rounds):
        for cameras in args.cameras:
            workers = 1 if cameras == 1 else 2
            say(f"e2e round {round_index + 1}/{args.rounds}: {cameras} cameras, {workers} workers")
            if args.journal_cost:
                # The journal's cost: the same run without journaling (the default journals).
                bare = e2e_ours(cameras, workers, args.seconds, args.warmup, journal=False)
                bare.update({"impl": "kinesia-no-journal", "bench": "e2e", "cameras": cameras,
                             "workers": workers, "round": round_index})
                emit(bare)
                results.append(bare)
            ours = e2e_ours(cameras, workers, args.seconds, args.warmup)
            if ours.get("pose_bytes_mean"):
                sizes["pose"] = round(ours["pose_bytes_mean"])
            if ours.get("snapshot_bytes_mean"):
                sizes["answer"] = round(ours["snapshot_bytes_mean"])
            ours.update({"impl": "kinesia", "bench": "e2e", "cameras": cameras, "workers": workers,
                         "round": round_index})
            emit(ours)
            results.append(ours)
            floor = e2e_floor(cameras, workers, args.seconds, args.warmup, sizes["pose"],
                              sizes["answer"], records=records)
            floor.update({"bench": "e2e", "round": round_index})
            emit(floor)
            results.append(floor)
            # The floor as it was before it analysed: a relay of records of the same sizes (the
            # bus's and the journal's share alone), for reference.
            relay = e2e_floor(cameras, workers, args.seconds, args.warmup, sizes["pose"],
                              sizes["answer"])
            relay.update({"bench": "e2e", "round": round_index})
            emit(relay)
            results.append(relay)
            if args.journal_cost:
                plain = e2e_floor(cameras, workers, args.seconds, args.warmup, sizes["pose"],
                                  sizes["answer"], journal=False, records=records)
                plain.update({"bench": "e2e", "round": round_index})
                emit(plain)
                results.append(plain)
    for cameras in args.cameras:
        mine = [r for r in results if r["impl"] == "kinesia" and r["cameras"] == cameras]
        base = [r for r in results if r["impl"] == "c" and r["cameras"] == cameras]
        summary = {"summary": "e2e", "cameras": cameras, "workers": mine[0]["workers"],
                   "rounds": len(mine)}
        for key, mine_key, base_key in (("median_us", "snapshot_median_us", "median_us"),
                                        ("p99_us", "snapshot_p99_us", "p99_us"),
                                        ("max_us", "snapshot_max_us", "max_us")):
            ours_values = [r[mine_key] for r in mine if r.get(mine_key) is not None]
            floor_values = [r[base_key] for r in base if r.get(base_key)]
            if ours_values and floor_values:
                summary[f"kinesia_{key}"] = statistics.median(ours_values)
                summary[f"kinesia_{key}_spread"] = [min(ours_values), max(ours_values)]
                summary[f"c_{key}"] = statistics.median(floor_values)
                summary[f"c_{key}_spread"] = [min(floor_values), max(floor_values)]
                summary[f"{key}_ratio"] = round(summary[f"kinesia_{key}"] / summary[f"c_{key}"], 3)
        for leg in ("first_leg_median_us", "second_leg_median_us"):
            ours_values = [r[leg] for r in mine if r.get(leg) is not None]
            floor_values = [r[leg] for r in base if r.get(leg) is not None]
            if ours_values and floor_values:
                summary[f"kinesia_{leg}"] = statistics.median(ours_values)
                summary[f"c_{leg}"] = statistics.median(floor_values)
        events = [r["event_median_us"] for r in mine if r.get("event_median_us") is not None]
        summary["kinesia_event_median_us"] = statistics.median(events) if events else None
        summary["kinesia_event_samples"] = sum(r.get("event_samples", 0) for r in mine)
        summary["kinesia_samples"] = sum(r.get("snapshot_samples", 0) for r in mine)
        summary["kinesia_expected_answers"] = sum(r["expected_answers"] for r in mine)
        summary["kinesia_lost_answers"] = sum(r["lost_answers"] for r in mine)
        summary["kinesia_gaps"] = sum(r["pose_gaps"] + r["snapshot_gaps"] + r["event_gaps"]
                                      for r in mine)
        summary["kinesia_worker_missing"] = sum(r.get("worker_missing", 0) for r in mine)
        summary["c_expected_answers"] = sum(r["expected_answers"] for r in base)
        summary["c_lost_answers"] = sum(r["lost_answers"] for r in base)
        # 60 poses/s per camera is the rate this benchmark reports as sustained: a lost answer,
        # in any round, with the journal (as deployed) or without, fails it.
        for impl in ("kinesia", "kinesia-no-journal"):
            for r in results:
                if r["impl"] == impl and r["cameras"] == cameras and (r["lost_answers"]
                                                                       or r.get("worker_missing")
                                                                       or r.get("dead")):
                    FAILURES.append(f"e2e {impl} {cameras} camera(s), round {r['round'] + 1}: "
                                    f"{r['lost_answers']} of {r['expected_answers']} answers lost, "
                                    f"{r.get('worker_missing', 0)} poses missing at 60 poses/s a camera"
                                    + (f", ended early: {', '.join(r['dead'])}" if r.get("dead") else ""))
        bare = [r["snapshot_median_us"] for r in results if r["impl"] == "kinesia-no-journal"
                and r["cameras"] == cameras and r.get("snapshot_median_us") is not None]
        if bare and summary.get("kinesia_median_us"):
            summary["kinesia_no_journal_median_us"] = statistics.median(bare)
            summary["journal_median_ratio"] = round(summary["kinesia_median_us"]
                                                    / statistics.median(bare), 3)
        relay = [r["median_us"] for r in results if r["impl"] == "c-relay"
                 and r["cameras"] == cameras and r.get("median_us")]
        if relay and summary.get("kinesia_median_us"):
            summary["c_relay_median_us"] = statistics.median(relay)
            summary["relay_median_ratio"] = round(summary["kinesia_median_us"]
                                                  / statistics.median(relay), 3)
        plain = [r["median_us"] for r in results if r["impl"] == "c-plain"
                 and r["cameras"] == cameras and r.get("median_us")]
        if plain:
            summary["c_plain_median_us"] = statistics.median(plain)
            if bare:
                summary["no_journal_median_ratio"] = round(statistics.median(bare)
                                                           / statistics.median(plain), 3)
        emit(summary)


# Throughput


# Figures reported as sustained whose run lost something: main() names them and exits 1.
FAILURES = []


def throughput_step(impl, workers, cameras, rate, seconds, warmup=0.0, skip_every=None):
    """One step: `rate` poses/s for `seconds` to fresh workers; with `warmup`, a fifth of the
    rate for that long first (the workers' files made, their first checkpoints written: a
    worker's first seconds cost more than its steady state), counted for loss, not for CPU.
    With `skip_every`, the generator leaves a hole in each camera's numbers after every
    `skip_every`-th pose (a publisher that serves no replay): `lost` counts what is missing
    beyond those holes."""
    bus = Bus()
    try:
        groups = split(cameras, workers)
        if impl == "pool":
            site = pool_site(bus, workers, range(cameras))
            processes = site[1:]
        elif impl == "python":
            processes = [python_worker(bus, group, f"pyworker{w}") for w, group in enumerate(groups)]
        else:
            # "kinesia" is as deployed (journaling on); "kinesia-no-journal" the same without.
            processes = [swift_worker(bus, group, f"worker{w}", journal=impl == "kinesia")
                         for w, group in enumerate(groups)]
        warm_sent = 0
        if warmup:
            warm = subprocess.run([BENCH, "blast", "--bus", bus.dir, "--cameras", str(cameras),
                                   "--rate", str(max(1000, rate // 5)), "--seconds", str(warmup)],
                                  check=True, capture_output=True, text=True, timeout=warmup + 60)
            warm_sent = json.loads(warm.stdout.strip().splitlines()[-1])["sent"]
            time.sleep(0.3)
        ticks_before = sum(cpu_ticks(p) for p in processes)
        blast = subprocess.run([BENCH, "blast", "--bus", bus.dir, "--cameras", str(cameras),
                                "--rate", str(rate), "--seconds", str(seconds)]
                               + (["--skip-every", str(skip_every)] if skip_every else []),
                               check=True, capture_output=True, text=True, timeout=seconds + 60)
        sent = json.loads(blast.stdout.strip().splitlines()[-1])
        # The workers get 0.2 s (and their own 0.5 s graceful drain) to finish what is
        # queued: steps are long enough that the queues (about 40,000 poses between the
        # generator and a worker) are a small part of what is sent.
        time.sleep(0.2)
        worker_ticks = sum(cpu_ticks(p) for p in processes) - ticks_before
        bus.stop(processes, timeout=10)
        if impl == "pool":
            # A pool worker runs each session in a service of its own, with its own subscriber:
            # every camera's poses are received once per session (two).
            counts = [bus.stopped_counts(p, every=True) for p in processes]
            received = sum(c["poses"] for c in counts if c) // 2
        else:
            counts = [bus.stopped_counts(p) for p in processes]
            received = sum(c["poses"] for c in counts if c)
        skipped = sent.get("skipped", 0)
        missing = max(0, sum(c["missing"] for c in counts if c) - skipped)
        lost = max(0, warm_sent + sent["sent"] - received)
        return {"impl": impl, "bench": "throughput-step", "workers": workers, "cameras": cameras,
                "rate_offered": rate, "rate_sent": sent["rate_sent"], "sent": sent["sent"],
                "received": received, "missing": missing, "lost": lost,
                "blocked": sent["blocked"], "skipped": skipped, "seconds": sent["seconds"],
                "worker_cpu_ticks": worker_ticks,
                "received_per_s": round((received - warm_sent) / sent["seconds"]),
                "ok": lost == 0 and missing == 0 and None not in counts
                and sent["rate_sent"] >= 0.97 * rate}
    finally:
        bus.close()


def cpu_ticks(process):
    """The CPU time a process has used (user and system, in clock ticks), 0 once it ended."""
    try:
        with open(f"/proc/{process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def alternated_ticks(bench, rate, seconds, rounds, variants):
    """One journaled or bare worker, 64 cameras, at a fixed `rate`, each of `variants` (a name:
    (impl, skip_every) pair) in turn `rounds` times, each after a 3 s warm-up; each step emitted
    as `bench`. Returns the worker's CPU ticks per variant and whether every step lost nothing."""
    ticks = {name: [] for name in variants}
    lossless = True
    for round_index in range(rounds):
        for name, (impl, skip_every) in variants.items():
            step = throughput_step(impl, 1, 64, rate, seconds, warmup=3.0, skip_every=skip_every)
            step.update({"bench": bench, "round": round_index, "variant": name})
            emit(step)
            ticks[name].append(step["worker_cpu_ticks"])
            lossless = lossless and step["ok"]
    return ticks, lossless


def ratio_of_medians(on, off):
    return round(statistics.median(on) / statistics.median(off), 3) if statistics.median(off) else None


def journal_cpu(rate, seconds, rounds):
    """The journal's cost as CPU: one worker, 64 cameras, at a rate both sustain, journaling on
    and off alternated `rounds` times, each after a warm-up; the worker's CPU ticks for the
    same poses, and their ratio. Less noisy than the ramps' ratio, where one lost burst moves a
    figure by a step."""
    ticks, lossless = alternated_ticks("throughput-cpu", rate, seconds, rounds, {
        "kinesia": ("kinesia", None), "kinesia-no-journal": ("kinesia-no-journal", None)})
    if not lossless:
        # The rate is one both workers are run at as sustained: a loss there is a failure.
        FAILURES.append(f"throughput journal CPU: poses lost at {rate} poses/s")
    return {"journal_cpu_rate": rate, "journal_cpu_ticks": ticks["kinesia"],
            "no_journal_cpu_ticks": ticks["kinesia-no-journal"], "journal_cpu_lossless": lossless,
            "journal_cpu_ratio": ratio_of_medians(ticks["kinesia"], ticks["kinesia-no-journal"])}


def holes_cpu(rate, seconds, rounds, skip_every=20):
    """Holes on purpose: one journaled worker, 64 cameras, at a rate it sustains, from a
    generator that leaves a hole after every `skip_every`-th pose of each camera and serves no
    replay, alternated `rounds` times with the same generator without holes, each after a
    warm-up; the worker's CPU ticks for the poses, their ratio, and whether anything beyond the
    holes was lost (a publisher that sends holes on purpose must not slow a worker down)."""
    ticks, lossless = alternated_ticks("throughput-holes", rate, seconds, rounds, {
        "holes": ("kinesia", skip_every), "none": ("kinesia", None)})
    if not lossless:
        FAILURES.append(f"throughput holes: poses lost beyond the holes at {rate} poses/s")
    return {"holes_rate": rate, "holes_every": skip_every, "holes_cpu_ticks": ticks["holes"],
            "no_holes_cpu_ticks": ticks["none"], "holes_lossless": lossless,
            "holes_cpu_ratio": ratio_of_medians(ticks["holes"], ticks["none"])}


def ramp(impl, workers, cameras, seconds, start, bisect_steps, warmup=0.0):
    """The highest rate that lost nothing twice. Each step starts fresh workers and, with
    `warmup`, runs them at a fifth of the rate for that long first (counted for loss): the figure
    is what a running worker sustains, not what it drops while it makes its files and first
    checkpoints under the full rate from its first pose (a start transient, apart)."""
    good, bad, steps = None, None, []
    rate = start
    while True:
        step = throughput_step(impl, workers, cameras, rate, seconds, warmup)
        emit(step)
        steps.append(step)
        if step["ok"]:
            good = rate
            if rate >= 3_200_000:
                break
            rate *= 2
        else:
            bad = rate
            break
    if good is not None and bad is not None:
        for _ in range(bisect_steps):
            rate = int((good + bad) / 2)
            step = throughput_step(impl, workers, cameras, rate, seconds, warmup)
            emit(step)
            steps.append(step)
            if step["ok"]:
                good = rate
            else:
                bad = rate
    # A rate is reported as sustained only when it lost nothing twice: the highest passing rate
    # is run once more; when that run loses something, the rates between it and the next lower
    # rate that passed are bisected (as above), and the highest that passes is tried the same
    # way, so that one unlucky run does not halve the figure (the rates that passed once and
    # then lost are kept as "unconfirmed").
    passed = sorted({s["rate_offered"] for s in steps if s["ok"]}, reverse=True)
    confirmed, unconfirmed = None, []
    while passed:
        rate = passed.pop(0)
        step = throughput_step(impl, workers, cameras, rate, seconds, warmup)
        step["confirmation"] = True
        emit(step)
        steps.append(step)
        if step["ok"]:
            confirmed = rate
            break
        unconfirmed.append({"rate": rate, "lost": step["lost"], "missing": step["missing"],
                            "sent": step["sent"]})
        say(f"throughput {impl} {workers} worker(s): {rate} poses/s passed once, then lost "
            f"{step['lost']} of {step['sent']}: not reported as sustained")
        if not passed:
            break
        low, high = passed[0], rate
        for _ in range(bisect_steps):
            middle = int((low + high) / 2)
            if middle in (low, high):
                break
            step = throughput_step(impl, workers, cameras, middle, seconds, warmup)
            emit(step)
            steps.append(step)
            if step["ok"]:
                low = middle
                passed.insert(0, middle)
            else:
                high = middle
    if passed and confirmed is None:
        FAILURES.append(f"throughput {impl} {workers} worker(s): no rate lost nothing twice "
                        f"(unconfirmed: {unconfirmed})")
    overloaded = [s["received_per_s"] for s in steps if not s["ok"]]
    return {"max_lossless_rate": confirmed or 0, "first_lossy_rate": bad, "confirmed": confirmed is not None,
            "unconfirmed": unconfirmed,
            "received_per_s_when_overloaded": max(overloaded) if overloaded else None}


def run_throughput(args):
    results = {}
    for round_index in range(args.throughput_rounds):
        for workers in args.workers:
            say(f"throughput round {round_index + 1}/{args.throughput_rounds}: {workers} Swift workers")
            result = ramp("kinesia", workers, 64, args.step_seconds, args.start_rate, args.bisect,
                          args.step_warmup)
            result.update({"impl": "kinesia", "bench": "throughput", "workers": workers,
                           "round": round_index})
            emit(result)
            results.setdefault(("kinesia", workers), []).append(result)
            if workers == 1 and args.journal_cost:
                # The journal's cost in lossless rate: ramps with and without it, alternated
                # (a single pair of ramps differs by a step of chance: one lost burst).
                def journal_ramp(impl, pair):
                    result = ramp(impl, 1, 64, args.step_seconds, args.start_rate, args.bisect,
                                  args.step_warmup)
                    result.update({"impl": impl, "bench": "throughput", "workers": 1,
                                   "round": round_index, "pair": pair})
                    emit(result)
                    results.setdefault((impl, 1), []).append(result)

                for pair in range(args.journal_ramps if round_index == 0 else 1):
                    if pair > 0:
                        say(f"throughput: 1 Swift worker, journal pair {pair + 1}/{args.journal_ramps}")
                        journal_ramp("kinesia", pair)
                    say(f"throughput round {round_index + 1}/{args.throughput_rounds}: 1 Swift worker, no journal")
                    journal_ramp("kinesia-no-journal", pair)
        if args.pool:
            # Pools: the sessions placed by the coordinator on 1 or 2 pool workers, against one
            # worker with the same sessions by --session, at 16 cameras (a pool worker's default
            # capacity is 16 sessions: 32 here).
            for impl, workers in (("sessions16", 1), ("pool", 1), ("pool", 2)):
                say(f"throughput round {round_index + 1}/{args.throughput_rounds}: {impl}, {workers} worker(s), 16 cameras")
                step_impl = "kinesia" if impl == "sessions16" else impl
                result = ramp(step_impl, workers, 16, args.step_seconds, args.start_rate, args.bisect,
                              args.step_warmup)
                result.update({"impl": impl, "bench": "throughput", "workers": workers, "cameras": 16,
                               "round": round_index})
                emit(result)
                results.setdefault((impl, workers), []).append(result)
        if not os.access(PYTHON, os.X_OK) or subprocess.run(
                [PYTHON, "-c", "import zmq, kinesia.wire"], capture_output=True).returncode != 0:
            say("no .venv with kinesia and pyzmq (scripts/setup): skipping the Python baseline")
            continue
        say(f"throughput round {round_index + 1}/{args.throughput_rounds}: 1 Python worker")
        result = ramp("python", 1, 64, args.step_seconds, max(1000, args.start_rate // 8),
                      args.bisect, args.step_warmup)
        result.update({"impl": "python", "bench": "throughput", "workers": 1, "round": round_index})
        emit(result)
        results.setdefault(("python", 1), []).append(result)
    summary = {"summary": "throughput", "cameras": 64, "sessions_per_camera": 2,
               "step_warmup_seconds": args.step_warmup}
    for (impl, workers), runs in sorted(results.items()):
        values = [r["max_lossless_rate"] for r in runs]
        summary[f"{impl}_{workers}w_max_lossless_rate"] = statistics.median(values)
        summary[f"{impl}_{workers}w_spread"] = [min(values), max(values)]
        overloaded = [r["received_per_s_when_overloaded"] for r in runs
                      if r["received_per_s_when_overloaded"]]
        if overloaded:
            summary[f"{impl}_{workers}w_received_per_s_when_overloaded"] = statistics.median(overloaded)
    one = summary.get("kinesia_1w_max_lossless_rate")
    bare = summary.get("kinesia-no-journal_1w_max_lossless_rate")
    if one and bare:
        summary["journal_throughput_ratio"] = round(one / bare, 3)
    if args.journal_cost and args.journal_cpu_rounds:
        say(f"throughput: the journal's CPU at {args.journal_cpu_rate} poses/s, "
            f"{args.journal_cpu_rounds} alternated runs each")
        summary.update(journal_cpu(args.journal_cpu_rate, args.step_seconds, args.journal_cpu_rounds))
    if args.holes_rounds:
        say(f"throughput: holes on purpose (one every {args.holes_every} poses a camera) at "
            f"{args.journal_cpu_rate} poses/s, {args.holes_rounds} alternated runs each")
        summary.update(holes_cpu(args.journal_cpu_rate, args.step_seconds, args.holes_rounds,
                                 args.holes_every))
    python = summary.get("python_1w_max_lossless_rate")
    if one and python:
        summary["kinesia_over_python"] = round(one / python, 2)
    emit(summary)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs, one round")
    parser.add_argument("--rounds", type=int, help="e2e rounds (3; 1 with --quick)")
    parser.add_argument("--throughput-rounds", type=int, default=1,
                        help="throughput ramps per configuration (each ramp is several runs)")
    parser.add_argument("--seconds", type=float, help="probe time per e2e run")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--cameras", default="1,8,64")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--step-seconds", type=float, help="blast time per throughput step")
    parser.add_argument("--step-warmup", type=float,
                        help="seconds at a fifth of the rate before each throughput step, counted for "
                             "loss (1.5; 1 with --quick; 0: each step from the workers' first pose)")
    parser.add_argument("--start-rate", type=int, default=25_000)
    parser.add_argument("--bisect", type=int, help="bisection steps after the first loss")
    parser.add_argument("--journal-ramps", type=int,
                        help="ramps of one worker with and without the journal, alternated (3; 1 with --quick)")
    parser.add_argument("--journal-cpu-rounds", type=int,
                        help="fixed-rate runs of one worker with and without the journal, alternated, "
                             "for the journal's CPU ratio (3; 1 with --quick; 0: none)")
    parser.add_argument("--journal-cpu-rate", type=int, default=100_000,
                        help="the fixed rate of those runs, poses/s")
    parser.add_argument("--holes-rounds", type=int,
                        help="fixed-rate runs of one worker fed holes on purpose and without, alternated, "
                             "for the holes' CPU ratio (3; 1 with --quick; 0: none)")
    parser.add_argument("--holes-every", type=int, default=20,
                        help="a hole after every this many poses of each camera (20: 5 %%, as the issue's publisher)")
    parser.add_argument("--no-journal-cost", dest="journal_cost", action="store_false",
                        help="skip the e2e runs without journaling (the journal's latency cost)")
    parser.add_argument("--skip-e2e", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--no-pool", dest="pool", action="store_false",
                        help="skip the pool workers' throughput (16 cameras, 1 and 2 pool workers)")
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--binaries", help="the directory of the kinesia and kinesia-bench to measure "
                        "(another commit's release build, for a comparison; implies --no-build)")
    args = parser.parse_args()
    if args.binaries:
        global KINESIA, BENCH
        KINESIA = os.path.join(os.path.abspath(args.binaries), "kinesia")
        BENCH = os.path.join(os.path.abspath(args.binaries), "kinesia-bench")
        args.no_build = True
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.seconds = args.seconds or (5.0 if args.quick else 12.0)
    args.step_seconds = args.step_seconds or (2.0 if args.quick else 5.0)
    args.step_warmup = args.step_warmup if args.step_warmup is not None else (1.0 if args.quick else 1.5)
    args.bisect = args.bisect if args.bisect is not None else (0 if args.quick else 2)
    args.journal_ramps = args.journal_ramps or (1 if args.quick else 3)
    args.journal_cpu_rounds = (args.journal_cpu_rounds if args.journal_cpu_rounds is not None
                               else (1 if args.quick else 3))
    args.holes_rounds = (args.holes_rounds if args.holes_rounds is not None
                         else (1 if args.quick else 3))
    args.cameras = [int(c) for c in args.cameras.split(",")]
    args.workers = [int(w) for w in args.workers.split(",")]

    if not args.no_build:
        for product in ("kinesia", "kinesia-bench"):
            subprocess.run(["swift", "build", "-c", "release", "--product", product], check=True,
                           cwd=ROOT, stdout=sys.stderr)
    bench_programs.build()  # the C floor, when missing or older than its source
    if not args.skip_e2e:
        run_e2e(args)
    if not args.skip_throughput:
        run_throughput(args)
    for failure in FAILURES:
        say(f"FAILED: {failure}")
    if FAILURES:
        sys.exit(1)


if __name__ == "__main__":
    main()
