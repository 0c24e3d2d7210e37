"""kinesia.exactly_once against the Swift ExactlyOnceStateMachine: every committed trace
(Tests/KinesiaClientTests/Fixtures/exactly-once-traces.json, made by the Swift machine from a
simulated lossy bus and replay server) is replayed input by input, and each input must give
exactly the actions the Swift machine gave, with the same counters at the end."""

from __future__ import annotations

import json
import os
import unittest
from typing import Any

from kinesia.exactly_once import Action, ExactlyOnce

TRACES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Tests",
                      "KinesiaClientTests", "Fixtures", "exactly-once-traces.json")


def action_json(action: Action) -> list[Any]:
    """An action in the trace's shape."""
    if action[0] == "deliver":
        _, (topic, stream), sequence, message = action
        return ["deliver", topic, stream, sequence, message]
    if action[0] == "request":
        _, endpoint, request = action
        return ["request", endpoint, request["request_id"], request["topic"], request["stream_id"],
                request["from"], request["limit"]]
    _, (topic, stream), start, end = action
    return ["lost", topic, stream, start, end]


def replay(machine: ExactlyOnce, now: int, step: list[Any]) -> list[Action]:
    """Feeds one recorded input to the machine."""
    kind = step[0]
    if kind == "received":
        _, topic, stream, sequence, message, live = step
        return machine.received((topic, stream), sequence, message, live, now)
    if kind == "ended":
        _, request_id, first, last, next_, count = step
        return machine.replay_ended({"request_id": request_id, "first": first, "last": last,
                                     "next": next_, "count": count}, now)
    if kind == "failed":
        _, request_id, code, first, last = step
        return machine.replay_failed({"request_id": request_id, "code": code, "first": first,
                                      "last": last}, now)
    if kind == "announced":
        _, endpoint, streams = step
        return machine.announced({"endpoint": endpoint, "streams": [
            {"topic": topic, "stream": stream, "first": first, "last": last}
            for topic, stream, first, last in streams]}, now)
    if kind == "moving":
        _, streams = step
        machine.moving([{"topic": topic, "stream": stream} for topic, stream in streams], now)
        return []
    assert kind == "tick", kind
    return machine.tick(now)


class ExactlyOnceTraceTests(unittest.TestCase):
    def test_every_committed_trace_gives_the_swift_machines_actions(self) -> None:
        with open(TRACES, encoding="utf-8") as file:
            traces = json.load(file)["traces"]
        self.assertGreaterEqual(len(traces), 10)
        for trace in traces:
            start = trace["start"]
            machine = ExactlyOnce(
                start=start, cursor={(topic, stream): sequence
                                     for topic, stream, sequence in trace["cursor"]},
                accepts=tuple(trace["accepts"]), max_buffered=trace["maximumBuffered"],
                request_timeout=trace["requestTimeout"],
                announcement_timeout=trace["announcementTimeout"],
                takeover_timeout=trace["takeoverTimeout"],
                max_retries=trace["maximumRetries"], max_in_flight=trace["maximumInFlight"])
            for index, (now, step, expected) in enumerate(trace["steps"]):
                actions = [action_json(action) for action in replay(machine, now, step)]
                self.assertEqual(actions, expected,
                                 f"{trace['name']}: step {index} at {now} ms, {step}")
            self.assertEqual(machine.counters, trace["counters"], trace["name"])


if __name__ == "__main__":
    unittest.main()
