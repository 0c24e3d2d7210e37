#!/usr/bin/env python3
"""Prints every Kinesia event of the sessions it follows exactly once, in order per session,
however late it starts: what it missed is fetched from the workers' replay endpoints.

    .venv/bin/python scripts/examples/listen_exactly_once.py --from beginning
    .venv/bin/python scripts/examples/listen_exactly_once.py --from now --prefix event/cam1/
    .venv/bin/python scripts/examples/listen_exactly_once.py --cursor cursor.txt   # resume where it stopped

The Python counterpart of `kinesia listen --from`: a SUB socket for the events and the health
reports (their "replay" field announces each worker's replay endpoint and the last sequence
number of each of its streams), a DEALER per replay endpoint, and kinesia.exactly_once.ExactlyOnce for
the decisions (docs/wire-format.md, section 11). Prints `TOPIC SEQUENCE JSON` per event (the
JSON as the worker sent it). With
--cursor FILE it starts after what the file says was printed, and rewrites the file at the end.
Needs pyzmq (scripts/setup installs it).
"""

import argparse
import json
import os
import signal
import sys
import time

from kinesia.exactly_once import ExactlyOnce
from kinesia.replay import (ReplayError, decode_replay_reply, encode_replay_request,
                            moving_streams, replay_announcement)
from kinesia.wire import WireError, decode_message
from listen_events import subscriber_endpoint


def read_cursor(path):
    cursor = {}
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as file:
            for line in file:
                if line.strip():
                    topic, stream, sequence = line.split()
                    cursor[(topic, stream)] = int(sequence)
    return cursor


def replay_actions(machine, frames, now):
    """What `machine` (ExactlyOnce) makes of one replay reply: an entry, a batch end or an
    error. Raises ReplayError or WireError for a reply that does not read, or an entry whose
    message header is another message's."""
    reply = decode_replay_reply(frames)
    if reply["type"] == "entry":
        message = decode_message(*reply["frames"])
        if (message["header"]["stream_id"] != reply["stream_id"]
                or message["header"]["sequence"] != reply["sequence"]):
            raise ReplayError("mismatch", "an entry whose header is another message's")
        return machine.received((message["topic"], reply["stream_id"]), reply["sequence"], message,
                                False, now)
    if reply["type"] == "error":
        return machine.replay_failed(reply, now)
    return machine.replay_ended(reply, now)


def send_replay_request(context, poller, dealers, unanswered, endpoint, request, now, curve=None):
    """Sends `request` to the replay server at `endpoint`, through one DEALER per endpoint (made
    and registered with `poller` on first use, at most 64). Endpoints that are not ipc:// or
    tcp:// are ignored. A DEALER with requests out and no reply for 5 s (`unanswered`: when the
    first went out) is made again: a server at its connection cap refuses the handshake, and
    libzmq never retries a refused handshake on the same socket. With `curve` (this client's
    public and secret keys and the broker's public key, Z85 bytes) the DEALER is a CURVE client:
    on a TCP bus with keys `endpoint` is the broker's replay port, PORT+3."""
    import zmq  # imported where it is used, as in main: --help works without pyzmq
    if endpoint in dealers and now - unanswered.setdefault(endpoint, now) >= 5.0:
        poller.unregister(dealers[endpoint])
        dealers.pop(endpoint).close()
        del unanswered[endpoint]
    if endpoint not in dealers:
        if not endpoint.startswith(("ipc://", "tcp://")) or len(dealers) >= 64:
            return
        dealer = context.socket(zmq.DEALER)
        dealer.setsockopt(zmq.LINGER, 0)
        dealer.setsockopt(zmq.MAXMSGSIZE, 16 * 1024)
        if curve is not None:
            dealer.curve_publickey, dealer.curve_secretkey, dealer.curve_serverkey = curve
        dealer.connect(endpoint)
        poller.register(dealer, zmq.POLLIN)
        dealers[endpoint] = dealer
        unanswered[endpoint] = now
    dealers[endpoint].send(encode_replay_request(
        request["request_id"], request["topic"], request["stream_id"], request["from"],
        request["limit"]))


def main():
    parser = argparse.ArgumentParser(description="Print Kinesia events exactly once.")
    parser.add_argument("--bus", help="tcp://HOST:PORT, or a bus directory (default: IPC)")
    parser.add_argument("--prefix", default="event/", help="events followed (default event/)")
    parser.add_argument("--from", dest="start", default="now", help="beginning, now or a sequence number")
    parser.add_argument("--cursor", help="a file with the last sequence printed per stream")
    args = parser.parse_args()
    start = args.start if args.start in ("beginning", "now") else int(args.start)
    try:
        import zmq
    except ImportError:
        raise SystemExit("pyzmq is not installed: run scripts/setup (or pip install pyzmq)")

    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.MAXMSGSIZE, 16 * 1024)
    for prefix in (args.prefix, "health/"):
        sub.setsockopt(zmq.SUBSCRIBE, prefix.encode())
    sub.connect(subscriber_endpoint(args.bus))
    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)
    dealers = {}
    unanswered = {}
    machine = ExactlyOnce(start=start, cursor=read_cursor(args.cursor), accepts=(args.prefix,))
    origin = time.monotonic()
    print(f"listening to {args.prefix!r} exactly once from {args.start}", file=sys.stderr, flush=True)

    def perform(actions, now):
        for action in actions:
            if action[0] == "deliver":
                _, key, sequence, message = action
                try:
                    json.loads(message["json"])  # strict: no raw control character gets through
                except ValueError as error:
                    print(f"skipped: {key[0]} #{sequence}: not JSON ({error})", file=sys.stderr)
                    continue
                print(key[0], sequence, message["json"], flush=True)
            elif action[0] == "lost":
                print(f"{action[1][0]}: #{action[2]}..<#{action[3]} cannot be had any more",
                      file=sys.stderr, flush=True)
            else:
                _, endpoint, request = action
                send_replay_request(context, poller, dealers, unanswered, endpoint, request, now)

    # A signal stops the loop between two messages, never in the middle of printing what the
    # machine has already counted as delivered: the cursor saved below is exactly what was printed.
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    try:
        while not stopping:
            ready = dict(poller.poll(100))
            now = time.monotonic() - origin
            for endpoint, dealer in list(dealers.items()):
                while not stopping and dealer in ready and dealer.poll(0):
                    unanswered.pop(endpoint, None)
                    try:
                        perform(replay_actions(machine, dealer.recv_multipart(), now), now)
                    except (ReplayError, WireError, ValueError) as error:
                        print(f"skipped a replay reply: {error}", file=sys.stderr)
            while not stopping and sub.poll(0):
                frames = sub.recv_multipart()
                try:
                    message = decode_message(*frames) if len(frames) == 2 else None
                except WireError as error:
                    print(f"skipped: {error}", file=sys.stderr)
                    continue
                if message is None:
                    continue
                if message["header"]["kind"] == "health":
                    announcement = replay_announcement(message["json"])
                    if announcement:
                        perform(machine.announced(announcement, now), now)
                    machine.moving(moving_streams(message["json"]), now)
                elif message["topic"].startswith(args.prefix):
                    key = (message["topic"], message["header"]["stream_id"])
                    perform(machine.received(key, message["header"]["sequence"], message, True, now), now)
            perform(machine.tick(now), now)
    finally:
        if args.cursor:
            # Replaced whole (a new file renamed over the old), never left half written.
            with open(args.cursor + ".new", "w", encoding="utf-8") as file:
                for (topic, stream), sequence in sorted(machine.cursor.items()):
                    file.write(f"{topic} {stream} {sequence}\n")
                file.flush()
                os.fsync(file.fileno())
            os.replace(args.cursor + ".new", args.cursor)
        print(f"counters {machine.counters}", file=sys.stderr)
        for socket in [sub, *dealers.values()]:
            socket.close()
        context.term()


if __name__ == "__main__":
    main()
