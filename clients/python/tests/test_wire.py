"""kinesia.wire: topics, header, poses, JSON payloads, analytics records and the committed test
vectors (Tests/KinesiaWireTests/Fixtures, which the Swift tests check too).

    .venv/bin/python -m unittest discover -s clients/python/tests   # the clone's (scripts/setup)
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import unittest

from kinesia import fixtures
from kinesia.wire import (HEADER_SIZE, MAX_JSON_PAYLOAD, WireError, decode_analytics,
                          decode_header, decode_message, decode_payload, encode_header,
                          encode_json_payload, encode_message, encode_pose, health_json,
                          make_topic, parse_topic)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Tests",
                        "KinesiaWireTests", "Fixtures")
STREAM = "0123456789abcdef"
POSE = {"t": 1.5, "w": 640.0, "h": 480.0,
        "points": {"rightKnee": [0.25, 0.5], "nose": [1.0, 2.0]}, "confidence": {"nose": 0.75}}


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = fixtures.main(argv)
    return status, out.getvalue(), err.getvalue()


class FixtureTests(unittest.TestCase):
    def test_every_committed_vector_decodes_and_encodes_to_the_same_bytes(self) -> None:
        status, out, err = run(["check", FIXTURES])
        self.assertEqual(status, 0, err)
        self.assertRegex(out, r"^\d+ fixtures ok\n$")

    def test_the_encoded_fixtures_are_the_committed_ones(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            status, _, err = run(["encode-fixtures", os.path.join(FIXTURES, "expected.json"),
                                  directory])
            self.assertEqual(status, 0, err)
            for name in os.listdir(directory):
                with open(os.path.join(directory, name), "rb") as ours, \
                        open(os.path.join(FIXTURES, name), "rb") as committed:
                    self.assertEqual(ours.read(), committed.read(), name)

    def test_a_bad_command_line_prints_the_usage_and_exits_64(self) -> None:
        status, _, err = run(["decode"])
        self.assertEqual(status, 64)
        self.assertTrue(err.startswith("usage: python -m kinesia.fixtures decode FILE"))


class TopicTests(unittest.TestCase):
    def test_topics_parse_into_their_names(self) -> None:
        self.assertEqual(parse_topic(b"event/cam0/left/"),
                         {"kind": "event", "topic": "event/cam0/left/", "camera": "cam0",
                          "session": "left"})
        self.assertEqual(make_topic("health", "worker-1"), "health/worker-1/")

    def test_malformed_topics_are_refused(self) -> None:
        for topic in [b"", b"pose/cam0", b"pose/", b"pose/a/b/", b"nope/a/", b"pose/../",
                      b"pose/caf\xc3\xa9/", b"pose/" + b"a" * 65 + b"/"]:
            with self.assertRaises(WireError) as raised:
                parse_topic(topic)
            self.assertEqual(raised.exception.code, "invalidTopic", topic)


class PayloadTests(unittest.TestCase):
    def test_a_pose_round_trips_with_its_joints_in_index_order(self) -> None:
        payload = encode_pose(POSE, STREAM, 7, 123)
        message = decode_message("pose/cam0/", payload)
        self.assertEqual(message["header"], {"kind": "pose", "stream_id": STREAM, "sequence": 7,
                                             "sent_at_ns": 123})
        self.assertEqual(message["pose"], POSE)
        self.assertEqual(list(message["pose"]["points"]), ["nose", "rightKnee"])
        self.assertEqual(encode_message("pose/cam0/", message["header"], pose=POSE)[1], payload)

    def test_every_cut_of_a_pose_is_truncated_and_a_longer_one_has_trailing_bytes(self) -> None:
        payload = encode_pose(POSE, STREAM, 7, 123)
        for cut in range(len(payload)):
            with self.assertRaises(WireError) as raised:
                decode_payload(payload[:cut])
            self.assertEqual(raised.exception.code, "truncated", cut)
        with self.assertRaises(WireError) as raised:
            decode_payload(payload + b"\0")
        self.assertEqual(raised.exception.code, "trailingBytes")

    def test_header_errors_have_the_swift_codes(self) -> None:
        header = encode_header("event", STREAM, 1, 2)
        cases = {b"XW" + header[2:]: "badMagic", header[:2] + b"\x02" + header[3:]:
                 "unsupportedVersion", header[:3] + b"\x09" + header[4:]: "unknownKind",
                 header + b"x" * MAX_JSON_PAYLOAD: "oversized"}
        for payload, code in cases.items():
            with self.assertRaises(WireError) as raised:
                decode_header(payload)
            self.assertEqual(raised.exception.code, code)
        with self.assertRaises(WireError) as raised:
            decode_message("pose/cam0/", encode_json_payload("event", "{}", STREAM, 1, 2))
        self.assertEqual(raised.exception.code, "topicMismatch")
        self.assertIn("an event payload on a pose topic", str(raised.exception))

    def test_json_payloads_and_health_reports(self) -> None:
        text = health_json("worker-1", "worker", 42, 1.5, {"poses": 3})
        self.assertEqual(text, '{"counters":{"poses":3},"pid":42,"process":"worker-1",'
                               '"role":"worker","uptime":1.5}')
        payload = encode_json_payload("health", text, STREAM, 1, 2)
        self.assertEqual(payload[HEADER_SIZE:], text.encode())
        self.assertEqual(decode_message("health/worker-1/", payload)["json"], text)
        with self.assertRaises(WireError) as raised:
            decode_payload(encode_json_payload("health", '{"process":"w"}', STREAM, 1, 2))
        self.assertEqual(raised.exception.code, "invalidJSON")
        with self.assertRaises(WireError) as raised:
            decode_payload(encode_header("event", STREAM, 1, 2) + b"\xff")
        self.assertEqual(raised.exception.code, "invalidUTF8")

    def test_analytics_records_are_told_from_motion_events(self) -> None:
        self.assertIsNone(decode_analytics('{"type":"holdStarted","t":1}'))
        record = {"type": "repSymmetry", "t": 1, "set": 1, "pair": 1, "left": {}, "right": {},
                  "peakDifference": 0, "rangeRatio": 1, "tempoRatio": 1}
        self.assertEqual(decode_analytics(json.dumps(record)), record)
        for text in ['{"type":"repTempo","t":1}', "{", '{"type":"setSummary","side":"up"}']:
            with self.assertRaises(WireError) as raised:
                decode_analytics(text)
            self.assertEqual(raised.exception.code, "invalidJSON")


if __name__ == "__main__":
    unittest.main()
