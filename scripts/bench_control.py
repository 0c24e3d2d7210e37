#!/usr/bin/env python3
"""The control plane's command latency: how long `kinesia session start` waits for "started"
(request sent -> the worker's confirmation answered), stop and reset the same, and list, and
how long from a start's or reset's request to its run's `runStarted` on `session/cam0/left/`
(what an application sees of the run: "start to runStarted", "reset to runStarted"), on the
real `kinesia coordinator` and a `kinesia worker --pool` on a fresh IPC bus, with a camera
publishing (as a clinic's site is). Also the coordinator's rate of answers to a flood of list
requests from one client (requests in flight, no waiting between them). And takeover: with two
pool workers and a camera whose poses are journaled, the session's worker is killed (kill -9)
again and again; the time from each kill to the first new snapshot of the session, from the
other worker (the lease, the placement, the rebuild from checkpoint and pose journal); and the
same with two workers that each keep a state directory of their own, as on two boxes (the
rebuild from the run's first pose, as the killed worker reported it: "takeover across boxes").

    .venv/bin/python scripts/bench_control.py [--rounds N] [--no-build]

Run with the clone's Python environment (scripts/setup): it uses kinesia.control. Prints one
JSON object per line: each command's latencies (median, p99, worst, in ms) and the flood's rate.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from bench_common import KINESIA, build_kinesia, percentile, speaker

say = speaker("bench_control")


def summary(name, samples):
    ordered = sorted(samples)
    p99 = percentile(ordered, 0.99)
    return {"bench": "control", "command": name, "count": len(ordered),
            "median_ms": round(statistics.median(ordered) * 1000, 2), "p99_ms": round(p99 * 1000, 2),
            "worst_ms": round(ordered[-1] * 1000, 2)}


def wait_for(path, process, what):
    deadline = time.monotonic() + 15
    while not os.path.exists(path):
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.02)


def joined(directory, count):
    """Waits until the coordinator's log says `count` times that a worker joined."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(os.path.join(directory, "coordinator.log")) as log:
            if log.read().count("joined pool default") >= count:
                return
        time.sleep(0.05)
    raise RuntimeError("a pool worker did not join")


def takeover_times(kills, client, workers, start, bus, states, directory, joins, camera="cam1"):
    """A pool of two workers (`states`: each one's state directory by name; the first already
    runs) and a camera whose poses are journaled; the session's worker is killed (kill -9)
    `kills` times, each time restarted as a new process after its session went elsewhere. Each
    figure is the time from the kill to the first snapshot of the session newer than any before
    it: the other worker answering live (the lease, the placement, the rebuild from the
    checkpoint and the pose journal; with state directories of their own, as on two boxes, the
    rebuild from the run's first pose). Returns the times and the number of joins so far."""
    from kinesia.wire import decode_message
    import zmq

    (first, first_state), (second, second_state) = states.items()
    session = f"{camera}/left"
    start(f"ingest-{camera}", "ingest", "--camera", camera, "--source", "sim:squat", "--loop", "--wait-seconds",
          "0", "--state", os.path.join(directory, f"camera-{camera}"))
    workers[second] = start(second, "worker", "--pool", "default", "--name", second, "--state", second_state)
    joins += 1
    joined(directory, joins)
    answer = client.start(session, exercise="squat", side="left")
    if answer.outcome not in ("started", "notConfirmed"):
        raise RuntimeError(f"{session} not started: {answer.message}")
    host = answer.worker
    snapshots = zmq.Context.instance().socket(zmq.SUB)
    snapshots.setsockopt(zmq.LINGER, 0)
    snapshots.setsockopt(zmq.SUBSCRIBE, f"snapshot/{session}/".encode())
    snapshots.connect(f"ipc://{bus}/sub.sock")
    newest = -1

    def read(until):
        """Snapshots until `until` (monotonic); the time of the first newer than `newest`."""
        nonlocal newest
        first_newer = None
        while True:
            left = until - time.monotonic()
            if left <= 0 or not snapshots.poll(int(left * 1000) + 1):
                return first_newer
            topic, payload = snapshots.recv_multipart()
            sequence = decode_message(topic, payload)["header"]["sequence"]
            if sequence > newest:
                newest = sequence
                if first_newer is None:
                    first_newer = time.monotonic()

    if read(time.monotonic() + 30) is None:
        raise RuntimeError(f"{session} publishes no snapshot")
    times = []
    for _ in range(kills):
        read(time.monotonic() + 1.0)
        killed = workers[host]
        killed.kill()
        began = time.monotonic()
        killed.wait()
        read(time.monotonic() + 0.05)  # what the killed worker sent before it died
        answered = read(began + 30)
        if answered is None:
            raise RuntimeError(f"{session} not answered within 30 s of the kill of {host}")
        times.append(answered - began)
        other = second if host == first else first
        workers[host] = start(host, "worker", "--pool", "default", "--name", host, "--state", states[host])
        joins += 1
        joined(directory, joins)
        host = other
    snapshots.close()
    client.stop(session)
    return times, joins


def main():
    from kinesia.control import ControlClient, decode_answer, encode_request
    from kinesia.wire import decode_message

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--flood", type=int, default=5000)
    parser.add_argument("--takeovers", type=int, default=5, help="kill -9s of the session's pool worker")
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        build_kinesia()
    directory = tempfile.mkdtemp(prefix="kc-", dir="/tmp")
    bus, state = os.path.join(directory, "bus"), os.path.join(directory, "state")
    os.mkdir(bus, 0o700)
    processes = []

    def start(name, *arguments):
        log = open(os.path.join(directory, f"{name}.log"), "w")
        process = subprocess.Popen([KINESIA, *arguments, "--bus", bus], stdout=subprocess.DEVNULL, stderr=log)
        processes.append(process)
        return process

    try:
        broker = start("broker", "broker")
        wait_for(os.path.join(bus, "sub.sock"), broker, "the broker")
        coordinator = start("coordinator", "coordinator", "--state", state)
        wait_for(os.path.join(bus, "control.sock"), coordinator, "the coordinator")
        workers = {"w1": start("w1", "worker", "--pool", "default", "--name", "w1", "--state", state)}
        start("ingest", "ingest", "--camera", "cam0", "--source", "sim:squat", "--loop", "--wait-seconds", "0",
              "--no-journal")
        client = ControlClient(bus, timeout=10)
        deadline = time.monotonic() + 15
        while client.start("cam9/probe", exercise="squat", side="left").outcome != "started":
            if time.monotonic() > deadline:
                raise RuntimeError("no pool worker joined")
            time.sleep(0.2)
        client.stop("cam9/probe")
        import zmq
        runs = zmq.Context.instance().socket(zmq.SUB)
        runs.setsockopt(zmq.LINGER, 0)
        runs.setsockopt(zmq.SUBSCRIBE, b"session/cam0/left/")
        runs.connect(f"ipc://{bus}/sub.sock")
        time.sleep(0.5)

        def run_started(run, began):
            """The time from `began` to the runStarted of `run` (None: not within 10 s)."""
            deadline = began + 10
            while runs.poll(max(0, int((deadline - time.monotonic()) * 1000))):
                topic, payload = runs.recv_multipart()
                record = json.loads(decode_message(topic, payload)["json"])
                if record.get("type") == "runStarted" and record.get("run") == str(run):
                    return time.monotonic() - began
            return None

        latencies = {"start": [], "reset": [], "stop": [], "list": [], "start to runStarted": [],
                     "reset to runStarted": []}
        outcomes = {}
        unannounced = 0
        for _ in range(args.rounds):
            for command, call in (("start", lambda: client.start("cam0/left", exercise="squat", side="left")),
                                  ("reset", lambda: client.reset("cam0/left")),
                                  ("list", client.list),
                                  ("stop", lambda: client.stop("cam0/left"))):
                began = time.monotonic()
                answer = call()
                latencies[command].append(time.monotonic() - began)
                outcomes[answer.outcome] = outcomes.get(answer.outcome, 0) + 1
                if command in ("start", "reset") and answer.run is not None:
                    announced = run_started(answer.run, began)
                    if announced is None:
                        unannounced += 1
                    else:
                        latencies[command + " to runStarted"].append(announced)
        runs.close()
        for command, samples in latencies.items():
            print(json.dumps(summary(command, samples)), flush=True)

        # A flood: every request sent at once, then every answer read.
        import zmq
        socket = zmq.Context.instance().socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.SNDHWM, 0)
        socket.setsockopt(zmq.RCVHWM, 0)
        socket.connect(f"ipc://{bus}/control.sock")
        began = time.monotonic()
        for index in range(args.flood):
            socket.send(encode_request(f"flood-{index}", "list"))
        answered = 0
        while answered < args.flood and socket.poll(5000):
            decode_answer(socket.recv())
            answered += 1
        seconds = time.monotonic() - began
        socket.close()
        print(json.dumps({"bench": "control", "command": "list flood", "sent": args.flood, "answered": answered,
                          "answers_per_s": round(answered / seconds)}), flush=True)
        if args.takeovers > 0:
            takeovers, joins = takeover_times(
                args.takeovers, client, workers, start, bus, {"w1": state, "w2": state}, directory, 1)
            print(json.dumps(summary("takeover", takeovers) | {"kills": args.takeovers}), flush=True)
            # The same across boxes: two more workers, each with a state directory of its own;
            # the first two stop, so that the session goes between these two only.
            for name in ("w1", "w2"):
                workers[name].terminate()
                workers[name].wait(10)
            boxes = {name: os.path.join(directory, f"box-{name}") for name in ("b1", "b2")}
            workers["b1"] = start("b1", "worker", "--pool", "default", "--name", "b1", "--state", boxes["b1"])
            joined(directory, joins + 1)
            across, _ = takeover_times(
                args.takeovers, client, workers, start, bus, boxes, directory, joins + 1, camera="cam2")
            print(json.dumps(summary("takeover across boxes", across) | {"kills": args.takeovers}), flush=True)
        print(json.dumps({"summary": "control", "outcomes": outcomes, "runs_not_announced": unannounced,
                          "coordinator_running": coordinator.poll() is None}), flush=True)
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
