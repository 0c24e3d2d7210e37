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


MAX_SEQUENCE = (1 << 64) - 1
"""The largest sequence number (UInt64.max): nothing can follow it on a stream."""


class _Pending(TypedDict):
    """A request under way."""

    request_id: int
    request: dict[str, Any]
    sent_at: float


class _Stream(TypedDict):
    """What ExactlyOnce knows of one stream (the Swift machine's StreamState)."""

    next: int
    exhausted: bool
    buffer: dict[int, Any]
    endpoint: Optional[str]
    last: Optional[int]
    suspect: Optional[int]
    pending: list[_Pending]
    requested_end: Optional[int]
    server_last: Optional[int]
    unanswered: int
    hole_since: Optional[float]
    moving_since: Optional[float]
    gone_since: Optional[float]
    unknown: bool
    deferred_while_asking: bool


class ExactlyOnce:
    """The exactly-once decisions of the Swift ExactlyOnceStateMachine, with no I/O.

    Feed it live messages (`received(..., live=True)`), replayed ones (`live=False`), replay
    ends and errors, heartbeats (`announced`) and the time (`tick`); each call returns actions:
    ("deliver", key, sequence, message), ("request", endpoint, request dict) to send with
    encode_replay_request, ("lost", key, start, end) for sequences [start, end) that cannot be
    had. A key is (topic, stream id as 16 hex digits). `start` is "beginning", "now" or an int.
    `cursor` maps keys to the last sequence delivered (store it; give it back to resume).

    Time is any number that grows (seconds of time.monotonic(), or milliseconds), in the unit
    of `request_timeout` and `announcement_timeout`. Up to `max_in_flight` requests are under
    way per stream (the client's credit); `max_retries` requests in a row without an answer
    give the server up (counted in `serverGone`), and the hole waits for another announcement of
    the stream (a pool worker's taker) up to `takeover_timeout` from the first silence before it
    is reported lost. The committed traces of
    Tests/KinesiaClientTests/Fixtures/exactly-once-traces.json are replayed by
    tests/test_exactly_once_traces.py: every action equals the Swift machine's."""

    def __init__(self, start: str | int = "now", cursor: Mapping[Key, int] | None = None,
                 accepts: Iterable[str] = ("",), max_buffered: int = 4096,
                 request_timeout: float = 3.0, announcement_timeout: float = 5.0,
                 max_retries: int = 3, max_in_flight: int = 3,
                 takeover_timeout: float = 30.0) -> None:
        self.start, self.accepts = start, tuple(accepts)
        self.cursor = dict(cursor or {})
        self.max_buffered = max(1, max_buffered)
        self.request_timeout, self.announcement_timeout = request_timeout, announcement_timeout
        self.takeover_timeout = takeover_timeout
        self.max_retries = max(1, max_retries)
        self.max_in_flight = max(1, max_in_flight)
        self.streams: dict[Key, _Stream] = {}
        self.requests: dict[int, Key] = {}
        self.next_id = 1
        self.counters: dict[str, int] = {}

    @property
    def positions(self) -> dict[Key, int]:
        """The streams followed, with the next sequence number each expects."""
        return {key: state["next"] for key, state in self.streams.items()}

    def _count(self, name: str, by: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + by

    def _first(self, key: Key, live: int | None = None, announced_last: int | None = None) -> int:
        if key in self.cursor:
            delivered = self.cursor[key]
            return MAX_SEQUENCE if delivered == MAX_SEQUENCE else delivered + 1
        if self.start == "beginning":
            return 0
        if self.start == "now":
            if live is not None:
                return live
            assert announced_last is not None  # every caller gives one of the two
            return MAX_SEQUENCE if announced_last == MAX_SEQUENCE else announced_last + 1
        return int(self.start)

    def _new(self, key: Key, next_: int) -> _Stream:
        return {"next": next_, "exhausted": self.cursor.get(key) == MAX_SEQUENCE, "buffer": {},
                "endpoint": None, "last": None, "suspect": None, "pending": [],
                "requested_end": None, "server_last": None, "unanswered": 0,
                "hole_since": None, "moving_since": None, "gone_since": None, "unknown": False,
                "deferred_while_asking": False}

    def _deliver(self, key: Key, state: _Stream, sequence: int, message: Any,
                 out: list[Action]) -> None:
        out.append(("deliver", key, sequence, message))
        state["next"] = MAX_SEQUENCE if sequence == MAX_SEQUENCE else sequence + 1
        state["exhausted"] = sequence == MAX_SEQUENCE
        self.cursor[key] = sequence

    def _drain(self, key: Key, state: _Stream, out: list[Action]) -> None:
        while not state["exhausted"] and state["next"] in state["buffer"]:
            self._deliver(key, state, state["next"], state["buffer"].pop(state["next"]), out)
        if not state["buffer"] or min(state["buffer"]) == state["next"]:
            state["hole_since"] = None

    def _lose(self, key: Key, start: int, end: int, out: list[Action]) -> None:
        if end > start:
            self._count("lost", end - start)
            out.append(("lost", key, start, end))

    def _skip(self, key: Key, state: _Stream, target: int, out: list[Action]) -> None:
        """Gives up on everything before `target` that is not buffered: delivers the buffered
        messages below it in order, reports the holes between them lost."""
        for sequence in sorted(s for s in state["buffer"] if s < target):
            if sequence > state["next"]:
                self._lose(key, state["next"], sequence, out)
            message = state["buffer"].pop(sequence)
            if sequence >= state["next"]:
                self._deliver(key, state, sequence, message, out)
        if state["next"] < target:
            self._lose(key, state["next"], target, out)
            state["next"] = target
        self._drain(key, state, out)

    def _skip_hole(self, key: Key, state: _Stream, now: float, out: list[Action]) -> None:
        """Gives up on the hole before the first buffered message (or up to the announced last).
        A hole after the messages it delivers is waited for from `now`."""
        if state["buffer"]:
            self._skip(key, state, min(state["buffer"]), out)
        elif state["last"] is not None and state["last"] >= state["next"]:
            last = state["last"]
            self._skip(key, state, MAX_SEQUENCE if last == MAX_SEQUENCE else last + 1, out)
        state["hole_since"] = now if state["buffer"] and state["next"] < min(state["buffer"]) else None

    def _request_if_behind(self, key: Key, state: _Stream, now: float, out: list[Action]) -> None:
        while len(state["pending"]) < self.max_in_flight and not state["exhausted"]:
            lowest = min(state["buffer"]) if state["buffer"] else None
            behind_live = lowest is not None and state["next"] < lowest
            behind_announced = state["last"] is not None and state["next"] <= state["last"]
            if not (behind_live or behind_announced):
                return
            endpoint = state["endpoint"]
            if endpoint is None:
                return  # wait for the announcement
            if state["unknown"]:
                self._skip_hole(key, state, now, out)
                return
            # The next batch starts where the ones under way end; a hole is asked up to the
            # first message held after it, a quiet stream's tail one batch at a time.
            requested_end = state["requested_end"]
            start = max(state["next"], requested_end if requested_end is not None else state["next"])
            limit = REPLAY_MAX_BATCH
            if lowest is not None and behind_live:
                if start >= lowest:
                    return
                limit = min(limit, lowest - start)
            elif state["pending"]:
                # More batches at once only up to what the server itself said it holds.
                last = state["server_last"]
                if last is None or start > last:
                    return
                limit = min(limit, last - start + 1)
            request_id = self.next_id
            self.next_id = 1 if self.next_id == 0xFFFFFFFF else self.next_id + 1
            request = {"request_id": request_id, "topic": key[0], "stream_id": key[1],
                       "from": start, "limit": limit}
            if not state["pending"]:
                state["deferred_while_asking"] = False
            state["pending"].append({"request_id": request_id, "request": request, "sent_at": now})
            state["requested_end"] = min(MAX_SEQUENCE, start + limit)
            self.requests[request_id] = key
            self._count("requests")
            out.append(("request", endpoint, request))

    def _answered(self, state: _Stream, request_id: int) -> None:
        state["pending"] = [p for p in state["pending"] if p["request_id"] != request_id]
        if not state["pending"]:
            state["requested_end"] = None
        state["unanswered"] = 0
        state["gone_since"] = None

    def received(self, key: Key, sequence: int, message: Any, live: bool,
                 now: float) -> list[Action]:
        """A message of `key` numbered `sequence`: received `live` from the bus, or from a replay."""
        out: list[Action] = []
        if key not in self.streams:
            if not live:
                return out  # a reply for a stream no longer followed
            self.streams[key] = self._new(key, self._first(key, live=sequence))
        state = self.streams[key]
        if not live:
            self._count("replayed")
        if sequence < state["next"] or state["exhausted"]:
            self._count("duplicates")
            return out
        if sequence == state["next"]:
            self._deliver(key, state, sequence, message, out)
            self._drain(key, state, out)
        elif sequence in state["buffer"]:
            self._count("duplicates")
        elif len(state["buffer"]) < self.max_buffered:
            state["buffer"][sequence] = message
        else:
            self._count("deferred")
            if state["pending"]:
                state["deferred_while_asking"] = True
        lowest = min(state["buffer"]) if state["buffer"] else 0
        if state["next"] < lowest and state["hole_since"] is None:
            state["hole_since"] = now
        self._request_if_behind(key, state, now, out)
        return out

    def replay_ended(self, end: Mapping[str, Any], now: float) -> list[Action]:
        """A replay batch ended (a decoded batchEnd or streamEnd): asks for the next one when
        the stream is still behind."""
        out: list[Action] = []
        key = self.requests.pop(end["request_id"], None)
        if key is None or key not in self.streams:
            return out
        state = self.streams[key]
        index = next((i for i, p in enumerate(state["pending"])
                      if p["request_id"] == end["request_id"]), None)
        if index is None:
            return out
        start = state["pending"][index]["request"]["from"]
        # The server answers one connection's requests in order and cuts a batch short (end
        # included) when the client's queue is full: the end of a later batch while an earlier
        # one is under way means that one was cut. Nothing is lost: every request under way is
        # dropped and the hole asked for again.
        cut = index > 0
        if cut:
            self._count("cutBatches", index)
            for pending in state["pending"]:
                self.requests.pop(pending["request_id"], None)
            state["pending"] = []
            state["requested_end"] = None
            state["unanswered"] = 0
            state["gone_since"] = None
        else:
            self._answered(state, end["request_id"])
        # The server's word on what it holds wins over any announcement.
        state["last"] = end["last"]
        state["server_last"] = end["last"]
        # A batch never goes past what the server holds. What it says of its own range only
        # (delivery stands in it: no earlier batch left a hole before it).
        end_next = min(end["next"], MAX_SEQUENCE if end["last"] == MAX_SEQUENCE else end["last"] + 1)
        if start <= state["next"] < end["first"] <= end_next:
            self._skip(key, state, end["first"], out)
        if start <= state["next"] < end_next and not state["deferred_while_asking"]:
            # The server went past these without sending them (a damaged journal record):
            # asking again would get the same answer for ever. They are lost.
            self._skip(key, state, end_next, out)
        stream_end = end["next"] > end["last"]
        if stream_end and state["buffer"]:
            lowest = min(state["buffer"])
            if state["next"] < lowest and state["next"] > end["last"]:
                # The server has nothing more, yet there is a hole before what was received
                # live: those messages are not to be had.
                self._skip(key, state, lowest, out)
        if end["count"] > 0 or stream_end or cut:
            self._request_if_behind(key, state, now, out)
        return out

    def replay_failed(self, failure: Mapping[str, Any], now: float) -> list[Action]:
        """A replay request was refused: what it asked for that cannot be had is reported lost."""
        out: list[Action] = []
        key = self.requests.pop(failure["request_id"], None)
        if key is None or key not in self.streams:
            return out
        state = self.streams[key]
        self._answered(state, failure["request_id"])
        if failure["code"] == "notRetained":
            self._skip(key, state, failure["first"], out)
            self._request_if_behind(key, state, now, out)
        elif failure["code"] == "unknownStream" and state["moving_since"] is not None:
            # Not served while it moves: the taker's announcement is waited for.
            state["endpoint"] = None
        else:
            state["unknown"] = True
            self._skip_hole(key, state, now, out)
        return out

    def announced(self, announcement: Mapping[str, Any], now: float) -> list[Action]:
        """A publisher's heartbeat: its replay endpoint and where each of its streams stands."""
        out: list[Action] = []
        for info in announcement["streams"]:
            if not any(info["topic"].startswith(prefix) for prefix in self.accepts):
                continue
            key = (info["topic"], info["stream"])
            is_new = key not in self.streams
            if is_new:
                self.streams[key] = self._new(key, self._first(key, announced_last=info["last"]))
            state = self.streams[key]
            ask_again = False
            if state["endpoint"] is not None and state["endpoint"] != announcement["endpoint"]:
                # Another server serves the stream now (a taker, a worker restarted elsewhere):
                # what was asked of the old one is asked of the new one at once, with retries
                # of its own.
                ask_again = bool(state["pending"])
                if ask_again:
                    self._count("retries")
                for pending in state["pending"]:
                    self.requests.pop(pending["request_id"], None)
                state["pending"] = []
                state["requested_end"] = None
                state["unanswered"] = 0
            state["endpoint"] = announcement["endpoint"]
            state["moving_since"] = None
            state["unknown"] = False  # announced as served: asked again at the next hole
            state["last"] = (info["last"] if state["last"] is None
                             else max(state["last"], info["last"]))
            if is_new or state["buffer"] or ask_again:
                self._request_if_behind(key, state, now, out)
            elif info["last"] >= state["next"]:
                # Behind an idle stream: ask when the next heartbeat still says so.
                if state["suspect"] is not None and state["suspect"] >= state["next"]:
                    state["suspect"] = None
                    self._request_if_behind(key, state, now, out)
                else:
                    state["suspect"] = info["last"]
            else:
                state["suspect"] = None
        return out

    def moving(self, streams: Iterable[Mapping[str, Any]], now: float) -> None:
        """A publisher's heartbeat said these streams (its "moving" field) go on in another
        process: a pool session moved, or fenced at its worker's lease lapse. A hole in one of
        them with no replay endpoint known waits for the taker's announcement up to
        `takeover_timeout` from the first such word, instead of `announcement_timeout`; one with
        a known endpoint asks it on, and waits the same way if its server stops answering or
        says it does not know the stream. Streams not followed are not changed."""
        for info in streams:
            state = self.streams.get((info["topic"], info["stream"]))
            if state is not None and state["moving_since"] is None:
                state["moving_since"] = now
                state["unknown"] = False

    def _announcement_deadline(self, state: _Stream) -> float:
        assert state["hole_since"] is not None
        unannounced = state["hole_since"] + self.announcement_timeout
        if state["moving_since"] is None:
            return unannounced
        return max(unannounced, state["moving_since"] + self.takeover_timeout)

    def tick(self, now: float) -> list[Action]:
        """The passing of time: requests without an answer are sent again (the server is given
        up after `max_retries`); holes in streams whose publisher never announced a replay
        endpoint are reported lost after `announcement_timeout`."""
        out: list[Action] = []
        for key in sorted(self.streams):
            state = self.streams[key]
            pending = state["pending"]
            if pending and now - pending[0]["sent_at"] >= self.request_timeout:
                # The requests after it are behind it on the same connection: all again.
                for request in pending:
                    self.requests.pop(request["request_id"], None)
                state["pending"] = []
                state["requested_end"] = None
                state["unanswered"] += 1
                if state["unanswered"] >= self.max_retries:
                    # The server has gone: what it was to send cannot be had.
                    self._count("serverGone")
                    state["unanswered"] = 0
                    state["endpoint"] = None
                    # A moving stream waits for its taker; so does any stream for a takeover's
                    # time from the first silence (a pool worker paused or killed says
                    # nothing; its taker announces the stream from another endpoint).
                    if state["moving_since"] is None:
                        gone_since = state["gone_since"] if state["gone_since"] is not None else now
                        if now - gone_since < self.takeover_timeout:
                            state["gone_since"] = gone_since
                            state["moving_since"] = now
                        else:
                            state["gone_since"] = None
                            self._skip_hole(key, state, now, out)
                else:
                    self._count("retries")
                    self._request_if_behind(key, state, now, out)
            if (state["endpoint"] is None and state["hole_since"] is not None
                    and now >= self._announcement_deadline(state)):
                state["moving_since"] = None
                state["gone_since"] = None
                self._skip_hole(key, state, now, out)
        return out
