"""The receiver side of the wire format's sequence numbers: which messages of each topic were
delivered, missed or duplicated, and when a sender restarted (a new stream id).

    from kinesia.sequence import SequenceTracker
    tracker = SequenceTracker()
    tracker.record(message["topic"], message["header"])   # "inOrder", "gap:3", ...
"""

from __future__ import annotations

from typing import Any, Mapping


class SequenceTracker:
    """A minimal receiver-side tracker (the Swift SequenceTracker, without its window): per
    topic, counts delivered, missing and duplicated messages and sender restarts."""

    def __init__(self) -> None:
        self.streams: dict[str | bytes, tuple[str, int]] = {}
        self.delivered = self.missing = self.duplicates = self.restarts = 0

    def record(self, topic: str | bytes, header: Mapping[str, Any]) -> str:
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
