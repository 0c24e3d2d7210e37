"""Kinesia's Python client: the bus's wire format and the ways to read it.

- kinesia.wire: topics, the 28-byte header, pose records, JSON payloads (events, snapshots,
  health reports), analytics records, whole messages (docs/wire-format.md).
- kinesia.sequence: SequenceTracker, the receiver side of the sequence numbers.
- kinesia.replay: the replay endpoint's request and reply frames, and the replay announcement
  of the health reports.
- kinesia.exactly_once: ExactlyOnce, the exactly-once delivery decisions, with no I/O.
- kinesia.bus: the bus directory and the rule `kinesia` applies to it.
- kinesia.fixtures: the test-vector tool (`python -m kinesia.fixtures`).

Standard library only: the examples (scripts/examples/) bring the sockets, with pyzmq.
"""

__version__ = "1.0.0"
