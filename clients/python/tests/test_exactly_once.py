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


def announcement(last: int, first: int = 0, endpoint: str = ENDPOINT) -> dict[str, Any]:
    return {"endpoint": endpoint,
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

    def test_an_unknown_stream_while_it_moves_waits_for_the_taker(self) -> None:
        def held(said: bool) -> tuple[ExactlyOnce, list[Action]]:
            machine = ExactlyOnce(start="beginning", takeover_timeout=30.0)
            (first,) = machine.announced(announcement(3), 0.0)
            for s in range(4):
                machine.received(KEY, s, b"m", False, 0.0)
            machine.replay_ended({"request_id": first[2]["request_id"], "first": 0, "last": 3,
                                  "next": 4, "count": 4}, 0.0)
            (request,) = machine.received(KEY, 8, b"m8", True, 1.0)
            if said:
                machine.moving([{"topic": TOPIC, "stream": STREAM}], 1.0)
            failure = {"request_id": request[2]["request_id"], "code": "unknownStream",
                       "first": 0, "last": 0}
            return machine, machine.replay_failed(failure, 3.0)
        self.assertEqual(held(False)[1][0], ("lost", KEY, 4, 8))
        machine, actions = held(True)
        self.assertEqual(actions, [])
        self.assertEqual(machine.tick(20.0), [])
        (again,) = machine.announced(announcement(8), 21.0)
        self.assertEqual(again[2]["from"], 4)
        replayed = [a for s in range(4, 8) for a in machine.received(KEY, s, b"m", False, 21.1)]
        self.assertEqual(delivered(replayed), [4, 5, 6, 7, 8])

    def test_a_silent_server_of_a_moving_stream_waits_for_the_taker_then_gives_up(self) -> None:
        machine = ExactlyOnce(start="beginning", takeover_timeout=30.0)
        machine.received(KEY, 4, b"m4", True, 0.0)
        machine.announced(announcement(4), 0.0)
        machine.moving([{"topic": TOPIC, "stream": STREAM}], 1.0)
        lost = [a for t in range(3, 31, 3) for a in machine.tick(float(t)) if a[0] == "lost"]
        self.assertEqual(machine.counters.get("serverGone"), 1)
        self.assertEqual(lost, [])
        self.assertEqual(machine.tick(31.0)[0], ("lost", KEY, 0, 4))

    def test_a_stream_unknown_to_its_server_is_asked_again_once_announced_again(self) -> None:
        machine = ExactlyOnce(start="now")
        machine.received(KEY, 0, b"m0", True, 0.0)
        machine.announced(announcement(0), 0.0)
        (request,) = machine.received(KEY, 5, b"m5", True, 0.0)
        failure = {"request_id": request[2]["request_id"], "code": "unknownStream", "first": 0,
                   "last": 0}
        self.assertEqual(machine.replay_failed(failure, 0.0)[0], ("lost", KEY, 1, 5))
        self.assertEqual(machine.received(KEY, 7, b"m7", True, 1.0)[0], ("lost", KEY, 6, 7))
        machine.announced(announcement(7), 2.0)
        (asked,) = machine.received(KEY, 9, b"m9", True, 3.0)
        self.assertEqual(asked[2]["from"], 8)

    def test_a_hole_asked_of_a_silent_server_is_asked_of_the_new_one_with_its_own_retries(
            self) -> None:
        taker = "ipc:///tmp/bus/replay/pool2-cam0.left.sock"
        machine = ExactlyOnce(start="beginning", request_timeout=3.0, max_retries=3)
        machine.announced(announcement(0), 0.0)
        machine.received(KEY, 0, b"m0", True, 0.0)
        machine.received(KEY, 3, b"m3", True, 1.0)
        self.assertEqual([a[0] for t in (4.0, 7.0) for a in machine.tick(t)], ["request", "request"])
        (asked,) = machine.announced(announcement(3, endpoint=taker), 8.0)
        self.assertEqual((asked[1], asked[2]["from"], asked[2]["limit"]), (taker, 1, 2))
        self.assertEqual(machine.tick(10.0), [], "the old server's silence is not the new one's")
        machine.received(KEY, 1, b"m1", False, 10.0)
        self.assertEqual(delivered(machine.received(KEY, 2, b"m2", False, 10.0)), [2, 3])
        self.assertNotIn("lost", machine.counters)
        self.assertEqual(machine.announced(announcement(3, endpoint=taker), 11.0), [])

    def test_a_cursor_resumes_after_the_last_delivered(self) -> None:
        machine = ExactlyOnce(start="beginning", cursor={KEY: 41}, accepts=("event/",))
        (request,) = machine.announced(announcement(50), 0.0)
        self.assertEqual(request[2]["from"], 42)
        other = {"endpoint": ENDPOINT,
                 "streams": [{"topic": "pose/cam0/", "stream": STREAM, "first": 0, "last": 5}]}
        self.assertEqual(machine.announced(other, 0.0), [])


if __name__ == "__main__":
    unittest.main()
