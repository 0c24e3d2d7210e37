#!/usr/bin/env python3
"""The pyzmq baseline of the bus benchmark: what a user would otherwise write in Python.

Same measurements as `kinesia-bench bus` and scripts/bench_zmq_floor.c: 256-byte single-frame
messages PUB to SUB, directly and through an XSUB/XPUB proxy (zmq.proxy_steerable in a thread,
which runs in C without the GIL); high-water marks of 0 so nothing is dropped; the publisher
sends probes until the subscriber has seen one, then the data; throughput timed at the
subscriber from the first data message to the last; latency as a ping-pong, median and 99th
percentile of the round trip. The subscriber and the echoer run in their own processes
(multiprocessing), as a Python user would do to escape the GIL.

    python3 scripts/bench_zmq_pyzmq.py --messages 200000 --round-trips 20000 --transport tcp

Prints one JSON object per line with "impl": "pyzmq".
"""

import argparse
import json
import multiprocessing as mp
import os
import shutil
import struct
import tempfile
import threading
import time

import zmq

SIZE = 256


def make_socket(ctx, kind):
    s = ctx.socket(kind)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.SNDHWM, 0)
    s.setsockopt(zmq.RCVHWM, 0)
    return s


def fresh(transport, directory, name):
    if transport == "ipc":
        return f"ipc://{directory}/{name}"
    return "tcp://127.0.0.1:*"


class Proxy:
    """XSUB/XPUB proxy on a thread, stopped with TERMINATE on its control socket."""

    def __init__(self, ctx, transport, directory, tag):
        self.frontend = make_socket(ctx, zmq.XSUB)
        self.backend = make_socket(ctx, zmq.XPUB)
        self.frontend.bind(fresh(transport, directory, f"{tag}-front"))
        self.backend.bind(fresh(transport, directory, f"{tag}-back"))
        self.front_ep = self.frontend.getsockopt_string(zmq.LAST_ENDPOINT)
        self.back_ep = self.backend.getsockopt_string(zmq.LAST_ENDPOINT)
        control = f"inproc://control-{tag}"
        self.control_in = make_socket(ctx, zmq.PAIR)
        self.control_in.bind(control)
        self.control_out = make_socket(ctx, zmq.PAIR)
        self.control_out.connect(control)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        zmq.proxy_steerable(self.frontend, self.backend, None, self.control_in)
        for s in (self.frontend, self.backend, self.control_in):
            s.close()

    def stop(self):
        self.control_out.send(b"TERMINATE")
        self.thread.join()
        self.control_out.close()


def receiver(endpoint, messages, probed, result):
    ctx = zmq.Context()
    sub = make_socket(ctx, zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(endpoint)
    count = 0
    start = 0.0
    while count < messages:
        data = sub.recv()
        if data[0] == ord("p"):
            probed.set()
            continue
        if count == 0:
            start = time.perf_counter()
        count += 1
    result.put((count, time.perf_counter() - start))
    sub.close()
    ctx.term()


def throughput(ctx, path, args, directory):
    proxy = Proxy(ctx, args.transport, directory, "thr") if path == "proxy" else None
    pub = make_socket(ctx, zmq.PUB)
    if proxy:
        pub.connect(proxy.front_ep)
        sub_ep = proxy.back_ep
    else:
        pub.bind(fresh(args.transport, directory, "thr"))
        sub_ep = pub.getsockopt_string(zmq.LAST_ENDPOINT)
    probed = mp.Event()
    result = mp.Queue()
    process = mp.Process(target=receiver, args=(sub_ep, args.messages, probed, result))
    process.start()
    probe = b"p" + b"x" * (SIZE - 1)
    while not probed.is_set():
        pub.send(probe)
        time.sleep(0.001)
    data = b"d" + b"x" * (SIZE - 1)
    for _ in range(args.messages):
        pub.send(data)
    received, seconds = result.get()
    process.join()
    pub.close()
    if proxy:
        proxy.stop()
    emit(bench="throughput", path=path, transport=args.transport, size=SIZE,
         messages=args.messages, received=received, seconds=round(seconds, 6),
         msgs_per_sec=round((received - 1) / seconds))


def echoer(ping_ep, pong_ep, pong_bind, ready, bound):
    ctx = zmq.Context()
    sub = make_socket(ctx, zmq.SUB)
    pub = make_socket(ctx, zmq.PUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"a")
    sub.connect(ping_ep)
    if pong_ep:
        pub.connect(pong_ep)
    else:
        pub.bind(pong_bind)
        bound.put(pub.getsockopt_string(zmq.LAST_ENDPOINT))
    ready.set()
    while True:
        data = sub.recv()
        if data[1] == ord("q"):
            break
        pub.send(b"b" + data[1:])
    sub.close()
    pub.close()
    ctx.term()


def latency(ctx, path, args, directory):
    proxy = Proxy(ctx, args.transport, directory, "lat") if path == "proxy" else None
    pub = make_socket(ctx, zmq.PUB)
    sub = make_socket(ctx, zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"b")
    ready = mp.Event()
    bound = mp.Queue()
    if proxy:
        pub.connect(proxy.front_ep)
        sub.connect(proxy.back_ep)
        ping_ep, pong_ep = proxy.back_ep, proxy.front_ep
    else:
        pub.bind(fresh(args.transport, directory, "ping"))
        ping_ep, pong_ep = pub.getsockopt_string(zmq.LAST_ENDPOINT), None
    process = mp.Process(
        target=echoer, args=(ping_ep, pong_ep, fresh(args.transport, directory, "pong"), ready, bound))
    process.start()
    ready.wait()
    if not proxy:
        sub.connect(bound.get())
    filler = b"x" * (SIZE - 10)
    warm = b"aw" + struct.pack("<q", 0) + filler
    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)
    while True:
        pub.send(warm)
        if poller.poll(1):
            break
    while True:
        try:
            sub.recv(zmq.DONTWAIT)
        except zmq.Again:
            break
    samples = []
    for sequence in range(args.round_trips):
        ping = b"ad" + struct.pack("<q", sequence) + filler
        start = time.perf_counter()
        pub.send(ping)
        while True:
            reply = sub.recv()
            if reply[1] == ord("d") and struct.unpack_from("<q", reply, 2)[0] == sequence:
                break
        samples.append((time.perf_counter() - start) * 1e6)
    pub.send(b"aq" + struct.pack("<q", 0) + filler)
    process.join()
    pub.close()
    sub.close()
    if proxy:
        proxy.stop()
    samples.sort()
    emit(bench="latency", path=path, transport=args.transport, size=SIZE,
         round_trips=args.round_trips, median_us=round(samples[len(samples) // 2], 1),
         p99_us=round(samples[int(len(samples) * 0.99)], 1))


def emit(**fields):
    print(json.dumps({"impl": "pyzmq", **fields}, separators=(",", ":")), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200000)
    parser.add_argument("--round-trips", type=int, default=20000)
    parser.add_argument("--transport", choices=["tcp", "ipc"], default="tcp")
    args = parser.parse_args()
    if args.messages < 2 or args.round_trips < 1:
        parser.error("--messages must be at least 2 and --round-trips at least 1")
    directory = tempfile.mkdtemp(prefix="kinesia-bench-py.", dir="/tmp")
    os.chmod(directory, 0o700)
    ctx = zmq.Context()
    try:
        for path in ("direct", "proxy"):
            throughput(ctx, path, args, directory)
        for path in ("direct", "proxy"):
            latency(ctx, path, args, directory)
    finally:
        ctx.term()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    mp.set_start_method("fork")
    main()
