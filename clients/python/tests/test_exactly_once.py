"""kinesia.exactly_once: ExactlyOnce's decisions, with no I/O (the Swift tests drive it through
the simulated publisher of Tests/KinesiaWireTests/Python/replay_driver.py too)."""

from __future__ import annotations

import unittest
from typing import Any

from kinesia.exactly_once import Action, ExactlyOnce

TOPIC = "event/cam0/left/"
STREAM = "0123456789abcdef"
KEY = (TOPIC, STREAM)
ENDPOINT = "ipc:///tmp/bus/replay/worker.sock"


def announcement(last: int, first: int = 0) -> dict[str, Any]:
    return {"endpoint": ENDPOINT,
            "streams": [{"topic": TOPIC, "stream": STREAM, "first": first, "last": last}]}


def delivered(actions: list[Action]) -> list[int]:
    return [action[2] for action in actions if action[0] == "deliver"]


class ExactlyOnceTests(unittest.TestCase):
    def test_live_messages_in_order_are_delivered_once(self) -> None:
        machine = ExactlyOnce(start="now")
        actions = [a for s in (5, 6, 6, 7) for a in machine.received(KEY, s, b"m", True, 0.0)]
        self.assertEqual(delivered(actions), [5, 6, 7])
        self.assertEqual(machine.cursor, {KEY: 7})
        self.assertEqual(machine.counters, {"duplicates": 1})

    def test_a_hole_is_asked_for_and_filled_from_replay_in_order(self) -> None:
        machine = ExactlyOnce(start="now")
        machine.received(KEY, 0, b"m0", True, 0.0)
        self.assertEqual(machine.received(KEY, 3, b"m3", True, 0.0), [])
        actions = machine.announced(announcement(3), 0.5)
        self.assertEqual(actions, [("request", ENDPOINT, {"request_id": 1, "topic": TOPIC,
                                                          "stream_id": STREAM, "from": 1,
                                                          "limit": 2})])
        self.assertEqual(delivered(machine.received(KEY, 1, b"m1", False, 0.6)), [1])
        self.assertEqual(delivered(machine.received(KEY, 2, b"m2", False, 0.6)), [2, 3])
        end = {"request_id": 1, "first": 0, "last": 3, "next": 3, "count": 2}
        self.assertEqual(machine.replay_ended(end, 0.7), [])
        self.assertEqual(machine.counters, {"requests": 1, "replayed": 2})

    def test_what_is_no_longer_retained_is_lost_and_a_lost_request_is_asked_again(self) -> None:
        machine = ExactlyOnce(start="beginning", request_timeout=3.0)
        (request,) = machine.announced(announcement(9), 0.0)
        self.assertEqual(request[2]["from"], 0)
        self.assertEqual(machine.tick(2.9), [])
        (retry,) = machine.tick(3.0)
        self.assertEqual((retry[0], retry[2]["request_id"], retry[2]["from"]), ("request", 2, 0))
        failure = {"request_id": 2, "code": "notRetained", "first": 5, "last": 9}
        actions = machine.replay_failed(failure, 3.1)
        self.assertEqual(actions[0], ("lost", KEY, 0, 5))
        self.assertEqual(actions[1][0], "request")
        self.assertEqual(actions[1][2]["from"], 5)
        self.assertEqual(machine.counters, {"requests": 3, "retries": 1, "lost": 5})

    def test_without_an_endpoint_a_hole_is_given_up_after_the_announcement_timeout(self) -> None:
        machine = ExactlyOnce(start="now", announcement_timeout=5.0)
        machine.received(KEY, 0, b"m0", True, 0.0)
        machine.received(KEY, 2, b"m2", True, 1.0)
        self.assertEqual(machine.tick(5.9), [])
        self.assertEqual(machine.tick(6.0), [("lost", KEY, 1, 2), ("deliver", KEY, 2, b"m2")])

    def test_a_second_hole_held_by_a_stream_gone_quiet_is_given_up_after_its_own_wait(self) -> None:
        machine = ExactlyOnce(start="now", announcement_timeout=3.0)
        machine.received(KEY, 0, b"m0", True, 0.0)
        machine.received(KEY, 2, b"m2", True, 1.0)
        machine.received(KEY, 4, b"m4", True, 1.0)
        self.assertEqual(machine.tick(4.0), [("lost", KEY, 1, 2), ("deliver", KEY, 2, b"m2")])
        self.assertEqual(machine.tick(6.0), [])
        self.assertEqual(machine.tick(7.0), [("lost", KEY, 3, 4), ("deliver", KEY, 4, b"m4")])

    def test_a_hole_in_a_stream_said_to_be_moving_waits_for_the_takers_announcement(self) -> None:
        # As the Swift machine's test of the same name: seen live, never announced, moving.
        machine = ExactlyOnce(start="beginning", announcement_timeout=5.0, takeover_timeout=30.0)
        machine.received(KEY, 4, b"m4", True, 0.0)
        machine.moving([{"topic": TOPIC, "stream": STREAM}], 1.0)
        self.assertEqual(machine.tick(6.0), [])
        self.assertEqual(machine.tick(30.0), [])
        (request,) = machine.announced(announcement(4), 30.0)
        self.assertEqual(request[2]["from"], 0)
        actions = [a for s in range(4) for a in machine.received(KEY, s, b"m", False, 30.1)]
        self.assertEqual(delivered(actions), [0, 1, 2, 3, 4])

    def test_a_stream_said_to_be_moving_that_nobody_takes_over_loses_its_hole(self) -> None:
        machine = ExactlyOnce(start="beginning", announcement_timeout=5.0, takeover_timeout=30.0)
        machine.received(KEY, 4, b"m4", True, 0.0)
        machine.moving([{"topic": TOPIC, "stream": "0000000000000099"}], 1.0)
        machine.moving([{"topic": TOPIC, "stream": STREAM}], 2.0)
        machine.moving([{"topic": TOPIC, "stream": STREAM}], 20.0)
        self.assertEqual(machine.tick(31.0), [])
        self.assertEqual(machine.tick(32.0), [("lost", KEY, 0, 4), ("deliver", KEY, 4, b"m4")])
        fresh = ExactlyOnce(start="beginning")
        fresh.moving([{"topic": TOPIC, "stream": STREAM}], 0.0)
        self.assertEqual(fresh.positions, {})

    def test_a_cursor_resumes_after_the_last_delivered(self) -> None:
        machine = ExactlyOnce(start="beginning", cursor={KEY: 41}, accepts=("event/",))
        (request,) = machine.announced(announcement(50), 0.0)
        self.assertEqual(request[2]["from"], 42)
        other = {"endpoint": ENDPOINT,
                 "streams": [{"topic": "pose/cam0/", "stream": STREAM, "first": 0, "last": 5}]}
        self.assertEqual(machine.announced(other, 0.0), [])


if __name__ == "__main__":
    unittest.main()
