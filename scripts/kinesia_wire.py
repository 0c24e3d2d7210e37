#!/usr/bin/env python3
"""Kinesia wire format, version 1: a decoder and encoder in plain Python 3 (standard library only).

The format is documented in docs/wire-format.md. Every bus message is two ZeroMQ frames,
[topic, payload]; every payload starts with a 28-byte header (magic "KW", version, kind, stream
id, sequence, send time); poses follow as a little-endian binary record, events, snapshots and
health reports as UTF-8 JSON.

Use it as a module:

    import kinesia_wire as kw
    message = kw.decode_message(topic_frame, payload_frame)
    message["header"]["sequence"], message["pose"]["points"]["leftElbow"]

or from the command line:

    python3 scripts/kinesia_wire.py decode FILE [--topic TOPIC]   # print a payload as JSON
    python3 scripts/kinesia_wire.py check FIXTURES_DIR            # verify the test vectors
    python3 scripts/kinesia_wire.py encode-fixtures EXPECTED_JSON OUT_DIR
    python3 scripts/kinesia_wire.py check-replay REPLAY_JSON      # verify the replay vectors

Replay (exactly-once consumers): encode_replay_request, decode_replay_reply and the
ExactlyOnce state machine; scripts/examples/listen_exactly_once.py uses them with pyzmq.

Decoding never trusts its input: every malformed payload raises WireError, whose `code` is the
same as the Swift decoder's (`truncated`, `badMagic`, `nonFinite`, ...).
"""

import json
import math
import os
import struct
import sys

MAGIC = b"KW"
VERSION = 1
HEADER_SIZE = 28
MAX_POSE_PAYLOAD = 64 * 1024
MAX_JSON_PAYLOAD = 16 * 1024

KINDS = {1: "pose", 2: "event", 3: "snapshot", 4: "health"}
KIND_CODES = {name: code for code, name in KINDS.items()}

# Joint names in Joint.index order (0...18): the index is what the pose record carries.
JOINTS = [
    "nose", "leftEye", "rightEye", "leftEar", "rightEar", "neck", "root",
    "leftShoulder", "rightShoulder", "leftElbow", "rightElbow", "leftWrist", "rightWrist",
    "leftHip", "rightHip", "leftKnee", "rightKnee", "leftAnkle", "rightAnkle",
]
JOINT_INDEX = {name: index for index, name in enumerate(JOINTS)}

IMAGE_SIZE_FLAG = 0x01
POINT_ENTRY = 17    # index u8, x f64, y f64
CONFIDENCE_ENTRY = 9  # index u8, value f64

TOPIC_FIELDS = {"pose": ["camera"], "event": ["camera", "session"],
                "snapshot": ["camera", "session"], "health": ["process"]}
MAX_NAME = 64
MAX_TOPIC = 9 + 2 * MAX_NAME + 2
NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")

_HEADER = struct.Struct("<2sBBQQQ")
_F64 = struct.Struct("<d")
_POINT = struct.Struct("<Bdd")
_CONFIDENCE = struct.Struct("<Bd")


class WireError(ValueError):
    """A malformed payload or topic. `code` names the case, as in Swift's WireError.code."""

    def __init__(self, code, detail=""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


# Topics


def parse_topic(topic):
    """Parses a topic frame (bytes or str) into {"kind", "camera"/"session"/"process", "topic"}."""
    data = topic.encode("utf-8") if isinstance(topic, str) else bytes(topic)
    if not data:
        raise WireError("invalidTopic", "the topic is empty")
    if len(data) > MAX_TOPIC:
        raise WireError("invalidTopic", f"the topic is {len(data)} bytes long")
    if not data.endswith(b"/"):
        raise WireError("invalidTopic", 'the topic does not end with "/"')
    parts = data[:-1].split(b"/")
    kind = parts[0].decode("latin-1")
    if kind not in TOPIC_FIELDS:
        raise WireError("invalidTopic", f"unknown topic kind {kind!r}")
    fields = TOPIC_FIELDS[kind]
    if len(parts) - 1 != len(fields):
        raise WireError("invalidTopic", f"{kind} topics take {len(fields)} name(s)")
    for field, name in zip(fields, parts[1:]):
        _check_name(name, field)
    # Only now is every byte known to be ASCII.
    result = {"kind": kind, "topic": data.decode("ascii")}
    for field, name in zip(fields, parts[1:]):
        result[field] = name.decode("ascii")
    return result


def _check_name(name, field):
    if not name:
        raise WireError("invalidTopic", f"the {field} name is empty")
    if len(name) > MAX_NAME:
        raise WireError("invalidTopic", f"the {field} name is {len(name)} bytes long")
    for byte in name:
        if byte not in NAME_BYTES:
            raise WireError("invalidTopic", f"the {field} name contains byte 0x{byte:02x}")
    if set(name) == {ord(".")}:
        raise WireError("invalidTopic", f"the {field} name is reserved")


def make_topic(kind, *names):
    """Builds a topic string: make_topic("event", "cam0", "left") == "event/cam0/left/"."""
    text = "/".join([kind, *names]) + "/"
    parse_topic(text)
    return text


# Header


def decode_header(payload):
    """Reads and checks the 28-byte header: {"kind", "stream_id", "sequence", "sent_at_ns"}."""
    if len(payload) < HEADER_SIZE:
        raise WireError("truncated", f"needs {HEADER_SIZE} bytes, has {len(payload)}")
    magic, version, kind, stream_id, sequence, sent_at = _HEADER.unpack_from(payload, 0)
    if magic != MAGIC:
        raise WireError("badMagic", "not a Kinesia payload")
    if version != VERSION:
        raise WireError("unsupportedVersion", f"version {version}")
    if kind not in KINDS:
        raise WireError("unknownKind", f"kind {kind}")
    name = KINDS[kind]
    limit = MAX_POSE_PAYLOAD if name == "pose" else MAX_JSON_PAYLOAD
    if len(payload) > limit:
        raise WireError("oversized", f"{len(payload)} bytes, limit {limit}")
    return {"kind": name, "stream_id": f"{stream_id:016x}", "sequence": sequence,
            "sent_at_ns": sent_at}


def encode_header(kind, stream_id, sequence, sent_at_ns):
    """The 28 header bytes. `stream_id` is an int or 16 hex digits."""
    if isinstance(stream_id, str):
        stream_id = int(stream_id, 16)
    return _HEADER.pack(MAGIC, VERSION, KIND_CODES[kind], stream_id, sequence, sent_at_ns)


# Poses


def _need(size, payload):
    if len(payload) < size:
        raise WireError("truncated", f"needs {size} bytes, has {len(payload)}")


def _finite(value, field):
    if not math.isfinite(value):
        raise WireError("nonFinite", f"{field} is not a finite number")
    return value


def _joint(index, seen):
    if index >= len(JOINTS):
        raise WireError("unknownJoint", f"index {index}")
    name = JOINTS[index]
    if name in seen:
        raise WireError("duplicateJoint", name)
    return name


def decode_pose(payload):
    """Decodes a pose payload: (header, pose) where pose has the recordings' JSON shape:
    {"t", "w", "h" (when known), "points": {joint: [x, y]}, "confidence": {joint: value}}."""
    payload = bytes(payload)
    header = decode_header(payload)
    if header["kind"] != "pose":
        raise WireError("unexpectedKind", header["kind"])
    offset = HEADER_SIZE
    _need(offset + 9, payload)
    timestamp = _finite(_F64.unpack_from(payload, offset)[0], "timestamp")
    flags = payload[offset + 8]
    offset += 9
    if flags & ~IMAGE_SIZE_FLAG:
        raise WireError("unsupportedFlags", f"0x{flags:02x}")
    pose = {"t": timestamp}
    if flags & IMAGE_SIZE_FLAG:
        _need(offset + 16, payload)
        width = _finite(_F64.unpack_from(payload, offset)[0], "imageSize.width")
        height = _finite(_F64.unpack_from(payload, offset + 8)[0], "imageSize.height")
        if width < 0 or height < 0:
            raise WireError("negativeImageSize")
        pose["w"], pose["h"] = width, height
        offset += 16

    _need(offset + 1, payload)
    count = payload[offset]
    offset += 1
    if count > len(JOINTS):
        raise WireError("tooManyJoints", str(count))
    _need(offset + count * POINT_ENTRY, payload)
    points = {}
    for _ in range(count):
        index, x, y = _POINT.unpack_from(payload, offset)
        name = _joint(index, points)
        points[name] = [_finite(x, f"{name}.x"), _finite(y, f"{name}.y")]
        offset += POINT_ENTRY

    _need(offset + 1, payload)
    count = payload[offset]
    offset += 1
    if count > len(JOINTS):
        raise WireError("tooManyJoints", str(count))
    _need(offset + count * CONFIDENCE_ENTRY, payload)
    confidence = {}
    for _ in range(count):
        index, value = _CONFIDENCE.unpack_from(payload, offset)
        name = _joint(index, confidence)
        confidence[name] = _finite(value, f"confidence.{name}")
        offset += CONFIDENCE_ENTRY

    if offset != len(payload):
        raise WireError("trailingBytes", f"{len(payload) - offset} bytes")
    pose["points"] = points
    pose["confidence"] = confidence
    return header, pose


def encode_pose(pose, stream_id, sequence, sent_at_ns):
    """Encodes a pose dict (recordings' JSON shape) exactly as the Swift encoder does: joints in
    ascending index order, every number Float64."""
    out = bytearray(encode_header("pose", stream_id, sequence, sent_at_ns))
    out += _F64.pack(_finite(float(pose["t"]), "timestamp"))
    if "w" in pose and pose["w"] is not None:
        width = _finite(float(pose["w"]), "imageSize.width")
        height = _finite(float(pose["h"]), "imageSize.height")
        if width < 0 or height < 0:
            raise WireError("negativeImageSize")
        out.append(IMAGE_SIZE_FLAG)
        out += _F64.pack(width) + _F64.pack(height)
    else:
        out.append(0)
    points = pose.get("points", {})
    out.append(len(points))
    for name in sorted(points, key=_joint_index):
        x, y = points[name]
        out += _POINT.pack(JOINT_INDEX[name], _finite(float(x), f"{name}.x"),
                           _finite(float(y), f"{name}.y"))
    confidence = pose.get("confidence", {})
    out.append(len(confidence))
    for name in sorted(confidence, key=_joint_index):
        out += _CONFIDENCE.pack(JOINT_INDEX[name],
                                _finite(float(confidence[name]), f"confidence.{name}"))
    return bytes(out)


def _joint_index(name):
    if name not in JOINT_INDEX:
        raise WireError("unknownJoint", name)
    return JOINT_INDEX[name]


# JSON payloads (events, snapshots, health reports)


def decode_json_payload(payload):
    """Decodes an event, snapshot or health payload: (header, json_text)."""
    payload = bytes(payload)
    header = decode_header(payload)
    if header["kind"] == "pose":
        raise WireError("unexpectedKind", "pose")
    body = payload[HEADER_SIZE:]
    if not body:
        raise WireError("emptyJSON")
    try:
        text = body.decode("utf-8", errors="strict")
    except UnicodeDecodeError as error:
        raise WireError("invalidUTF8", str(error)) from None
    return header, text


def encode_json_payload(kind, json_text, stream_id, sequence, sent_at_ns):
    """Frames JSON text (str or UTF-8 bytes) behind a header of `kind` (event, snapshot, health)."""
    if kind == "pose":
        raise WireError("unexpectedKind", "pose")
    body = json_text.encode("utf-8") if isinstance(json_text, str) else bytes(json_text)
    if not body:
        raise WireError("emptyJSON")
    body.decode("utf-8", errors="strict")
    payload = encode_header(kind, stream_id, sequence, sent_at_ns) + body
    if len(payload) > MAX_JSON_PAYLOAD:
        raise WireError("oversized", f"{len(payload)} bytes")
    return payload


def health_json(process, role, pid, uptime, counters):
    """A health report's JSON, as the Swift HealthReport writes it (keys sorted)."""
    return json.dumps({"process": process, "role": role, "pid": pid, "uptime": uptime,
                       "counters": counters}, sort_keys=True, separators=(",", ":"),
                      allow_nan=False)


# Analytics records (docs/wire-format.md, section 8): event payloads of an analytics session

ANALYTICS_KEYS = {
    "repTempo": ["t", "side", "rep", "set", "clean", "faults", "peak", "low", "range", "start",
                 "peakTime", "end", "timeUp", "timeAtTop", "timeDown", "timeUnderTension"],
    "repSymmetry": ["t", "set", "pair", "left", "right", "peakDifference", "rangeRatio",
                    "tempoRatio"],
    "setSummary": ["t", "side", "set", "complete", "reps", "clean", "rejected", "rejectedShare",
                   "rejectedByFault", "rejectedShareByFault", "firstPeak", "lastPeak", "peakSlope",
                   "meanCleanPeak", "baseline", "progress", "progressPercent"],
}


def decode_analytics(text):
    """An event payload's JSON as an analytics record (a dict), or None when its "type" is not an
    analytics record's (a motion event). Raises WireError("invalidJSON") for JSON that does not
    parse, or an analytics record that lacks a key or has an unknown side."""
    try:
        record = json.loads(text)
    except ValueError as error:
        raise WireError("invalidJSON", str(error)) from None
    if not isinstance(record, dict) or record.get("type") not in ANALYTICS_KEYS:
        return None
    missing = [key for key in ANALYTICS_KEYS[record["type"]] if key not in record]
    if missing:
        raise WireError("invalidJSON", f"{record['type']} without {', '.join(missing)}")
    if "side" in record and record["side"] not in ("left", "right"):
        raise WireError("invalidJSON", f"unknown side {record['side']!r}")
    return record


# Whole messages


def decode_payload(payload):
    """Decodes any payload: {"header": ..., "pose": ...} or {"header": ..., "json": text}."""
    header = decode_header(payload)
    if header["kind"] == "pose":
        header, pose = decode_pose(payload)
        return {"header": header, "pose": pose}
    header, text = decode_json_payload(payload)
    result = {"header": header, "json": text}
    if header["kind"] == "health":
        try:
            report = json.loads(text)
            for key in ("process", "role", "pid", "uptime", "counters"):
                report[key]
        except (ValueError, KeyError, TypeError) as error:
            raise WireError("invalidJSON", str(error)) from None
    return result


def decode_message(topic, payload):
    """Decodes both frames, checking that the topic's kind matches the payload's."""
    parsed = parse_topic(topic)
    header = decode_header(payload)
    if parsed["kind"] != header["kind"]:
        raise WireError("topicMismatch", f"a {header['kind']} payload on a {parsed['kind']} topic")
    message = decode_payload(payload)
    message["topic"] = parsed["topic"]
    return message


def encode_message(topic, header, pose=None, json_text=None):
    """The two frames of a message: (topic bytes, payload bytes)."""
    parsed = parse_topic(topic)
    if parsed["kind"] != header["kind"]:
        raise WireError("topicMismatch", f"a {header['kind']} payload on a {parsed['kind']} topic")
    fields = (header["stream_id"], header["sequence"], header["sent_at_ns"])
    if header["kind"] == "pose":
        payload = encode_pose(pose, *fields)
    else:
        payload = encode_json_payload(header["kind"], json_text, *fields)
    return parsed["topic"].encode("ascii"), payload


class SequenceTracker:
    """A minimal receiver-side tracker (the Swift SequenceTracker, without its window): per
    topic, counts delivered, missing and duplicated messages and sender restarts."""

    def __init__(self):
        self.streams = {}
        self.delivered = self.missing = self.duplicates = self.restarts = 0

    def record(self, topic, header):
        """Returns "newStream", "restart", "inOrder", "gap:N" or "old"."""
        stream, sequence = header["stream_id"], header["sequence"]
        current = self.streams.get(topic)
        if current is None or current[0] != stream:
            self.restarts += current is not None
            self.streams[topic] = (stream, sequence)
            self.delivered += 1
            return "restart" if current is not None else "newStream"
        highest = current[1]
        if sequence <= highest:
            self.duplicates += 1
            return "old"
        self.streams[topic] = (stream, sequence)
        self.delivered += 1
        missed = sequence - highest - 1
        self.missing += missed
        return f"gap:{missed}" if missed else "inOrder"


# Replay (docs/wire-format.md, section "Replay"): a DEALER sends one request frame to a
# publisher's ROUTER endpoint and reads back entries (the original frames, byte for byte), then
# a batch end or stream end, or one error.

REPLAY_MAGIC = b"KR"
REPLAY_VERSION = 1
REPLAY_MAX_BATCH = 256
REPLAY_TYPES = {0x01: "request", 0x81: "entry", 0x82: "batchEnd", 0x83: "streamEnd", 0x8F: "error"}
REPLAY_ERROR_CODES = {1: "malformedRequest", 2: "unsupportedVersion", 3: "unknownStream", 4: "notRetained"}
REPLAY_ERROR_VALUES = {name: code for code, name in REPLAY_ERROR_CODES.items()}

_REPLAY_REQUEST = struct.Struct("<2sBBIQQIB")      # 29 bytes, then the topic
_REPLAY_ENTRY = struct.Struct("<2sBBIQQ")          # 24 bytes, then the original frames
_REPLAY_END = struct.Struct("<2sBBIQQQQI")         # 44 bytes
_REPLAY_ERROR = struct.Struct("<2sBBIBQQQ")        # 33 bytes, then the message text


class ReplayError(ValueError):
    """A malformed replay frame. `code` is the Swift ReplayFrameError.code."""

    def __init__(self, code, detail=""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


def _replay_prefix(frame, expected):
    if len(frame) < 4:
        raise ReplayError("truncated", f"needs 4 bytes, has {len(frame)}")
    if frame[:2] != REPLAY_MAGIC:
        raise ReplayError("badMagic")
    if frame[2] != REPLAY_VERSION:
        raise ReplayError("unsupportedVersion", str(frame[2]))
    kind = REPLAY_TYPES.get(frame[3])
    if kind not in expected:
        raise ReplayError("unexpectedType", f"0x{frame[3]:02x}")
    return kind


def _replay_need(frame, size):
    if len(frame) < size:
        raise ReplayError("truncated", f"needs {size} bytes, has {len(frame)}")


def encode_replay_request(request_id, topic, stream_id, start, limit):
    """One request frame: topic T, stream S (int, 16 hex digits, or None for the current
    stream), from sequence `start`, at most `limit` entries."""
    topic_bytes = parse_topic(topic)["topic"].encode("ascii")
    if isinstance(stream_id, str):
        stream_id = int(stream_id, 16)
    return _REPLAY_REQUEST.pack(REPLAY_MAGIC, REPLAY_VERSION, 0x01, request_id, stream_id or 0,
                                start, limit, len(topic_bytes)) + topic_bytes


def decode_replay_request(frame):
    """{"request_id", "topic", "stream_id" (16 hex digits, or None), "from", "limit"}."""
    frame = bytes(frame)
    _replay_prefix(frame, ("request",))
    _replay_need(frame, _REPLAY_REQUEST.size)
    _, _, _, request_id, stream_id, start, limit, length = _REPLAY_REQUEST.unpack_from(frame, 0)
    _replay_need(frame, _REPLAY_REQUEST.size + length)
    if len(frame) > _REPLAY_REQUEST.size + length:
        raise ReplayError("trailingBytes", str(len(frame) - _REPLAY_REQUEST.size - length))
    try:
        topic = parse_topic(frame[_REPLAY_REQUEST.size:])["topic"]
    except WireError as error:
        raise ReplayError("invalidTopic", str(error)) from None
    if limit == 0:
        raise ReplayError("invalidLimit")
    return {"request_id": request_id, "topic": topic,
            "stream_id": f"{stream_id:016x}" if stream_id else None, "from": start, "limit": limit}


def encode_replay_reply(reply):
    """The frames of a reply dict as decode_replay_reply returns it."""
    kind = reply["type"]
    stream = int(reply["stream_id"], 16)
    if kind == "entry":
        head = _REPLAY_ENTRY.pack(REPLAY_MAGIC, REPLAY_VERSION, 0x81, reply["request_id"], stream,
                                  reply["sequence"])
        return [head] + [bytes(frame) for frame in reply["frames"]]
    if kind in ("batchEnd", "streamEnd"):
        code = 0x83 if reply["next"] > reply["last"] else 0x82
        return [_REPLAY_END.pack(REPLAY_MAGIC, REPLAY_VERSION, code, reply["request_id"], stream,
                                 reply["first"], reply["last"], reply["next"], reply["count"])]
    text = reply["message"].encode("utf-8")[:256]
    return [_REPLAY_ERROR.pack(REPLAY_MAGIC, REPLAY_VERSION, 0x8F, reply["request_id"],
                               REPLAY_ERROR_VALUES[reply["code"]], stream, reply["first"],
                               reply["last"]) + text]


def decode_replay_reply(frames):
    """A reply as a DEALER receives it: {"type": "entry"|"batchEnd"|"streamEnd"|"error", ...}.
    An entry's "frames" are the original [topic, payload], for decode_message."""
    frames = [bytes(frame) for frame in frames]
    if not frames:
        raise ReplayError("frameCount", "0")
    head = frames[0]
    kind = _replay_prefix(head, ("entry", "batchEnd", "streamEnd", "error"))
    _replay_need(head, 8)
    if kind == "entry":
        _replay_need(head, _REPLAY_ENTRY.size)
        if len(head) > _REPLAY_ENTRY.size:
            raise ReplayError("trailingBytes")
        _, _, _, request_id, stream, sequence = _REPLAY_ENTRY.unpack_from(head, 0)
        if len(frames) < 2:
            raise ReplayError("frameCount", str(len(frames)))
        return {"type": kind, "request_id": request_id, "stream_id": f"{stream:016x}",
                "sequence": sequence, "frames": frames[1:]}
    if kind in ("batchEnd", "streamEnd"):
        _replay_need(head, _REPLAY_END.size)
        if len(head) > _REPLAY_END.size:
            raise ReplayError("trailingBytes")
        _, _, _, request_id, stream, first, last, next_, count = _REPLAY_END.unpack_from(head, 0)
        if len(frames) != 1:
            raise ReplayError("frameCount", str(len(frames)))
        return {"type": kind, "request_id": request_id, "stream_id": f"{stream:016x}",
                "first": first, "last": last, "next": next_, "count": count}
    _replay_need(head, 9)
    _replay_need(head, _REPLAY_ERROR.size)
    _, _, _, request_id, code, stream, first, last = _REPLAY_ERROR.unpack_from(head, 0)
    if len(frames) != 1:
        raise ReplayError("frameCount", str(len(frames)))
    if code not in REPLAY_ERROR_CODES:
        raise ReplayError("unknownErrorCode", str(code))
    text = head[_REPLAY_ERROR.size:]
    try:
        if len(text) > 256:
            raise UnicodeError
        message = text.decode("utf-8")
    except UnicodeError:
        raise ReplayError("invalidText") from None
    return {"type": kind, "request_id": request_id, "code": REPLAY_ERROR_CODES[code],
            "stream_id": f"{stream:016x}", "first": first, "last": last, "message": message}


def replay_announcement(health_json_text):
    """The "replay" field of a health report: {"endpoint", "streams": [{"topic", "stream",
    "first", "last"}]}, or None when the process serves no replay. A process with more streams
    than one report holds sends one report per page of streams (wire-format section 11): merge
    what each page says, per stream, as ExactlyOnce.announced does."""
    return json.loads(health_json_text).get("replay")


class ExactlyOnce:
    """The exactly-once decisions of the Swift ExactlyOnceStateMachine, with no I/O.

    Feed it live messages (`received(..., live=True)`), replayed ones (`live=False`), replay
    ends and errors, heartbeats (`announced`) and the time (`tick`); each call returns actions:
    ("deliver", key, sequence, message), ("request", endpoint, request dict) to send with
    encode_replay_request, ("lost", key, start, end) for sequences [start, end) that cannot be
    had. A key is (topic, stream id as 16 hex digits). `start` is "beginning", "now" or an int.
    `cursor` maps keys to the last sequence delivered (store it; give it back to resume)."""

    def __init__(self, start="now", cursor=None, accepts=("",), max_buffered=4096,
                 request_timeout=3.0, announcement_timeout=5.0):
        self.start, self.accepts = start, tuple(accepts)
        self.cursor = dict(cursor or {})
        self.max_buffered = max(1, max_buffered)
        self.request_timeout, self.announcement_timeout = request_timeout, announcement_timeout
        self.streams, self.requests, self.next_id = {}, {}, 1
        self.counters = {}

    def _count(self, name, by=1):
        self.counters[name] = self.counters.get(name, 0) + by

    def _first(self, key, live=None, announced_last=None):
        if key in self.cursor:
            return self.cursor[key] + 1
        if self.start == "beginning":
            return 0
        if self.start == "now":
            return live if live is not None else announced_last + 1
        return int(self.start)

    def _new(self, next_):
        return {"next": next_, "buffer": {}, "endpoint": None, "last": None, "suspect": None,
                "pending": None, "hole_since": None, "unknown": False, "deferred_while_asking": False}

    def _deliver(self, key, state, sequence, message, out):
        out.append(("deliver", key, sequence, message))
        state["next"] = sequence + 1
        self.cursor[key] = sequence

    def _drain(self, key, state, out):
        while state["next"] in state["buffer"]:
            self._deliver(key, state, state["next"], state["buffer"].pop(state["next"]), out)
        if not state["buffer"] or min(state["buffer"]) == state["next"]:
            state["hole_since"] = None

    def _lose(self, key, start, end, out):
        if end > start:
            self._count("lost", end - start)
            out.append(("lost", key, start, end))

    def _skip(self, key, state, target, out):
        for sequence in sorted(s for s in state["buffer"] if s < target):
            message = state["buffer"].pop(sequence)
            if sequence > state["next"]:
                self._lose(key, state["next"], sequence, out)
            if sequence >= state["next"]:
                self._deliver(key, state, sequence, message, out)
        if state["next"] < target:
            self._lose(key, state["next"], target, out)
            state["next"] = target
        self._drain(key, state, out)

    def _skip_hole(self, key, state, out):
        if state["buffer"]:
            self._skip(key, state, min(state["buffer"]), out)
        elif state["last"] is not None and state["last"] >= state["next"]:
            self._skip(key, state, state["last"] + 1, out)
        state["hole_since"] = None

    def _request_if_behind(self, key, state, now, out):
        if state["pending"] is not None:
            return
        lowest = min(state["buffer"]) if state["buffer"] else None
        behind_live = lowest is not None and state["next"] < lowest
        behind_announced = state["last"] is not None and state["next"] <= state["last"]
        if not (behind_live or behind_announced) or state["endpoint"] is None:
            return
        if state["unknown"]:
            self._skip_hole(key, state, out)
            return
        limit = REPLAY_MAX_BATCH
        if behind_live:
            limit = min(limit, lowest - state["next"])
        request_id = self.next_id
        self.next_id = 1 if self.next_id == 0xFFFFFFFF else self.next_id + 1
        request = {"request_id": request_id, "topic": key[0], "stream_id": key[1],
                   "from": state["next"], "limit": limit}
        state["pending"] = (request_id, now)
        state["deferred_while_asking"] = False
        self.requests[request_id] = key
        self._count("requests")
        out.append(("request", state["endpoint"], request))

    def received(self, key, sequence, message, live, now):
        out = []
        if key not in self.streams:
            if not live:
                return out
            self.streams[key] = self._new(self._first(key, live=sequence))
        state = self.streams[key]
        if not live:
            self._count("replayed")
        if sequence < state["next"] or sequence in state["buffer"]:
            self._count("duplicates")
            return out
        if sequence == state["next"]:
            self._deliver(key, state, sequence, message, out)
            self._drain(key, state, out)
        elif len(state["buffer"]) < self.max_buffered:
            state["buffer"][sequence] = message
        else:
            self._count("deferred")
            if state["pending"] is not None:
                state["deferred_while_asking"] = True
        if state["buffer"] and state["next"] < min(state["buffer"]) and state["hole_since"] is None:
            state["hole_since"] = now
        self._request_if_behind(key, state, now, out)
        return out

    def replay_ended(self, end, now):
        out = []
        key = self.requests.pop(end["request_id"], None)
        if key is None or key not in self.streams:
            return out
        state = self.streams[key]
        if state["pending"] and state["pending"][0] == end["request_id"]:
            state["pending"] = None
        state["last"] = max(state["last"] if state["last"] is not None else end["last"], end["last"])
        if state["next"] < end["first"]:
            self._skip(key, state, end["first"], out)
        if state["next"] < end["next"] and not state["deferred_while_asking"]:
            # The server went past these without sending them (a damaged journal record):
            # asking again would get the same answer for ever. They are lost.
            self._skip(key, state, end["next"], out)
        stream_end = end["next"] > end["last"]
        if stream_end and state["buffer"]:
            lowest = min(state["buffer"])
            if state["last"] < state["next"] < lowest or end["last"] < state["next"] < lowest:
                self._skip(key, state, lowest, out)
        if end["count"] > 0 or stream_end:
            self._request_if_behind(key, state, now, out)
        return out

    def replay_failed(self, failure, now):
        out = []
        key = self.requests.pop(failure["request_id"], None)
        if key is None or key not in self.streams:
            return out
        state = self.streams[key]
        if state["pending"] and state["pending"][0] == failure["request_id"]:
            state["pending"] = None
        if failure["code"] == "notRetained":
            self._skip(key, state, failure["first"], out)
            self._request_if_behind(key, state, now, out)
        else:
            state["unknown"] = True
            self._skip_hole(key, state, out)
        return out

    def announced(self, announcement, now):
        out = []
        for info in announcement["streams"]:
            if not any(info["topic"].startswith(prefix) for prefix in self.accepts):
                continue
            key = (info["topic"], info["stream"])
            is_new = key not in self.streams
            if is_new:
                self.streams[key] = self._new(self._first(key, announced_last=info["last"]))
            state = self.streams[key]
            state["endpoint"] = announcement["endpoint"]
            state["last"] = info["last"] if state["last"] is None else max(state["last"], info["last"])
            if is_new or state["buffer"]:
                self._request_if_behind(key, state, now, out)
            elif info["last"] >= state["next"]:
                if state["suspect"] is not None and state["suspect"] >= state["next"]:
                    state["suspect"] = None
                    self._request_if_behind(key, state, now, out)
                else:
                    state["suspect"] = info["last"]
            else:
                state["suspect"] = None
        return out

    def tick(self, now):
        out = []
        for key in sorted(self.streams):
            state = self.streams[key]
            pending = state["pending"]
            if pending is not None and now - pending[1] >= self.request_timeout:
                self.requests.pop(pending[0], None)
                state["pending"] = None
                self._count("retries")
                self._request_if_behind(key, state, now, out)
            if (state["endpoint"] is None and state["hole_since"] is not None
                    and now - state["hole_since"] >= self.announcement_timeout):
                self._skip_hole(key, state, out)
        return out


# The bus directory (the rule of `kinesia`'s BusAddress.prepare(): Sources/KinesiaClient)


class BusDirectoryError(Exception):
    """A bus directory that must not be trusted; the message says what to set."""


BUS_FILES = ("pub.sock", "sub.sock", "broker.lock")


def default_bus_directory(environ=None):
    """$XDG_RUNTIME_DIR/kinesia when XDG_RUNTIME_DIR is an absolute path, else /tmp/kinesia-<uid>."""
    environ = os.environ if environ is None else environ
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    return os.path.join(runtime, "kinesia") if runtime.startswith("/") else f"/tmp/kinesia-{os.getuid()}"


def prepare_bus_directory(directory):
    """Makes `directory` (mode 0700) if missing, else checks it, as `kinesia` does.

    Refuses (BusDirectoryError) a symbolic link, anything but a directory, a directory of
    another user or with group/other permissions, and a link or foreign or loose file among the
    broker's files. Never changes an existing directory. Returns the directory.
    """
    import stat

    def refuse(reason):
        raise BusDirectoryError(
            f"cannot use bus directory {directory}: {reason}; use a directory of your own with "
            "mode 0700 (--bus DIR, or set KINESIA_BUS or XDG_RUNTIME_DIR)")

    def check(path, info):
        if stat.S_ISLNK(info.st_mode):
            refuse(f"{path} is a symbolic link (links are not followed there)")
        if info.st_uid != os.geteuid():
            refuse(f"{path} is owned by uid {info.st_uid}, not by uid {os.geteuid()} (you)")
        if info.st_mode & 0o077:
            refuse(f"{path} has mode 0{stat.S_IMODE(info.st_mode):o}: other users may reach it")

    created = False
    try:
        os.makedirs(os.path.dirname(directory) or "/", mode=0o700, exist_ok=True)
        os.mkdir(directory, 0o700)
        created = True
    except FileExistsError:
        pass
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        info = os.lstat(directory) if os.path.lexists(directory) else None
        if info is not None and stat.S_ISLNK(info.st_mode):
            refuse(f"{directory} is a symbolic link (links are not followed there)")
        refuse(f"{directory}: {error.strerror}")
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            refuse(f"{directory} is owned by uid {info.st_uid}, not by uid {os.geteuid()} (you)")
        if created:
            os.fchmod(fd, 0o700)
        else:
            check(directory, info)
        for name in BUS_FILES:
            try:
                entry = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            check(os.path.join(directory, name), entry)
    finally:
        os.close(fd)
    return directory


# Command line


def _check(directory):
    with open(os.path.join(directory, "expected.json"), encoding="utf-8") as file:
        expected = json.load(file)
    if expected["format_version"] != VERSION:
        raise SystemExit(f"fixtures are for format version {expected['format_version']}")
    failures = []
    checked = 0
    for entry in expected["valid"]:
        checked += 1
        with open(os.path.join(directory, entry["file"]), "rb") as file:
            payload = file.read()
        try:
            message = decode_message(entry["topic"], payload)
        except WireError as error:
            failures.append(f"{entry['file']}: {error}")
            continue
        if message["header"] != entry["header"]:
            failures.append(f"{entry['file']}: header {message['header']} != {entry['header']}")
        if "pose" in entry and message.get("pose") != entry["pose"]:
            failures.append(f"{entry['file']}: pose {message.get('pose')} != {entry['pose']}")
        if "json" in entry and message.get("json") != entry["json"]:
            failures.append(f"{entry['file']}: json {message.get('json')!r} != {entry['json']!r}")
        _, encoded = encode_message(entry["topic"], entry["header"], pose=entry.get("pose"),
                                    json_text=entry.get("json"))
        if encoded != payload:
            failures.append(f"{entry['file']}: Python encodes {encoded.hex()}, fixture is "
                            f"{payload.hex()}")
    for entry in expected["invalid"]:
        checked += 1
        with open(os.path.join(directory, entry["file"]), "rb") as file:
            payload = file.read()
        try:
            decode_message(entry["topic"], payload)
            failures.append(f"{entry['file']}: decoded, expected {entry['error']}")
        except WireError as error:
            if error.code != entry["error"]:
                failures.append(f"{entry['file']}: {error.code} ({error}), expected "
                                f"{entry['error']}")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"{checked} fixtures ok")
    return 0


def _check_replay(path):
    """Checks the replay vectors (Tests/KinesiaWireTests/Fixtures/replay.json) both ways."""
    with open(path, encoding="utf-8") as file:
        vectors = json.load(file)
    failures, checked = [], 0
    for entry in vectors["requests"]:
        checked += 1
        frame = bytes.fromhex(entry["hex"])
        try:
            decoded = decode_replay_request(frame)
        except ReplayError as error:
            if error.code != entry.get("error"):
                failures.append(f"{entry['name']}: {error.code}, expected {entry.get('error')}")
            continue
        if "error" in entry:
            failures.append(f"{entry['name']}: decoded, expected {entry['error']}")
            continue
        expected = {"request_id": entry["request_id"], "topic": entry["topic"],
                    "stream_id": entry["stream_id"], "from": int(entry["from"]),
                    "limit": entry["limit"]}
        if decoded != expected:
            failures.append(f"{entry['name']}: {decoded} != {expected}")
        encoded = encode_replay_request(decoded["request_id"], decoded["topic"],
                                        decoded["stream_id"], decoded["from"], decoded["limit"])
        if encoded != frame:
            failures.append(f"{entry['name']}: Python encodes {encoded.hex()}")
    for entry in vectors["replies"]:
        checked += 1
        frames = [bytes.fromhex(frame) for frame in entry["frames"]]
        try:
            reply = decode_replay_reply(frames)
        except ReplayError as error:
            failures.append(f"{entry['name']}: {error}")
            continue
        for field, value in entry.items():
            if field in ("name", "frames"):
                continue
            got = reply.get(field)
            if str(got) != str(value):
                failures.append(f"{entry['name']}: {field} {got!r} != {value!r}")
        if reply["type"] == "entry":
            decode_message(reply["frames"][0], reply["frames"][1])
        if encode_replay_reply(reply) != frames:
            failures.append(f"{entry['name']}: Python encodes other frames")
        fixed = _REPLAY_ERROR.size if reply["type"] == "error" else len(frames[0])
        for cut in range(fixed):   # an error's text is free in length: cut its fixed part
            try:
                decode_replay_reply([frames[0][:cut]] + frames[1:])
                failures.append(f"{entry['name']}: cut at {cut} decoded")
            except ReplayError:
                pass
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"{checked} replay vectors ok")
    return 0


def _encode_fixtures(expected_path, directory):
    with open(expected_path, encoding="utf-8") as file:
        expected = json.load(file)
    os.makedirs(directory, exist_ok=True)
    for entry in expected["valid"]:
        _, payload = encode_message(entry["topic"], entry["header"], pose=entry.get("pose"),
                                    json_text=entry.get("json"))
        with open(os.path.join(directory, entry["file"]), "wb") as file:
            file.write(payload)
    print(f"{len(expected['valid'])} fixtures written to {directory}")
    return 0


def _decode_file(path, topic):
    with open(path, "rb") as file:
        payload = file.read()
    try:
        message = decode_message(topic, payload) if topic else decode_payload(payload)
    except WireError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return 1
    if "json" in message:
        try:
            message["body"] = json.loads(message["json"])
        except ValueError:
            pass
    print(json.dumps(message, indent=2, ensure_ascii=False))
    return 0


def main(argv):
    usage = ("usage: kinesia_wire.py decode FILE [--topic TOPIC]\n"
             "       kinesia_wire.py check FIXTURES_DIR\n"
             "       kinesia_wire.py encode-fixtures EXPECTED_JSON OUT_DIR\n"
             "       kinesia_wire.py check-replay REPLAY_JSON")
    if len(argv) >= 2 and argv[0] == "decode":
        topic = None
        if len(argv) == 4 and argv[2] == "--topic":
            topic = argv[3]
        elif len(argv) != 2:
            print(usage, file=sys.stderr)
            return 64
        return _decode_file(argv[1], topic)
    if len(argv) == 2 and argv[0] == "check":
        return _check(argv[1])
    if len(argv) == 2 and argv[0] == "check-replay":
        return _check_replay(argv[1])
    if len(argv) == 3 and argv[0] == "encode-fixtures":
        return _encode_fixtures(argv[1], argv[2])
    if argv and argv[0] in ("-h", "--help", "help"):
        print(usage)
        return 0
    print(usage, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
