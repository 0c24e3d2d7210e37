#!/usr/bin/env python3
"""Writes every Kinesia event of the bus to one CSV file per session, exactly once, across its
own crashes: what a clinic's own software would do with the bus.

    .venv/bin/python scripts/examples/events_to_csv.py --out csv/ --from beginning
    .venv/bin/python scripts/examples/events_to_csv.py --out csv/ --camera cam0
    .venv/bin/python scripts/examples/events_to_csv.py --bus tcp://10.0.0.5:5550 --out csv/ \\
        --key clinic.key --server-key broker.pub

One file per session, `CAMERA-SESSION.csv` in --out (`event/cam0/left/` gives `cam0-left.csv`),
a header row, then one row per event: its stream id, its sequence number, the pose time, the
event type and its fields (scripts/examples/README.md lists the columns). A session of analytics
records (`NAME=EXERCISE:analytics`) gets the analytics columns in its own file
(`cam0-analytics.csv`). Each batch of rows is written with the csv module, flushed and fsynced.

The CSV files are the cursor: at start, and when a session is first seen, its file is read, a
torn last row (a write cut by a kill) is cut off, and the last row of each stream gives the
sequence after which delivery resumes (kinesia.exactly_once.ExactlyOnce, with replay from the
workers' replay endpoints; on a TCP bus with keys, through the broker's replay port, PORT+3). So a kill -9 and a restart leave the files equal to those of a run without
faults: no row lost, none twice (as long as the workers journal, `--state`, and so still hold
what was published while this program was down).

Bad input never stops it: a message that does not decode, an event whose JSON has not the shape
of its type, a gap that replay cannot fill are counted and reported on standard error, and so
are the connections to the broker ("connected to ...") and its refusals ("refused: ..."). SIGTERM
or Ctrl-C end it, printing the counters. Needs pyzmq (scripts/setup installs it).
"""

import argparse
import csv
import io
import json
import os
import signal
import sys
import time

from kinesia.exactly_once import ExactlyOnce
from kinesia.replay import ReplayError, moving_streams, replay_announcement
from kinesia.wire import WireError, decode_analytics, decode_message, make_topic, parse_topic
from listen_events import subscriber_endpoint
from listen_exactly_once import replay_actions, send_replay_request

# The columns. A cell holds the JSON value as the worker wrote it (numbers in their JSON text,
# booleans `true`/`false`, arrays joined with `;`, objects of counts as `name=count;...`), empty
# when the event has no such field. `json` is the whole payload, as sent.
MOTION_COLUMNS = [
    "stream", "sequence", "t", "type",
    "repNumber",      # rep and hold rows: the n-th judged rep of the stream (clean and rejected), from 1
    "cleanCount",     # rep and hold rows: clean reps of the stream so far
    "hold",           # rep and hold rows: true when it ends a hold (it follows a holdStarted)
    "peak", "start", "end",
    "duration",       # rep and hold rows: end - start (seconds; a hold's length)
    "faults",         # repRejected: why; formFault: the fault
    "isVisible", "missingJoints",   # visibilityChanged
    "setupIssues",    # setupChanged (empty: the placement is fixed)
    "value",          # baselineCompleted
    "json",
]
ANALYTICS_COLUMNS = [
    "stream", "sequence", "t", "type", "side", "set", "rep", "pair", "clean", "faults",
    "peak", "low", "range", "start", "peakTime", "end",
    "timeUp", "timeAtTop", "timeDown", "timeUnderTension",
    "left.rep", "left.peak", "left.range", "left.timeUnderTension",
    "right.rep", "right.peak", "right.range", "right.timeUnderTension",
    "peakDifference", "rangeRatio", "tempoRatio",
    "complete", "reps", "rejected", "rejectedShare", "rejectedByFault", "rejectedShareByFault",
    "firstPeak", "lastPeak", "peakSlope", "meanCleanPeak", "baseline", "progress",
    "progressPercent",
    "json",
]
HEADERS = {"motion": MOTION_COLUMNS, "analytics": ANALYTICS_COLUMNS}
REP_TYPES = ("repCompleted", "repRejected")


class Number(str):
    """A JSON number, kept as the text the worker wrote (Swift's shortest round-trip form)."""


def _refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def parse_json(text):
    """The payload's JSON, numbers as Number. Raises ValueError (NaN and Infinity too)."""
    return json.loads(text, parse_float=Number, parse_int=Number, parse_constant=_refuse_constant)


def cell(value):
    """A JSON value as a CSV cell."""
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, list):
        return ";".join(cell(item) for item in value)
    if isinstance(value, dict):
        return ";".join(f"{key}={cell(item)}" for key, item in value.items())
    return str(value)


def _need(value, kind, what):
    ok = {"number": isinstance(value, Number), "string": isinstance(value, str)
          and not isinstance(value, Number), "bool": value is True or value is False,
          "names": isinstance(value, list) and all(isinstance(item, str)
                                                   and not isinstance(item, Number)
                                                   for item in value),
          "object": isinstance(value, dict)}[kind]
    if not ok:
        expected = {"number": "a number", "string": "a string", "bool": "true or false",
                    "names": "a list of names", "object": "an object"}[kind]
        raise ValueError(f"{what} is missing or not {expected}")
    return value


class StreamState:
    """What a motion session's rows derive from the rows before them, per stream."""

    def __init__(self):
        self.sequence = None   # the last sequence written
        self.reps = 0          # judged reps so far
        self.clean = 0         # clean reps so far
        self.holding = False   # a holdStarted not yet ended by a rep

    def advance(self, event_type):
        """Counts an event of `event_type`; for a rep, returns (repNumber, cleanCount, hold)."""
        if event_type == "holdStarted":
            self.holding = True
        elif event_type in REP_TYPES:
            self.reps += 1
            self.clean += event_type == "repCompleted"
            hold, self.holding = self.holding, False
            return self.reps, self.clean, hold
        return None


def motion_row(stream, sequence, text, state):
    """The row of a motion event (MotionJSON's shapes; an unknown type gets its type, time and
    JSON), advancing `state`. Raises ValueError for JSON that is not an event of its type."""
    event = parse_json(text)
    _need(event, "object", "the payload")
    event_type = _need(event.get("type"), "string", '"type"')
    t = _need(event.get("t"), "number", '"t"')
    fields = {"stream": stream, "sequence": str(sequence), "t": t, "type": event_type, "json": text}
    if event_type in REP_TYPES:
        rep = _need(event.get("rep"), "object", "rep")
        for key in ("peak", "start", "end"):
            fields[key] = _need(rep.get(key), "number", f"rep.{key}")
        fields["faults"] = _need(rep.get("faults"), "names", "rep.faults")
        fields["duration"] = repr(float(rep["end"]) - float(rep["start"]))
    elif event_type == "formFault":
        fields["faults"] = [_need(event.get("fault"), "string", "fault")]
    elif event_type == "visibilityChanged":
        visibility = _need(event.get("visibility"), "object", "visibility")
        fields["isVisible"] = _need(visibility.get("isVisible"), "bool", "visibility.isVisible")
        fields["missingJoints"] = _need(visibility.get("missingJoints"), "names",
                                        "visibility.missingJoints")
    elif event_type == "setupChanged":
        fields["setupIssues"] = _need(event.get("issues"), "names", "issues")
    elif event_type == "baselineCompleted":
        fields["value"] = _need(event.get("value"), "number", "value")
    counts = state.advance(event_type)
    if counts:
        fields["repNumber"], fields["cleanCount"] = str(counts[0]), str(counts[1])
        fields["hold"] = counts[2]
    state.sequence = sequence
    return [cell(fields.get(column)) for column in MOTION_COLUMNS]


def analytics_row(stream, sequence, text):
    """The row of an analytics record (docs/wire-format.md, section 14); ValueError if it is
    not one (kinesia.wire.decode_analytics's checks)."""
    try:
        if decode_analytics(text) is None:
            raise ValueError("not an analytics record")
    except WireError as error:
        raise ValueError(str(error)) from None
    record = parse_json(text)
    fields = {"stream": stream, "sequence": str(sequence), "json": text}
    row = []
    for column in ANALYTICS_COLUMNS:
        if column in fields:
            row.append(fields[column])
            continue
        value = record
        for part in column.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        row.append(cell(value))
    return row


def kind_of(text):
    """"analytics" for an analytics record's JSON, else "motion"."""
    try:
        return "analytics" if decode_analytics(text) is not None else "motion"
    except WireError:
        return "motion"


class DamagedFile(Exception):
    """A CSV that is not one of ours, or is damaged before its end: never written to."""


def read_session_csv(data):
    """Reads a session file's bytes (pure; the cursor-from-CSV logic).

    Returns (keep, kind, streams): the length of its complete rows (what follows is a torn last
    row, to cut), "motion", "analytics" or None (no header yet), and per stream id the
    StreamState after its last row (`sequence`: where delivery resumes, after it). Raises
    DamagedFile for a header that is not ours, or a bad row followed by more rows."""
    lines, position = [], 0
    while True:
        newline = data.find(b"\n", position)
        if newline < 0:
            break
        lines.append(data[position:newline + 1])
        position = newline + 1
    consumed = [0]

    def feed():
        for line in lines:
            consumed[0] += len(line)
            yield line.decode("utf-8")

    records, failed_at = [], None
    try:
        for row in csv.reader(feed(), strict=True):
            records.append((consumed[0], row))
    except (csv.Error, UnicodeDecodeError):
        failed_at = consumed[0]
    if failed_at is not None and failed_at < sum(len(line) for line in lines):
        raise DamagedFile(f"unreadable CSV before byte {failed_at}")
    if not records:
        return 0, None, {}
    header = records[0][1]
    kind = next((name for name, columns in HEADERS.items() if header == columns), None)
    if kind is None:
        raise DamagedFile("its header is not events_to_csv's")
    keep, streams = records[0][0], {}
    stream_at, sequence_at = header.index("stream"), header.index("sequence")
    type_at = header.index("type")
    for index, (end, row) in enumerate(records[1:], start=1):
        valid = (len(row) == len(header) and len(row[stream_at]) == 16
                 and all(c in "0123456789abcdef" for c in row[stream_at])
                 and row[sequence_at].isdigit() and row[sequence_at].isascii())
        if not valid:
            if index != len(records) - 1 or failed_at is not None:
                raise DamagedFile(f"row {index + 1} is not a complete row, and rows follow it")
            break
        state = streams.setdefault(row[stream_at], StreamState())
        if kind == "motion":
            state.advance(row[type_at])
        state.sequence = int(row[sequence_at])
        keep = end
    return keep, kind, streams


def read_key_file(path, secret):
    """A bus key file (`kinesia keys new`): {"name", "role", "public-key"[, "secret-key"]}.
    A secret file must not be readable or writable by group or others, as `kinesia` requires."""
    import stat
    try:
        if secret:
            mode = stat.S_IMODE(os.stat(path).st_mode)
            if mode & 0o077:
                raise SystemExit(f"the key {path} has mode {mode:o}: chmod 600 {path}")
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise SystemExit(f"cannot read the key {path}: {error.strerror}")
    fields = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            fields[name.strip()] = value.strip()
    wanted = ("public-key", "secret-key") if secret else ("public-key",)
    for name in wanted:
        value = fields.get(name, "")
        if len(value) != 40:
            raise SystemExit(f"the key {path} has no {name} of 40 Z85 characters")
    if secret and fields.get("role") != "consumer":
        raise SystemExit(f"the key {path} is a {fields.get('role')} key; this process needs a "
                         "consumer key")
    return fields


class SessionFiles:
    """The CSV files of --out: read when a session is first seen, appended to by batches."""

    def __init__(self, directory, report, count):
        self.directory, self.report, self.count = directory, report, count
        self.sessions = {}   # topic -> {"path", "kind", "streams", "file", "pending"} or None (refused)
        self.claimed = {}    # file name -> topic

    def load(self, topic, cursor):
        """Reads the file of `topic` (once), cutting a torn last row, and puts the last sequence
        of each of its streams into `cursor`."""
        if topic in self.sessions:
            return
        try:
            parsed = parse_topic(topic)
            name = f"{parsed['camera']}-{parsed['session']}.csv"
        except (WireError, KeyError, TypeError, AttributeError) as error:
            self.report(f"refused: an event topic {topic!r}: {error}")
            self.count("refused")
            self.sessions[topic] = None
            return
        if name in self.claimed:
            self.report(f"refused: {topic} would write to {name}, which holds {self.claimed[name]}")
            self.count("refused")
            self.sessions[topic] = None
            return
        self.claimed[name] = topic
        path = os.path.join(self.directory, name)
        data = b""
        if os.path.exists(path):
            with open(path, "rb") as file:
                data = file.read()
        try:
            keep, kind, streams = read_session_csv(data)
        except DamagedFile as error:
            self.report(f"refused: {path}: {error}; move it away to record {topic}")
            self.count("refused")
            self.sessions[topic] = None
            return
        if keep < len(data):
            self.report(f"{path}: cut a torn last row ({len(data) - keep} bytes)")
            self.count("tornRowsCut")
            with open(path, "r+b") as file:
                file.truncate(keep)
                os.fsync(file.fileno())
        for stream, state in streams.items():
            cursor[(topic, stream)] = state.sequence
        self.sessions[topic] = {"path": path, "kind": kind, "streams": streams, "file": None,
                                "pending": []}

    def deliver(self, topic, stream, sequence, text):
        session = self.sessions.get(topic)
        if session is None:
            self.count("refusedEvents")
            return
        kind = kind_of(text)
        if session["kind"] not in (None, kind):
            self.report(f"skipped: {topic} #{sequence}: a {kind} record in a {session['kind']} file")
            self.count("malformed")
            return
        try:
            if kind == "motion":
                state = session["streams"].setdefault(stream, StreamState())
                row = motion_row(stream, sequence, text, state)
            else:
                row = analytics_row(stream, sequence, text)
        except (ValueError, RecursionError) as error:
            self.report(f"skipped: {topic} #{sequence}: {error}")
            self.count("malformed")
            return
        if session["kind"] is None:  # the first valid row sets the file's kind and header
            session["kind"] = kind
            session["pending"].append(HEADERS[kind])
        session["pending"].append(row)
        self.count("rows")

    def flush(self):
        """Writes every pending row: one write, flush and fsync per file.

        A batch is taken off `pending` before it is written, so a write or fsync that raises
        never leaves it to be written a second time by a later flush (a write cut in the middle
        leaves a torn last row, which the next start cuts; delivery resumes after the row
        before it)."""
        for session in self.sessions.values():
            if not session or not session["pending"]:
                continue
            pending, session["pending"] = session["pending"], []
            text = io.StringIO()
            csv.writer(text, lineterminator="\n").writerows(pending)
            if session["file"] is None:
                created = not os.path.exists(session["path"])
                session["file"] = open(session["path"], "a", encoding="utf-8", newline="")
                if created:
                    directory = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
                    try:
                        os.fsync(directory)
                    finally:
                        os.close(directory)
            session["file"].write(text.getvalue())
            session["file"].flush()
            os.fsync(session["file"].fileno())

    def close(self):
        for session in self.sessions.values():
            if session and session["file"]:
                session["file"].close()


def main():
    parser = argparse.ArgumentParser(
        description="Write Kinesia events to one CSV file per session, exactly once.")
    parser.add_argument("--bus", help="tcp://HOST:PORT, or a bus directory (default: IPC)")
    parser.add_argument("--out", required=True, help="the directory of the CSV files (made if missing)")
    parser.add_argument("--camera", help="only this camera's sessions (default: every camera)")
    parser.add_argument("--from", dest="start", default="beginning", choices=("beginning", "now"),
                        help="where a stream that no CSV holds yet starts (default beginning)")
    parser.add_argument("--key", default=os.environ.get("KINESIA_KEY"),
                        help="over TCP: this consumer's secret key file (default $KINESIA_KEY)")
    parser.add_argument("--server-key", default=os.environ.get("KINESIA_SERVER_KEY"),
                        help="over TCP: the broker's public key file (default $KINESIA_SERVER_KEY)")
    parser.add_argument("--insecure", action="store_true",
                        default=os.environ.get("KINESIA_INSECURE") == "1",
                        help="allow a TCP bus without keys (no encryption, no authentication)")
    args = parser.parse_args()
    prefix = "event/"
    if args.camera:
        try:
            make_topic("pose", args.camera)  # checks the name
        except WireError as error:
            raise SystemExit(f"--camera: {error}")
        prefix = f"event/{args.camera}/"
    try:
        import zmq
        import zmq.utils.monitor
    except ImportError:
        raise SystemExit("pyzmq is not installed: run scripts/setup (or pip install pyzmq)")
    endpoint = subscriber_endpoint(args.bus)
    # On a TCP bus with keys, replay goes through the broker's replay port (PORT+3, behind its
    # CURVE and the consumer role's rights), never to an endpoint a heartbeat names.
    host, _, subscriber_port = endpoint.rpartition(":")
    replay_port = f"{host}:{int(subscriber_port) + 2}" if endpoint.startswith("tcp://") else None
    keys = None
    if endpoint.startswith("tcp://"):
        if args.key and args.insecure:
            raise SystemExit("--key and --insecure contradict each other")
        if args.key:
            if not args.server_key:
                raise SystemExit("--key needs --server-key FILE.pub (the broker's public key)")
            keys = (read_key_file(args.key, secret=True), read_key_file(args.server_key, secret=False))
        elif not args.insecure:
            raise SystemExit("a TCP bus needs --key FILE.key and --server-key FILE.pub, or --insecure")
        else:
            print("warning: insecure TCP bus: no encryption, no authentication", file=sys.stderr)
    os.makedirs(args.out, exist_ok=True)

    counters = {}

    def count(name, by=1):
        counters[name] = counters.get(name, 0) + by

    def report(text):
        print(text, file=sys.stderr, flush=True)

    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.MAXMSGSIZE, 16 * 1024)
    curve = None
    if keys:
        secret, server = keys
        curve = (secret["public-key"].encode(), secret["secret-key"].encode(), server["public-key"].encode())
        sub.curve_publickey, sub.curve_secretkey, sub.curve_serverkey = curve
    for subscription in (prefix, "health/"):
        sub.setsockopt(zmq.SUBSCRIBE, subscription.encode())
    # The end of each handshake with the broker is reported: from "connected" on, the
    # subscriptions are on their way and events come live (and what was published before by
    # replay); a refusal says why nothing will come.
    monitor = sub.get_monitor_socket(
        zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_AUTH
        | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
    monitor.setsockopt(zmq.LINGER, 0)
    sub.connect(endpoint)
    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)
    poller.register(monitor, zmq.POLLIN)
    dealers = {}
    unanswered = {}  # endpoint: when its first request without a reply went out
    machine = ExactlyOnce(start=args.start, accepts=(prefix,))
    files = SessionFiles(args.out, report, count)
    origin = time.monotonic()
    report(f"writing {prefix!r} to CSV files in {args.out} exactly once from {args.start}")

    def load(topic):
        if topic.startswith(prefix) and topic not in files.sessions:
            files.load(topic, machine.cursor)

    def perform(actions):
        for action in actions:
            if action[0] == "deliver":
                _, (topic, stream), sequence, message = action
                files.deliver(topic, stream, sequence, message["json"])
            elif action[0] == "lost":
                report(f"lost: {action[1][0]} stream {action[1][1]}: #{action[2]}..<#{action[3]} "
                       "cannot be had any more")
            else:
                _, endpoint, request = action
                if keys:  # never in clear text beside a CURVE bus: through the broker's port
                    send_replay_request(context, poller, dealers, unanswered, replay_port, request,
                                        time.monotonic() - origin, curve=curve)
                else:
                    send_replay_request(context, poller, dealers, unanswered, endpoint, request,
                                        time.monotonic() - origin)

    def connection(frames):
        event = zmq.utils.monitor.parse_monitor_message(frames)
        if event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            count("connections")
            report(f"connected to {endpoint}")
            return
        count("refusals")
        if counters["refusals"] == 1:
            reason = ("refused this key (is it allowed, with the role consumer?)"
                      if event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH else
                      "failed the handshake (is --server-key the broker's?)")
            report(f"refused: the broker at {endpoint} {reason} (counted in refusals)")

    def replayed(frames, now):
        try:
            perform(replay_actions(machine, frames, now))
        except (ReplayError, WireError, ValueError) as error:
            count("malformedReplies")
            report(f"skipped a replay reply: {error}")

    def live(frames, now):
        try:
            if len(frames) != 2:
                raise WireError("frameCount", f"{len(frames)} frames")
            message = decode_message(*frames)
            if message["header"]["kind"] == "health":
                announcement = replay_announcement(message["json"])
                if announcement:
                    for info in announcement["streams"]:
                        load(info["topic"])
                    # On a CURVE bus the endpoint announced is never connected to: requests
                    # go to the broker's replay port (see perform).
                    perform(machine.announced(announcement, now))
                machine.moving(moving_streams(message["json"]), now)
            elif message["topic"].startswith(prefix) and message["header"]["kind"] == "event":
                load(message["topic"])
                key = (message["topic"], message["header"]["stream_id"])
                perform(machine.received(key, message["header"]["sequence"], message, True, now))
        except (WireError, ValueError, KeyError, TypeError, AttributeError) as error:
            count("malformed")
            report(f"skipped: {error}")

    # SIGTERM and Ctrl-C end the loop between two batches, never in the middle of one: a handler
    # that raised (sys.exit, KeyboardInterrupt) could interrupt flush() after a batch was written
    # and before it was marked written, and the final flush wrote it again.
    stop = []
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda signum, _frame: stop.append(signum))
    try:
        while not stop:
            ready = dict(poller.poll(100))
            now = time.monotonic() - origin
            while monitor.poll(0):
                connection(monitor.recv_multipart())
            for endpoint, dealer in list(dealers.items()):
                while dealer in ready and dealer.poll(0):
                    unanswered.pop(endpoint, None)
                    replayed(dealer.recv_multipart(), now)
            while not stop and sub.poll(0):
                live(sub.recv_multipart(), now)
            perform(machine.tick(now))
            files.flush()
    finally:
        try:
            files.flush()
        finally:
            files.close()
            counters.update({f"exactlyOnce.{name}": value for name, value in machine.counters.items()})
            report("counters " + " ".join(f"{name}={value}" for name, value in sorted(counters.items())))
            sub.disable_monitor()
            for socket in [monitor, sub, *dealers.values()]:
                socket.close()
            context.term()


if __name__ == "__main__":
    main()
