#!/usr/bin/env python3
"""Measures a replay server's memory against many idle requesting clients (issue 19, item 8).

Starts a broker and a journaling `kinesia ingest` (a simulated recording, --keep-serving, so
it stays up to serve replay), then opens N DEALERs that each ask for one batch of poses and
never read (a receive high-water mark of 1 and a 4 KiB socket buffer, so what is sent waits in
the server, as with a slow or hostile client). Prints the ingest's resident memory before,
with the clients connected, and after they all left, and the replay counters of its last
health report.

    .venv/bin/python scripts/replay_memory.py [--kinesia .build/debug/kinesia] [--clients 2000]

Each DEALER costs this process two file descriptors (its connection and its mailbox) and the
ingest one: the soft limit of open files is raised to the hard limit first (the ingest inherits
it), and the run stops early if that is not enough for N.
"""
import argparse, json, os, resource, shutil, signal, subprocess, sys, tempfile, time

import zmq

from kinesia.replay import encode_replay_request
from kinesia.wire import HEADER_SIZE


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def last_health(context, bus, process, timeout=3.0):
    sub = context.socket(zmq.SUB)
    sub.connect(f"ipc://{bus}/sub.sock")
    sub.setsockopt(zmq.SUBSCRIBE, f"health/{process}/".encode())
    deadline = time.time() + timeout
    report = None
    while time.time() < deadline:
        if sub.poll(200):
            topic, payload = sub.recv_multipart()
            report = json.loads(payload[HEADER_SIZE:].decode())
    sub.close(0)
    return report


def raise_descriptor_limit(clients):
    """Raises RLIMIT_NOFILE to its hard limit; exits if N clients cannot fit in it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    needed = 2 * clients + 200
    if hard != resource.RLIM_INFINITY and hard < needed:
        sys.exit(f"{clients} clients need about {needed} open files here, the hard limit is {hard} "
                 f"(raise it, e.g. `ulimit -Hn {needed}` as root, or ask for fewer clients)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kinesia", default=".build/debug/kinesia")
    parser.add_argument("--clients", type=int, default=2000)
    args = parser.parse_args()
    raise_descriptor_limit(args.clients)
    root = tempfile.mkdtemp(prefix="kinesia-replay-memory-")
    bus, state = root + "/bus", root + "/state"
    os.makedirs(bus, mode=0o700)
    env = dict(os.environ, KINESIA_BUS=bus)
    procs = []
    try:
        procs.append(subprocess.Popen([args.kinesia, "broker", "--bus", bus], env=env,
                                      stderr=subprocess.DEVNULL))
        time.sleep(1)
        ingest = subprocess.Popen(
            [args.kinesia, "ingest", "--camera", "cam0", "--source", "sim:squat,reps=20",
             "--pace", "max", "--keep-serving", "--wait-seconds", "0", "--bus", bus,
             "--state", state, "--name", "ingest-cam0"], env=env, stderr=subprocess.PIPE)
        procs.append(ingest)
        endpoint = f"ipc://{bus}/replay/ingest-cam0.sock"
        for _ in range(100):
            if os.path.exists(endpoint[len("ipc://"):]):
                break
            time.sleep(0.1)
        time.sleep(4)  # the source read to its end; only replay is served now
        context = zmq.Context()
        contexts = [context]  # a context holds at most 1,023 sockets: a new one every 900
        before = rss_kib(ingest.pid)
        request = encode_replay_request(1, "pose/cam0/", 0, 0, 256)
        dealers = []
        for index in range(args.clients):
            if index and index % 900 == 0:
                contexts.append(zmq.Context())
            dealer = contexts[-1].socket(zmq.DEALER)
            dealer.setsockopt(zmq.RCVHWM, 1)
            dealer.setsockopt(zmq.RCVBUF, 4096)
            dealer.setsockopt(zmq.LINGER, 0)
            dealer.connect(endpoint)
            dealer.send(request)
            dealers.append(dealer)
        time.sleep(5)
        connected = rss_kib(ingest.pid)
        report = last_health(context, bus, "ingest-cam0")
        for dealer in dealers:
            dealer.close(0)
        time.sleep(5)
        after = rss_kib(ingest.pid)
        counters = {k: v for k, v in (report or {}).get("counters", {}).items() if "eplay" in k}
        for each in contexts:
            each.term()
        print(f"clients {args.clients}: ingest RSS {before / 1024:.1f} MiB before, "
              f"{connected / 1024:.1f} MiB connected ({(connected - before) / max(1, args.clients):.1f} KiB "
              f"per client), {after / 1024:.1f} MiB after they left "
              f"({(after - before) / max(1, args.clients):.1f} KiB per client kept)")
        print("replay counters:", json.dumps(counters, sort_keys=True))
    finally:
        for proc in reversed(procs):
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
