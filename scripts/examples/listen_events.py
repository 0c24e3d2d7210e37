#!/usr/bin/env python3
"""Prints every Kinesia event on the bus: a Python consumer in 80 lines.

    .venv/bin/python scripts/examples/listen_events.py                      # events of every camera
    .venv/bin/python scripts/examples/listen_events.py --prefix event/cam1/ # one camera
    .venv/bin/python scripts/examples/listen_events.py --bus tcp://10.0.0.5:5550

Subscribes on the broker's subscriber side: by default the IPC socket `sub.sock` in the bus
directory ($KINESIA_BUS, else $XDG_RUNTIME_DIR/kinesia, else /tmp/kinesia-$UID: it must be yours,
mode 0700, as `kinesia` requires); with --bus tcp://HOST:PORT, the TCP
port PORT+1 (publishers use PORT). Needs pyzmq (scripts/setup installs it); the wire format
itself is decoded by the kinesia package (clients/python), standard library only.
"""

import argparse
import json
import os
import signal
import sys

from kinesia.bus import BusDirectoryError, default_bus_directory, prepare_bus_directory
from kinesia.sequence import SequenceTracker
from kinesia.wire import WireError, decode_message


def subscriber_endpoint(bus):
    """The broker's XPUB endpoint for a --bus value (None: the default IPC directory)."""
    if bus is None:
        bus = os.environ.get("KINESIA_BUS") or default_bus_directory()
    if bus.startswith("tcp://"):
        host, _, port = bus[len("tcp://"):].rpartition(":")
        if not host or not port.isdigit():
            raise SystemExit(f"--bus: expected tcp://HOST:PORT, got {bus}")
        return f"tcp://{host}:{int(port) + 1}"
    if bus.startswith("ipc://"):
        bus = bus[len("ipc://"):]
    # A bus directory: checked (or made) as `kinesia` does, never trusted blindly.
    try:
        directory = prepare_bus_directory(os.path.abspath(bus))
    except BusDirectoryError as error:
        raise SystemExit(str(error))
    return f"ipc://{os.path.join(directory, 'sub.sock')}"


def main():
    parser = argparse.ArgumentParser(description="Print Kinesia events from the bus.")
    parser.add_argument("--bus", help="tcp://HOST:PORT, or a bus directory (default: IPC)")
    parser.add_argument("--prefix", default="event/", help="subscription prefix (default event/)")
    args = parser.parse_args()
    try:
        import zmq
    except ImportError:
        raise SystemExit("pyzmq is not installed: run scripts/setup (or pip install pyzmq)")

    endpoint = subscriber_endpoint(args.bus)
    context = zmq.Context()
    socket = context.socket(zmq.SUB)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.SUBSCRIBE, args.prefix.encode())
    socket.connect(endpoint)
    print(f"listening on {endpoint} for {args.prefix!r}", file=sys.stderr)
    tracker = SequenceTracker()
    skipped = 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # print the totals on SIGTERM too
    try:
        while True:
            frames = socket.recv_multipart()
            if len(frames) != 2:
                skipped += 1
                print(f"skipped a message of {len(frames)} frames", file=sys.stderr)
                continue
            try:
                message = decode_message(frames[0], frames[1])
            except WireError as error:
                skipped += 1
                print(f"skipped: {error}", file=sys.stderr)
                continue
            result = tracker.record(message["topic"], message["header"])
            if result.startswith("gap"):
                print(f"{message['topic']}: {result[4:]} message(s) lost", file=sys.stderr)
            elif result == "old":
                continue
            if "json" in message:
                # The bus carries whatever a publisher sent: a body that is not JSON is
                # reported and skipped, like `kinesia listen` does, never fatal.
                try:
                    body = json.loads(message["json"])
                except (ValueError, RecursionError) as error:
                    skipped += 1
                    print(f"skipped: {message['topic']} #{message['header']['sequence']}: "
                          f"the payload is not valid JSON ({error})", file=sys.stderr, flush=True)
                    continue
            else:
                body = message.get("pose")
            # ensure_ascii: a control character in a string is printed as an escape, never raw.
            print(message["topic"], message["header"]["sequence"], json.dumps(body, ensure_ascii=True),
                  flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        print(f"delivered {tracker.delivered}, missing {tracker.missing}, "
              f"restarts {tracker.restarts}, skipped {skipped}", file=sys.stderr)
        socket.close()
        context.term()


if __name__ == "__main__":
    main()
