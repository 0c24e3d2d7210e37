"""Exactly-once delivery: the decisions of the Swift ExactlyOnceStateMachine, with no I/O.

    from kinesia.exactly_once import ExactlyOnce
    machine = ExactlyOnce(start="beginning", accepts=("event/",))
    for action in machine.received(key, sequence, message, True, time.monotonic()): ...

scripts/examples/listen_exactly_once.py drives it with pyzmq (a SUB socket for the live
messages and the health reports, a DEALER per replay endpoint).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Tuple, TypedDict

from kinesia.replay import REPLAY_MAX_BATCH

Key = Tuple[str, str]
"""A stream: (topic, stream id as 16 hex digits)."""

Action = Tuple[Any, ...]
"""("deliver", key, sequence, message), ("request", endpoint, request dict) or
("lost", key, start, end): see ExactlyOnce."""


class _Stream(TypedDict):
    """What ExactlyOnce knows of one stream."""

    next: int
    buffer: dict[int, Any]
    endpoint: Optional[str]
    last: Optional[int]
    suspect: Optional[int]
    pending: Optional[Tuple[int, float]]
    hole_since: Optional[float]
    unknown: bool
    deferred_while_asking: bool


class ExactlyOnce:
    """The exactly-once decisions of the Swift ExactlyOnceStateMachine, with no I/O.

    Feed it live messages (`received(..., live=True)`), replayed ones (`live=False`), replay
    ends and errors, heartbeats (`announced`) and the time (`tick`); each call returns actions:
    ("deliver", key, sequence, message), ("request", endpoint, request dict) to send with
    encode_replay_request, ("lost", key, start, end) for sequences [start, end) that cannot be
    had. A key is (topic, stream id as 16 hex digits). `start` is "beginning", "now" or an int.
    `cursor` maps keys to the last sequence delivered (store it; give it back to resume)."""

    def __init__(self, start: str | int = "now", cursor: Mapping[Key, int] | None = None,
                 accepts: Iterable[str] = ("",), max_buffered: int = 4096,
                 request_timeout: float = 3.0, announcement_timeout: float = 5.0) -> None:
        self.start, self.accepts = start, tuple(accepts)
        self.cursor = dict(cursor or {})
        self.max_buffered = max(1, max_buffered)
        self.request_timeout, self.announcement_timeout = request_timeout, announcement_timeout
        self.streams: dict[Key, _Stream] = {}
        self.requests: dict[int, Key] = {}
        self.next_id = 1
        self.counters: dict[str, int] = {}

    def _count(self, name: str, by: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + by

    def _first(self, key: Key, live: int | None = None, announced_last: int | None = None) -> int:
        if key in self.cursor:
            return self.cursor[key] + 1
        if self.start == "beginning":
            return 0
        if self.start == "now":
            if live is not None:
                return live
            assert announced_last is not None  # every caller gives one of the two
            return announced_last + 1
        return int(self.start)

    def _new(self, next_: int) -> _Stream:
        return {"next": next_, "buffer": {}, "endpoint": None, "last": None, "suspect": None,
                "pending": None, "hole_since": None, "unknown": False,
                "deferred_while_asking": False}

    def _deliver(self, key: Key, state: _Stream, sequence: int, message: Any,
                 out: list[Action]) -> None:
        out.append(("deliver", key, sequence, message))
        state["next"] = sequence + 1
        self.cursor[key] = sequence

    def _drain(self, key: Key, state: _Stream, out: list[Action]) -> None:
        while state["next"] in state["buffer"]:
            self._deliver(key, state, state["next"], state["buffer"].pop(state["next"]), out)
        if not state["buffer"] or min(state["buffer"]) == state["next"]:
            state["hole_since"] = None

    def _lose(self, key: Key, start: int, end: int, out: list[Action]) -> None:
        if end > start:
            self._count("lost", end - start)
            out.append(("lost", key, start, end))

    def _skip(self, key: Key, state: _Stream, target: int, out: list[Action]) -> None:
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

    def _skip_hole(self, key: Key, state: _Stream, out: list[Action]) -> None:
        if state["buffer"]:
            self._skip(key, state, min(state["buffer"]), out)
        elif state["last"] is not None and state["last"] >= state["next"]:
            self._skip(key, state, state["last"] + 1, out)
        state["hole_since"] = None

    def _request_if_behind(self, key: Key, state: _Stream, now: float, out: list[Action]) -> None:
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
        if behind_live and lowest is not None:
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

    def received(self, key: Key, sequence: int, message: Any, live: bool,
                 now: float) -> list[Action]:
        out: list[Action] = []
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

    def replay_ended(self, end: Mapping[str, Any], now: float) -> list[Action]:
        out: list[Action] = []
        key = self.requests.pop(end["request_id"], None)
        if key is None or key not in self.streams:
            return out
        state = self.streams[key]
        if state["pending"] and state["pending"][0] == end["request_id"]:
            state["pending"] = None
        state["last"] = max(state["last"] if state["last"] is not None else end["last"],
                            end["last"])
        if state["next"] < end["first"]:
            self._skip(key, state, end["first"], out)
        if state["next"] < end["next"] and not state["deferred_while_asking"]:
            # The server went past these without sending them (a damaged journal record):
            # asking again would get the same answer for ever. They are lost.
            self._skip(key, state, end["next"], out)
        stream_end = end["next"] > end["last"]
        if stream_end and state["buffer"]:
            lowest = min(state["buffer"])
            assert state["last"] is not None  # set above
            if state["last"] < state["next"] < lowest or end["last"] < state["next"] < lowest:
                self._skip(key, state, lowest, out)
        if end["count"] > 0 or stream_end:
            self._request_if_behind(key, state, now, out)
        return out

    def replay_failed(self, failure: Mapping[str, Any], now: float) -> list[Action]:
        out: list[Action] = []
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

    def announced(self, announcement: Mapping[str, Any], now: float) -> list[Action]:
        out: list[Action] = []
        for info in announcement["streams"]:
            if not any(info["topic"].startswith(prefix) for prefix in self.accepts):
                continue
            key = (info["topic"], info["stream"])
            is_new = key not in self.streams
            if is_new:
                self.streams[key] = self._new(self._first(key, announced_last=info["last"]))
            state = self.streams[key]
            state["endpoint"] = announcement["endpoint"]
            state["last"] = (info["last"] if state["last"] is None
                             else max(state["last"], info["last"]))
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

    def tick(self, now: float) -> list[Action]:
        out: list[Action] = []
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
