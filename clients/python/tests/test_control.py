"""kinesia.control: the requests written byte for byte as the Swift coordinator's committed
vectors (Tests/KinesiaControlTests/Fixtures/control-messages.jsonl), the answers read from them,
and foreign answers refused.

    .venv/bin/python -m unittest discover -s clients/python/tests
"""

from __future__ import annotations

import json
import os
import tempfile
import unittest

from kinesia.control import (ControlAnswer, ControlClient, ControlError, control_endpoint, decode_answer,
                             decode_run_record, encode_request, new_request_id, read_key_file)

RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Tests",
                    "KinesiaControlTests", "Fixtures", "run-records.jsonl")
VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Tests",
                       "KinesiaControlTests", "Fixtures", "control-messages.jsonl")


def vectors() -> list[bytes]:
    with open(VECTORS, "rb") as file:
        return [line.rstrip(b"\n") for line in file if line.strip()]


class ControlVectorTests(unittest.TestCase):
    def test_every_request_is_written_as_the_swift_coordinator_reads_it(self) -> None:
        requests = [line for line in vectors() if json.loads(line)["type"] == "request"]
        self.assertEqual(len(requests), 6)
        self.assertEqual([json.loads(line)["command"] for line in requests][4:], ["baseline", "baseline"])
        for line in requests:
            fields = json.loads(line)
            identifier, command = fields.pop("id"), fields.pop("command")
            fields.pop("type")
            self.assertEqual(encode_request(identifier, command, **fields), line)

    def test_every_answer_reads(self) -> None:
        answers = [decode_answer(line) for line in vectors() if json.loads(line)["type"] == "answer"]
        self.assertEqual([answer.outcome for answer in answers],
                         ["baselineStarted", "started", "listed", "listed"])
        self.assertEqual(answers.pop(0).run, 4)
        self.assertTrue(any(b'"baselineReps":3' in line for line in vectors()))
        self.assertEqual((answers[0].worker, answers[0].run, answers[0].message),
                         ("w1", 3, 'cam0/left "started"'))
        listed = answers[1].sessions
        self.assertEqual([entry["session"] for entry in listed], ["cam0/left", "cam1/both"])
        self.assertEqual(listed[0]["run"], 18446744073709551615)
        self.assertEqual((listed[0]["state"], listed[0]["assignedTo"], listed[0]["patient"]),
                         ("running", "w1", "p-17"))
        self.assertEqual(json.loads(listed[0]["exerciseFile"])["reps"]["minPeak"], 70)
        self.assertEqual((listed[0]["repCount"], listed[0]["rejectedCount"]), (5, 1))
        self.assertNotIn("repCount", listed[1])
        self.assertEqual(answers[2].sessions, [])
        self.assertEqual([answer.exit_code for answer in answers], [0, 0, 0])

    def test_foreign_or_broken_answers_are_refused_saying_what(self) -> None:
        cases = {
            b"not json": "not JSON",
            b'{"type":"request","id":"a","command":"list"}': "not a control answer",
            b'{"type":"answer","id":"a","outcome":"maybe","message":""}': "unknown outcome",
            b'{"type":"answer","id":"a","outcome":"started","message":"","extra":1}': "unknown fields",
            b'{"type":"answer","id":"a","outcome":"started","message":"","run":-1}': "decimal string",
            b'{"type":"answer","id":7,"outcome":"started","message":""}': "must be strings",
        }
        for data, expected in cases.items():
            with self.assertRaises(ControlError) as caught:
                decode_answer(data)
            self.assertIn(expected, str(caught.exception))

    def test_the_run_records_read_as_swift_wrote_them(self) -> None:
        with open(RUNS, encoding="utf-8") as file:
            records = [decode_run_record(line) for line in file if line.strip()]
        self.assertEqual([(r["type"], r["run"]) for r in records],
                         [("runStarted", 3), ("runStarted", 4), ("runEnded", 3), ("runEnded", 4),
                          ("baselineStarted", 5), ("runEnded", 5)])
        self.assertEqual(records[4]["reps"], 3)
        ended = records[5]
        self.assertEqual([rep["peak"] for rep in ended["reps"]], [120.25, 131.5, 125.0])
        self.assertEqual(ended["reps"][1]["faults"], ["keepTrunkUpright"])
        self.assertEqual((ended["faults"], ended["baseline"]), ({"keepTrunkUpright": 2}, 125))
        self.assertNotIn("reps", records[3])
        self.assertEqual((ended["firstPose"], ended["lastPose"]["sequence"]),
                         ({"stream": "0123456789abcdef", "sequence": "0"}, "1457"))
        self.assertEqual(records[0]["thresholds"], {"start": 40, "end": 25, "minPeak": 70})
        self.assertEqual(records[0]["patient"], "p-17")
        self.assertNotIn("patient", records[1])
        self.assertEqual((records[2]["reason"], records[2]["repCount"], records[2]["best"]), ("reset", 5, 101.25))
        for broken in ('{"type":"runPaused","run":"1"}', '{"type":"runEnded","run":"x","camera":"c",'
                       '"session":"s","reason":"stopped","repCount":1,"rejectedCount":0,"best":0}', "[]",
                       '{"type":"baselineStarted","run":"1","camera":"c","session":"s","reps":0}',
                       '{"type":"runEnded","run":"1","camera":"c","session":"s","reason":"reset","repCount":1,'
                       '"rejectedCount":0,"best":0,"faults":{"x":0}}'):
            with self.assertRaises(ControlError):
                decode_run_record(broken)

    def test_the_control_endpoint_and_the_keys_of_a_tcp_bus(self) -> None:
        self.assertEqual(control_endpoint("/run/kinesia"), "ipc:///run/kinesia/control.sock")
        self.assertEqual(control_endpoint("tcp://10.0.0.5:5555"), "tcp://10.0.0.5:5557")
        self.assertEqual(control_endpoint("tcp://[::1]:5555"), "tcp://[::1]:5557")
        for bad in ("tcp://host", "tcp://:5555", "tcp://h:65534"):
            with self.assertRaises(ControlError):
                control_endpoint(bad)
        with self.assertRaises(ControlError) as caught:
            ControlClient("tcp://127.0.0.1:5555")
        self.assertIn("needs key", str(caught.exception))
        self.assertIsNone(ControlClient("tcp://127.0.0.1:5555", insecure=True).curve)
        with tempfile.TemporaryDirectory() as directory:
            public, secret = "a" * 40, "b" * 40
            for name, role in (("desk", "control"), ("tablet", "consumer")):
                with open(os.path.join(directory, f"{name}.key"), "w", encoding="utf-8") as file:
                    file.write(f"name = {name}\nrole = {role}\npublic-key = {public}\nsecret-key = {secret}\n")
            with open(os.path.join(directory, "broker.pub"), "w", encoding="utf-8") as file:
                file.write(f"# the broker\nname = broker\nrole = broker\npublic-key = {'c' * 40}\n")
            client = ControlClient("tcp://127.0.0.1:5555", key=os.path.join(directory, "desk.key"),
                                   server_key=os.path.join(directory, "broker.pub"))
            self.assertEqual(client.curve, (public.encode(), secret.encode(), b"c" * 40))
            with self.assertRaises(ControlError) as caught:
                ControlClient("tcp://127.0.0.1:5555", key=os.path.join(directory, "tablet.key"),
                              server_key=os.path.join(directory, "broker.pub"))
            self.assertIn("is a consumer key", str(caught.exception))
            with self.assertRaises(ControlError):
                read_key_file(os.path.join(directory, "missing.key"))

    def test_exit_codes_and_request_ids(self) -> None:
        self.assertEqual(ControlAnswer("a", "invalid", "").exit_code, 64)
        self.assertEqual(ControlAnswer("a", "noLiveWorker", "").exit_code, 1)
        identifier = new_request_id()
        self.assertEqual(len(identifier), 16)
        int(identifier, 16)
        with self.assertRaises(ControlError):
            encode_request("a", "launch")


if __name__ == "__main__":
    unittest.main()
