"""The Kinesia wire format, version 1: topics, the 28-byte header, pose records, JSON payloads
(events, snapshots, health reports) and analytics records, in plain Python 3 (standard library
only).

The format is documented in docs/wire-format.md. Every bus message is two ZeroMQ frames,
[topic, payload]; every payload starts with a 28-byte header (magic "KW", version, kind, stream
id, sequence, send time); poses follow as a little-endian binary record, events, snapshots and
health reports as UTF-8 JSON.

    from kinesia.wire import decode_message
    message = decode_message(topic_frame, payload_frame)
    message["header"]["sequence"], message["pose"]["points"]["leftElbow"]

Decoding never trusts its input: every malformed payload raises WireError, whose `code` is the
same as the Swift decoder's (`truncated`, `badMagic`, `nonFinite`, ...).
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any, Mapping, TypedDict, Union

Buffer = Union[bytes, bytearray, memoryview]
"""What the decoders read: a frame as pyzmq or a file gives it."""


class Header(TypedDict):
    """A payload's header as decode_header returns it (the stream id as 16 hex digits)."""

    kind: str
    stream_id: str
    sequence: int
    sent_at_ns: int


Pose = dict[str, Any]
"""A pose in the recordings' JSON shape: {"t", "w", "h" (when known), "points": {joint: [x, y]},
"confidence": {joint: value}}."""

Message = dict[str, Any]
"""A decoded message: {"header": Header, "pose": Pose} or {"header": Header, "json": text}, and
"topic" from decode_message."""

MAGIC = b"KW"
VERSION = 1
HEADER_SIZE = 28
MAX_POSE_PAYLOAD = 64 * 1024
MAX_JSON_PAYLOAD = 16 * 1024

KINDS: dict[int, str] = {1: "pose", 2: "event", 3: "snapshot", 4: "health", 5: "session"}
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

TOPIC_FIELDS: dict[str, list[str]] = {"pose": ["camera"], "event": ["camera", "session"],
                "snapshot": ["camera", "session"], "health": ["process"],
                "session": ["camera", "session"]}
MAX_NAME = 64
MAX_TOPIC = 9 + 2 * MAX_NAME + 2
NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")

_HEADER = struct.Struct("<2sBBQQQ")
_F64 = struct.Struct("<d")
_POINT = struct.Struct("<Bdd")
_CONFIDENCE = struct.Struct("<Bd")


class WireError(ValueError):
    """A malformed payload or topic. `code` names the case, as in Swift's WireError.code."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


# Topics


def parse_topic(topic: str | bytes | bytearray | memoryview) -> dict[str, str]:
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


def _check_name(name: bytes, field: str) -> None:
    if not name:
        raise WireError("invalidTopic", f"the {field} name is empty")
    if len(name) > MAX_NAME:
        raise WireError("invalidTopic", f"the {field} name is {len(name)} bytes long")
    for byte in name:
        if byte not in NAME_BYTES:
            raise WireError("invalidTopic", f"the {field} name contains byte 0x{byte:02x}")
    if set(name) == {ord(".")}:
        raise WireError("invalidTopic", f"the {field} name is reserved")


def make_topic(kind: str, *names: str) -> str:
    """Builds a topic string: make_topic("event", "cam0", "left") == "event/cam0/left/"."""
    text = "/".join([kind, *names]) + "/"
    parse_topic(text)
    return text


# Header


def decode_header(payload: Buffer) -> Header:
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


def encode_header(kind: str, stream_id: int | str, sequence: int, sent_at_ns: int) -> bytes:
    """The 28 header bytes. `stream_id` is an int or 16 hex digits."""
    if isinstance(stream_id, str):
        stream_id = int(stream_id, 16)
    return _HEADER.pack(MAGIC, VERSION, KIND_CODES[kind], stream_id, sequence, sent_at_ns)


# Poses


def _need(size: int, payload: bytes) -> None:
    if len(payload) < size:
        raise WireError("truncated", f"needs {size} bytes, has {len(payload)}")


def _finite(value: float, field: str) -> float:
    if not math.isfinite(value):
        raise WireError("nonFinite", f"{field} is not a finite number")
    return value


def _joint(index: int, seen: Mapping[str, object]) -> str:
    if index >= len(JOINTS):
        raise WireError("unknownJoint", f"index {index}")
    name = JOINTS[index]
    if name in seen:
        raise WireError("duplicateJoint", name)
    return name


def decode_pose(payload: Buffer) -> tuple[Header, Pose]:
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
    pose: Pose = {"t": timestamp}
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
    points: dict[str, list[float]] = {}
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
    confidence: dict[str, float] = {}
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


def encode_pose(pose: Mapping[str, Any], stream_id: int | str, sequence: int,
                sent_at_ns: int) -> bytes:
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


def _joint_index(name: str) -> int:
    if name not in JOINT_INDEX:
        raise WireError("unknownJoint", name)
    return JOINT_INDEX[name]


# JSON payloads (events, snapshots, health reports)


def decode_json_payload(payload: Buffer) -> tuple[Header, str]:
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


def encode_json_payload(kind: str, json_text: str | Buffer, stream_id: int | str, sequence: int,
                        sent_at_ns: int) -> bytes:
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


def health_json(process: str, role: str, pid: int, uptime: float,
                counters: Mapping[str, Any]) -> str:
    """A health report's JSON, as the Swift HealthReport writes it (keys sorted)."""
    return json.dumps({"process": process, "role": role, "pid": pid, "uptime": uptime,
                       "counters": counters}, sort_keys=True, separators=(",", ":"),
                      allow_nan=False)


# Analytics records (docs/wire-format.md, section 8): event payloads of an analytics session

ANALYTICS_KEYS: dict[str, list[str]] = {
    "repTempo": ["t", "side", "rep", "set", "clean", "faults", "peak", "low", "range", "start",
                 "peakTime", "end", "timeUp", "timeAtTop", "timeDown", "timeUnderTension"],
    "repSymmetry": ["t", "set", "pair", "left", "right", "peakDifference", "rangeRatio",
                    "tempoRatio"],
    "setSummary": ["t", "side", "set", "complete", "reps", "clean", "rejected", "rejectedShare",
                   "rejectedByFault", "rejectedShareByFault", "firstPeak", "lastPeak", "peakSlope",
                   "meanCleanPeak", "baseline", "progress", "progressPercent"],
}


def decode_analytics(text: str | bytes) -> dict[str, Any] | None:
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


def decode_payload(payload: Buffer) -> Message:
    """Decodes any payload: {"header": ..., "pose": ...} or {"header": ..., "json": text}."""
    header = decode_header(payload)
    if header["kind"] == "pose":
        header, pose = decode_pose(payload)
        return {"header": header, "pose": pose}
    header, text = decode_json_payload(payload)
    result: Message = {"header": header, "json": text}
    if header["kind"] == "health":
        try:
            report = json.loads(text)
            for key in ("process", "role", "pid", "uptime", "counters"):
                report[key]
        except (ValueError, KeyError, TypeError) as error:
            raise WireError("invalidJSON", str(error)) from None
    return result


def _with_article(name: str) -> str:
    """`an event`, `a pose`: a kind's name with its article."""
    return ("an " if name[:1] and name[:1] in "aeiou" else "a ") + name


def decode_message(topic: str | Buffer, payload: Buffer) -> Message:
    """Decodes both frames, checking that the topic's kind matches the payload's."""
    parsed = parse_topic(topic)
    header = decode_header(payload)
    if parsed["kind"] != header["kind"]:
        raise WireError(
            "topicMismatch", f"{_with_article(header['kind'])} payload on {_with_article(parsed['kind'])} topic")
    message = decode_payload(payload)
    message["topic"] = parsed["topic"]
    return message


def encode_message(topic: str | Buffer, header: Mapping[str, Any],
                   pose: Mapping[str, Any] | None = None,
                   json_text: str | Buffer | None = None) -> tuple[bytes, bytes]:
    """The two frames of a message: (topic bytes, payload bytes)."""
    parsed = parse_topic(topic)
    if parsed["kind"] != header["kind"]:
        raise WireError(
            "topicMismatch", f"{_with_article(header['kind'])} payload on {_with_article(parsed['kind'])} topic")
    fields = (header["stream_id"], header["sequence"], header["sent_at_ns"])
    if header["kind"] == "pose":
        if pose is None:
            raise TypeError("a pose message needs a pose")
        payload = encode_pose(pose, *fields)
    else:
        if json_text is None:
            raise TypeError(f"{_with_article(header['kind'])} message needs its JSON text")
        payload = encode_json_payload(header["kind"], json_text, *fields)
    return parsed["topic"].encode("ascii"), payload


