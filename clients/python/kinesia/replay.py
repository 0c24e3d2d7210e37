"""Replay (docs/wire-format.md, section "Replay"): the request and reply frames of a publisher's
replay endpoint, and the replay announcement of its health reports.

    from kinesia.replay import decode_replay_reply, encode_replay_request
    dealer.send(encode_replay_request(1, "event/cam0/left/", stream_id, 0, 256))
    reply = decode_replay_reply(dealer.recv_multipart())

Decoding never trusts its input: every malformed frame raises ReplayError, whose `code` is the
Swift ReplayFrameError.code.
"""

from __future__ import annotations

import json
import struct
from typing import Any, Iterable, Mapping

from kinesia.wire import Buffer, WireError, parse_topic

# Replay (docs/wire-format.md, section "Replay"): a DEALER sends one request frame to a
# publisher's ROUTER endpoint and reads back entries (the original frames, byte for byte), then
# a batch end or stream end, or one error.

REPLAY_MAGIC = b"KR"
REPLAY_VERSION = 1
REPLAY_MAX_BATCH = 256
REPLAY_TYPES: dict[int, str] = {0x01: "request", 0x81: "entry", 0x82: "batchEnd", 0x83: "streamEnd",
                                0x8F: "error"}
REPLAY_ERROR_CODES: dict[int, str] = {1: "malformedRequest", 2: "unsupportedVersion",
                                      3: "unknownStream", 4: "notRetained",
                                      5: "notAllowed"}
REPLAY_ERROR_VALUES = {name: code for code, name in REPLAY_ERROR_CODES.items()}

_REPLAY_REQUEST = struct.Struct("<2sBBIQQIB")      # 29 bytes, then the topic
_REPLAY_ENTRY = struct.Struct("<2sBBIQQ")          # 24 bytes, then the original frames
_REPLAY_END = struct.Struct("<2sBBIQQQQI")         # 44 bytes
_REPLAY_ERROR = struct.Struct("<2sBBIBQQQ")        # 33 bytes, then the message text


class ReplayError(ValueError):
    """A malformed replay frame. `code` is the Swift ReplayFrameError.code."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


def _replay_prefix(frame: bytes, expected: tuple[str, ...]) -> str:
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


def _replay_need(frame: bytes, size: int) -> None:
    if len(frame) < size:
        raise ReplayError("truncated", f"needs {size} bytes, has {len(frame)}")


def encode_replay_request(request_id: int, topic: str | Buffer, stream_id: int | str | None,
                          start: int, limit: int) -> bytes:
    """One request frame: topic T, stream S (int, 16 hex digits, or None for the current
    stream), from sequence `start`, at most `limit` entries."""
    topic_bytes = parse_topic(topic)["topic"].encode("ascii")
    if isinstance(stream_id, str):
        stream_id = int(stream_id, 16)
    return _REPLAY_REQUEST.pack(REPLAY_MAGIC, REPLAY_VERSION, 0x01, request_id, stream_id or 0,
                                start, limit, len(topic_bytes)) + topic_bytes


def decode_replay_request(frame: Buffer) -> dict[str, Any]:
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


def encode_replay_reply(reply: Mapping[str, Any]) -> list[bytes]:
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


def decode_replay_reply(reply_frames: Iterable[Buffer]) -> dict[str, Any]:
    """A reply as a DEALER receives it: {"type": "entry"|"batchEnd"|"streamEnd"|"error", ...}.
    An entry's "frames" are the original [topic, payload], for decode_message."""
    frames = [bytes(frame) for frame in reply_frames]
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


def replay_announcement(health_json_text: str | bytes) -> Any:
    """The "replay" field of a health report: {"endpoint", "streams": [{"topic", "stream",
    "first", "last"}]}, or None when the process serves no replay. A process with more streams
    than one report holds sends one report per page of streams (wire-format section 11): merge
    what each page says, per stream, as ExactlyOnce.announced does."""
    return json.loads(health_json_text).get("replay")


def moving_streams(health_json_text: str | bytes) -> list[Any]:
    """The "moving" field of a health report: [{"topic", "stream"}], the streams a pool worker
    stopped without ending their runs (moved to another worker, or fenced at its lease's lapse),
    for ExactlyOnce.moving; empty when there is none (wire-format section 11)."""
    moving = json.loads(health_json_text).get("moving") or []
    return list(moving) if isinstance(moving, list) else []
