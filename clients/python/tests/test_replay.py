"""kinesia.replay: the replay frames, against the committed vectors
(Tests/KinesiaWireTests/Fixtures/replay.json, which the Swift tests check too) and by hand."""

from __future__ import annotations

import contextlib
import io
import os
import unittest

from kinesia import fixtures
from kinesia.replay import (REPLAY_MAX_BATCH, ReplayError, decode_replay_reply,
                            decode_replay_request, encode_replay_reply, encode_replay_request,
                            moving_streams, replay_announcement)

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Tests",
                       "KinesiaWireTests", "Fixtures", "replay.json")
STREAM = "0123456789abcdef"


class ReplayFrameTests(unittest.TestCase):
    def test_every_committed_vector_reads_and_writes_both_ways(self) -> None:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = fixtures.main(["check-replay", VECTORS])
        self.assertEqual(status, 0, err.getvalue())
        self.assertRegex(out.getvalue(), r"^\d+ replay vectors ok\n$")

    def test_a_request_round_trips_and_its_stream_may_be_the_current_one(self) -> None:
        frame = encode_replay_request(7, "event/cam0/left/", STREAM, 10, REPLAY_MAX_BATCH)
        self.assertEqual(decode_replay_request(frame),
                         {"request_id": 7, "topic": "event/cam0/left/", "stream_id": STREAM,
                          "from": 10, "limit": REPLAY_MAX_BATCH})
        self.assertIsNone(decode_replay_request(
            encode_replay_request(7, "pose/cam0/", None, 0, 1))["stream_id"])
        with self.assertRaises(ReplayError) as raised:
            decode_replay_request(encode_replay_request(7, "pose/cam0/", None, 0, 0))
        self.assertEqual(raised.exception.code, "invalidLimit")

    def test_replies_round_trip_and_an_end_past_the_last_is_a_stream_end(self) -> None:
        entry = {"type": "entry", "request_id": 1, "stream_id": STREAM, "sequence": 3,
                 "frames": [b"pose/cam0/", b"payload"]}
        self.assertEqual(decode_replay_reply(encode_replay_reply(entry)), entry)
        end = {"type": "batchEnd", "request_id": 1, "stream_id": STREAM, "first": 0, "last": 9,
               "next": 10, "count": 10}
        self.assertEqual(decode_replay_reply(encode_replay_reply(end))["type"], "streamEnd")
        error = {"type": "error", "request_id": 1, "code": "notRetained", "stream_id": STREAM,
                 "first": 5, "last": 9, "message": "gone"}
        self.assertEqual(decode_replay_reply(encode_replay_reply(error)), error)
        with self.assertRaises(ReplayError) as raised:
            decode_replay_reply([])
        self.assertEqual(raised.exception.code, "frameCount")

    def test_the_announcement_is_the_replay_field_of_a_health_report(self) -> None:
        replay = {"endpoint": "ipc:///tmp/r.sock",
                  "streams": [{"topic": "pose/cam0/", "stream": STREAM, "first": 0, "last": 4}]}
        self.assertEqual(replay_announcement('{"process":"w","replay":' +
                                             str(replay).replace("'", '"') + "}"), replay)
        self.assertIsNone(replay_announcement('{"process":"w"}'))

    def test_the_moving_streams_are_the_moving_field_of_a_health_report(self) -> None:
        moving = [{"stream": STREAM, "topic": "event/cam7/left/"}]
        self.assertEqual(moving_streams('{"process":"w","moving":' + str(moving).replace("'", '"') + "}"),
                         moving)
        self.assertEqual(moving_streams('{"process":"w"}'), [])
        self.assertEqual(moving_streams('{"process":"w","moving":{"a":1}}'), [])


if __name__ == "__main__":
    unittest.main()
