"""Commands for the coordinator (`kinesia coordinator`): start, stop, reset, baseline and list the site's
sessions, as `kinesia session` does (docs/control-plane.md).

    from kinesia.control import ControlClient
    client = ControlClient("/run/user/1000/kinesia")
    answer = client.start("cam0/left", exercise="squat", side="left", patient="p-17")
    print(answer.outcome, answer.message)   # started cam0/left started on worker w1 (run 1)
    for session in client.list().sessions:
        print(session["session"], session["run"], session["state"])

A request is sent again every second with the same id until its answer comes: the coordinator
does an id once and answers it the same every time, so a retry never starts twice. Needs pyzmq.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

OUTCOMES = ("started", "stopped", "reset", "baselineStarted", "listed", "alreadyRunning", "notRunning", "noLiveWorker",
            "notConfirmed", "invalid", "notAllowed")
SIDES = ("left", "right", "analytics")


class ControlError(Exception):
    """A message that is not a control answer of this version, or a request that cannot be made."""


class ControlTimeout(Exception):
    """No answer from the coordinator in time."""


@dataclass(frozen=True)
class ControlAnswer:
    """The coordinator's answer: the request's id, the outcome word, a sentence, and for `list`
    the sessions (each a dict of the plan's fields with "run", "assignedTo" and "state")."""

    id: str
    outcome: str
    message: str
    worker: str | None = None
    run: int | None = None
    sessions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 done, 64 invalid, 1 otherwise: the exit status of `kinesia session`."""
        if self.outcome in ("started", "stopped", "reset", "baselineStarted", "listed"):
            return 0
        return 64 if self.outcome == "invalid" else 1


def new_request_id() -> str:
    """16 random hexadecimal digits."""
    return os.urandom(8).hex()


def encode_request(request_id: str, command: str, **fields: Any) -> bytes:
    """One request as the coordinator reads it: `type`, `id`, `command`, then the fields given
    (None values left out), in that order."""
    if command not in ("start", "stop", "reset", "baseline", "list"):
        raise ControlError(f"unknown command {command!r}: start, stop, reset, baseline or list")
    message: dict[str, Any] = {"type": "request", "id": request_id, "command": command}
    message.update({key: value for key, value in fields.items() if value is not None})
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def decode_answer(data: bytes) -> ControlAnswer:
    """Reads an answer; refuses (ControlError) anything else, saying what is wrong."""
    try:
        message = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise ControlError(f"not JSON: {error}") from None
    if not isinstance(message, dict) or message.get("type") != "answer":
        raise ControlError("not a control answer")
    unknown = set(message) - {"type", "id", "outcome", "message", "worker", "run", "sessions"}
    if unknown:
        raise ControlError(f"unknown fields {sorted(unknown)}")
    outcome = message.get("outcome")
    if outcome not in OUTCOMES:
        raise ControlError(f"unknown outcome {outcome!r}")
    identifier, text = message.get("id"), message.get("message")
    if not isinstance(identifier, str) or not isinstance(text, str):
        raise ControlError('"id" and "message" must be strings')
    run = message.get("run")
    if run is not None and not (isinstance(run, str) and run.isdigit()):
        raise ControlError('"run" must be a whole number as a decimal string')
    sessions = message.get("sessions", [])
    if not isinstance(sessions, list) or not all(isinstance(entry, dict) for entry in sessions):
        raise ControlError('"sessions" must be a list of objects')
    for entry in sessions:
        if "run" in entry:
            entry["run"] = int(entry["run"])
    worker = message.get("worker")
    return ControlAnswer(identifier, outcome, text, worker, int(run) if run is not None else None, sessions)


RUN_STARTED_FIELDS = {"type", "run", "camera", "session", "exercise", "side", "patient", "thresholds",
                      "exerciseFile"}
RUN_ENDED_FIELDS = {"type", "run", "camera", "session", "reason", "repCount", "rejectedCount", "best",
                    "reps", "faults", "baseline", "firstPose", "lastPose"}
BASELINE_STARTED_FIELDS = {"type", "run", "camera", "session", "reps"}
REP_FIELDS = {"peak", "faults", "start", "end"}


def decode_run_record(text: str | bytes) -> dict[str, Any]:
    """Reads a run record of `session/<camera>/<name>/` ("runStarted", "baselineStarted" or
    "runEnded", the JSON of a wire message of kind "session"); "run" becomes an int. Refuses (ControlError) anything
    else, saying what is wrong."""
    try:
        record = json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise ControlError(f"a run record: not JSON: {error}") from None
    if not isinstance(record, dict):
        raise ControlError("a run record: not an object")
    kind = record.get("type")
    allowed = {"runStarted": RUN_STARTED_FIELDS, "runEnded": RUN_ENDED_FIELDS,
               "baselineStarted": BASELINE_STARTED_FIELDS}.get(str(kind))
    if allowed is None:
        raise ControlError(f"a run record: unknown type {kind!r}")
    unknown = set(record) - allowed
    missing = allowed - set(record) - {"patient", "reps", "baseline", "firstPose", "lastPose"}
    if unknown or missing:
        raise ControlError(f"a run record: unknown fields {sorted(unknown)}, missing {sorted(missing)}")
    run = record["run"]
    if not (isinstance(run, str) and run.isdigit()):
        raise ControlError('a run record: "run" must be a whole number as a decimal string')
    if kind == "runEnded" and record["reason"] not in ("stopped", "reset"):
        raise ControlError(f"a run record: unknown reason {record['reason']!r}")
    if kind == "runStarted" and record["side"] not in SIDES:
        raise ControlError(f"a run record: invalid side {record['side']!r}")
    if kind == "baselineStarted" and not (isinstance(record["reps"], int) and 1 <= record["reps"] <= 100):
        raise ControlError('a run record: "reps" must be 1 to 100')
    if kind == "runEnded":
        reps = record.get("reps", [])
        if not isinstance(reps, list) or not all(isinstance(rep, dict) and set(rep) == REP_FIELDS for rep in reps):
            raise ControlError('a run record: "reps" must be a list of {"peak","faults","start","end"}')
        for key in ("firstPose", "lastPose"):
            pose = record.get(key, {"stream": "1".zfill(16), "sequence": "0"})
            if not (isinstance(pose, dict) and set(pose) == {"stream", "sequence"}
                    and isinstance(pose["stream"], str) and len(pose["stream"]) == 16
                    and isinstance(pose["sequence"], str) and pose["sequence"].isdigit()):
                raise ControlError(f'a run record: "{key}" must be {{"stream": 16 hex digits, "sequence": decimal}}')
        faults = record["faults"]
        if not isinstance(faults, dict) or not all(isinstance(n, int) and n > 0 for n in faults.values()):
            raise ControlError('a run record: "faults" must map each fault to a positive count')
    record["run"] = int(run)
    return record


def read_key_file(path: str) -> dict[str, str]:
    """The fields of a key file of `kinesia keys new` (`name`, `role`, `public-key`, and
    `secret-key` in a .key file); ControlError for a file that is not one."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read(4096)
    except OSError as error:
        raise ControlError(f"{path}: {error.strerror}") from None
    fields: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, equals, value = line.partition("=")
        if not equals or name.strip() not in ("name", "role", "public-key", "secret-key"):
            raise ControlError(f"{path}: line {number} is not a key file's 'field = value'")
        fields[name.strip()] = value.strip()
    if len(fields.get("public-key", "")) != 40:
        raise ControlError(f"{path}: no 40-character public-key")
    return fields


def control_endpoint(bus: str) -> str:
    """Where the coordinator of `bus` listens: `control.sock` in a bus directory, or on a TCP
    bus (`tcp://HOST:PORT`, the broker's) the port after the broker's two, PORT+2."""
    if bus.startswith("tcp://"):
        host, colon, port = bus[len("tcp://"):].rpartition(":")
        if not colon or not port.isdigit() or not host or int(port) + 2 > 65535:
            raise ControlError(f"not a TCP bus address: {bus!r} (tcp://HOST:PORT)")
        return f"tcp://{host}:{int(port) + 2}"
    return f"ipc://{bus}/control.sock"


class ControlClient:
    """A DEALER to the coordinator's control socket: `control.sock` in a bus directory, or on a
    TCP bus the port after the broker's two, as a CURVE client with `key` (a .key file of the
    `control` role) and `server_key` (the broker's .pub), or without keys when `insecure`."""

    def __init__(self, bus: str, timeout: float = 5.0, key: str | None = None,
                 server_key: str | None = None, insecure: bool = False) -> None:
        self.endpoint = control_endpoint(bus)
        self.timeout = timeout
        self.curve: tuple[bytes, bytes, bytes] | None = None
        if self.endpoint.startswith("tcp://") and not insecure:
            if key is None or server_key is None:
                raise ControlError("a TCP bus needs key (a control key's .key file) and server_key (the broker's "
                                   ".pub), or insecure=True")
            own, server = read_key_file(key), read_key_file(server_key)
            if own.get("role") != "control":
                raise ControlError(f"{key} is a {own.get('role')} key; commands need a control key "
                                   "(kinesia keys new NAME --role control)")
            if len(own.get("secret-key", "")) != 40:
                raise ControlError(f"{key}: no 40-character secret-key")
            self.curve = (own["public-key"].encode(), own["secret-key"].encode(), server["public-key"].encode())

    def start(self, session: str, exercise: str, side: str, patient: str | None = None,
              pool: str | None = None, worker: str | None = None, exercise_file: str | None = None,
              request_id: str | None = None) -> ControlAnswer:
        """Starts `session` ("CAMERA/NAME") at a new run. `exercise_file` is an exercise file's
        text (its "exercise" must be `exercise`); without it, the catalog's thresholds."""
        if side not in SIDES:
            raise ControlError(f"invalid side {side!r}: use left, right or analytics")
        return self.send(request_id or new_request_id(), "start", session=session, exercise=exercise,
                         exerciseFile=exercise_file, side=side, patient=patient, pool=pool, worker=worker)

    def stop(self, session: str, request_id: str | None = None) -> ControlAnswer:
        """Ends `session`'s run."""
        return self.send(request_id or new_request_id(), "stop", session=session)

    def reset(self, session: str, request_id: str | None = None) -> ControlAnswer:
        """Ends `session`'s run and starts the next."""
        return self.send(request_id or new_request_id(), "reset", session=session)

    def baseline(self, session: str, reps: int | None = None, request_id: str | None = None) -> ControlAnswer:
        """Ends `session`'s run and starts the next, beginning with a baseline measurement of
        `reps` clean reps (None: the exercise's number)."""
        if reps is not None and not 1 <= reps <= 100:
            raise ControlError(f"a baseline needs 1 to 100 reps, not {reps}")
        return self.send(request_id or new_request_id(), "baseline", session=session, reps=reps)

    def list(self, request_id: str | None = None) -> ControlAnswer:
        """Every session of the site."""
        return self.send(request_id or new_request_id(), "list")

    def send(self, request_id: str, command: str, **fields: Any) -> ControlAnswer:
        """Sends a request, again every second, until its answer comes or the timeout passes."""
        import zmq

        data = encode_request(request_id, command, **fields)
        socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        if self.curve is not None:
            public, secret, server = self.curve
            socket.setsockopt(zmq.CURVE_PUBLICKEY, public)
            socket.setsockopt(zmq.CURVE_SECRETKEY, secret)
            socket.setsockopt(zmq.CURVE_SERVERKEY, server)
        try:
            socket.connect(self.endpoint)
            deadline = time.monotonic() + self.timeout
            next_send = 0.0
            while (now := time.monotonic()) < deadline:
                if now >= next_send:
                    socket.send(data)
                    next_send = now + 1.0
                if socket.poll(max(1, int(1000 * (min(next_send, deadline) - now)))):
                    try:
                        answer = decode_answer(socket.recv())
                    except ControlError:
                        continue
                    if answer.id == request_id:
                        return answer
        finally:
            socket.close()
        raise ControlTimeout(
            f"no answer from the coordinator at {self.endpoint} within {self.timeout} s "
            "(is kinesia coordinator running?)")
