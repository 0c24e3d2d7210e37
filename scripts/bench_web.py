#!/usr/bin/env python3
"""The latency from a pose to a browser's screen through kinesia web's dashboard, against the
same poses' latency to their snapshot on the bus, measured in the same run; and the same with
199 more clients following /api/v1/live (the gateway's 200 streams held).

    .venv/bin/python scripts/bench_web.py [--seconds S] [--no-build]

The site as deployed on one box (journaling on): `kinesia broker`, `kinesia worker` with a left
and a right session of camera cam0, `kinesia web`, and `kinesia ingest` of a simulated shoulder
abduction at 60 poses/s, paced. Headless Chromium opens the dashboard (scripts/browser_drive.py)
and keeps, for each session's state it draws, the pose time and the page's wall clock at the
end of the drawing (`window.kinesiaShown`). A Python subscriber (the clone's environment:
kinesia.wire, pyzmq) keeps each pose's send time (its wire header, CLOCK_REALTIME of the ingest)
and each snapshot's arrival. Screen latency: drawn - pose sent; bus latency: snapshot received -
pose sent, for the same snapshots. One JSON object per line: median and p99 of both, their ratio,
the states drawn, and with 199 more clients the same.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from bench_common import KINESIA, ROOT, build_kinesia, percentile, speaker

say = speaker("bench_web")


def start(arguments, log, env):
    return subprocess.Popen([KINESIA, *arguments], stdout=log, stderr=subprocess.STDOUT, env=env)


def round_(seconds, extra_clients):
    import zmq
    from kinesia.wire import decode_json_payload, decode_pose

    directory = tempfile.mkdtemp(prefix="kinesia-bench-web.")
    os.chmod(directory, 0o700)
    bus = os.path.join(directory, "bus")
    os.mkdir(bus, 0o700)
    env = dict(os.environ, KINESIA_LOG_LEVEL="info", XDG_STATE_HOME=os.path.join(directory, "state"))
    log = open(os.path.join(directory, "log.txt"), "w")
    processes = []
    try:
        token = subprocess.run(
            [KINESIA, "web", "token", "new", "bench", "--role", "viewer", "--tokens", os.path.join(directory, "tokens")],
            check=True, capture_output=True, text=True, env=env).stdout.strip().splitlines()[-1]
        processes.append(start(["broker", "--bus", bus], log, env))
        time.sleep(0.5)
        processes.append(start(["worker", "--bus", bus, "--camera", "cam0", "--session", "left=shoulderAbduction:left",
                                "--session", "right=shoulderAbduction:right"], log, env))
        web_log = os.path.join(directory, "web.txt")
        web = subprocess.Popen([KINESIA, "web", "--bus", bus, "--listen", "127.0.0.1:0", "--tokens",
                                os.path.join(directory, "tokens")], stdout=subprocess.DEVNULL,
                               stderr=open(web_log, "w"), env=env)
        processes.append(web)
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            text = open(web_log).read()
            if "serving http://127.0.0.1:" in text:
                port = int(text.split("serving http://127.0.0.1:")[1].split("/")[0])
            time.sleep(0.05)
        if port is None:
            raise RuntimeError("kinesia web did not start")

        # The bus as an outside observer: each pose's send time, each snapshot's arrival.
        context = zmq.Context()
        subscriber = context.socket(zmq.SUB)
        subscriber.connect(f"ipc://{bus}/sub.sock")
        for prefix in (b"pose/cam0/", b"snapshot/cam0/"):
            subscriber.setsockopt(zmq.SUBSCRIBE, prefix)
        poses = {}
        snapshots = {}
        stop = threading.Event()

        def observe():
            poller = zmq.Poller()
            poller.register(subscriber, zmq.POLLIN)
            while not stop.is_set():
                if not poller.poll(100):
                    continue
                topic, payload = subscriber.recv_multipart()
                received = time.time_ns()
                if topic.startswith(b"pose/"):
                    header, pose = decode_pose(payload)
                    poses[pose["t"]] = header["sent_at_ns"]
                else:
                    _, text = decode_json_payload(payload)
                    session = topic.decode().split("/")[2]
                    snapshots.setdefault((session, json.loads(text)["t"]), received)

        observer = threading.Thread(target=observe)
        observer.start()

        # 199 more clients of the live state, reading.
        clients = []
        for _ in range(extra_clients):
            client = socket.create_connection(("127.0.0.1", port))
            client.sendall((f"GET /api/v1/live HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
            client.setblocking(False)
            clients.append(client)
        reading = threading.Event()

        def drain():
            import select
            while not reading.is_set():
                if not clients:
                    time.sleep(0.2)
                    continue
                ready, _, _ = select.select(clients, [], [], 0.2)
                for client in ready:
                    try:
                        client.recv(65536)
                    except OSError:
                        pass

        drainer = threading.Thread(target=drain)
        drainer.start()

        browser = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "scripts", "browser_drive.py"), "/usr/bin/chromium",
             os.path.join(directory, "profile"), "1000", "900", f"http://127.0.0.1:{port}/login?token={token}",
             f"eval:new Promise(done => setTimeout(() => done(JSON.stringify(window.kinesiaShown)), {int(seconds * 1000) + 3000}))"],
            stdout=subprocess.PIPE, text=True)
        time.sleep(3)
        ingest = start(["ingest", "--bus", bus, "--camera", "cam0", "--source",
                        "sim:shoulderAbduction,side=both,reps=100", "--wait-seconds", "0"], log, env)
        processes.append(ingest)
        output, _ = browser.communicate(timeout=seconds + 120)
        reading.set()
        drainer.join()
        stop.set()
        observer.join()
        subscriber.close(0)
        context.term()
        shown = json.loads(json.loads(output.strip().splitlines()[-1]))
        screen, onbus = [], []
        for entry in shown:
            sent = poses.get(entry["t"])
            session = entry["session"].split("/")[1]
            arrived = snapshots.get((session, entry["t"]))
            if sent is None or arrived is None:
                continue
            screen.append(entry["at"] - sent / 1e6)
            onbus.append((arrived - sent) / 1e6)
        if len(screen) < 20:
            raise RuntimeError(f"only {len(screen)} states drawn and matched")
        return {"bench": "web", "clients": 1 + extra_clients, "drawn": len(screen),
                "screen_median_ms": round(statistics.median(screen), 2),
                "screen_p99_ms": round(percentile(screen, 0.99), 2),
                "bus_median_ms": round(statistics.median(onbus), 2),
                "bus_p99_ms": round(percentile(onbus, 0.99), 2),
                "ratio": round(statistics.median(screen) / max(statistics.median(onbus), 0.001), 2)}
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()
        shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        build_kinesia()
    for extra in (0, 199):
        say(f"{1 + extra} client(s), {args.seconds} s")
        print(json.dumps(round_(args.seconds, extra)), flush=True)


if __name__ == "__main__":
    main()
