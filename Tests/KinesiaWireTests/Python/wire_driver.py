#!/usr/bin/env python3
"""Drives kinesia.wire and kinesia.sequence (clients/python) for the Swift tests
(PythonWireTests): what the package answers, as JSON lines the tests compare with the Swift decoders and SequenceTracker.

    wire_driver.py decode CASES    # CASES: records [u32 LE topic length][topic][u32 LE payload length][payload]
    wire_driver.py track EVENTS    # EVENTS: a JSON array of [topic, stream id (16 hex digits), sequence]

decode prints one line per case: {"error": code} for a WireError, {"crash": "Type: message"}
for any other exception, else the decoded message (sequence numbers and send times as strings,
so that no 64-bit value is rounded on the way). track prints one line per event (the result of
SequenceTracker.record) and a last line with the tracker's totals.
"""

import json
import struct
import sys

from kinesia.sequence import SequenceTracker
from kinesia.wire import WireError, decode_message


def cases(path):
    with open(path, "rb") as file:
        data = file.read()
    offset = 0
    while offset < len(data):
        (size,) = struct.unpack_from("<I", data, offset)
        topic = data[offset + 4:offset + 4 + size]
        offset += 4 + size
        (size,) = struct.unpack_from("<I", data, offset)
        payload = data[offset + 4:offset + 4 + size]
        offset += 4 + size
        yield topic, payload


def decode(path):
    for topic, payload in cases(path):
        try:
            message = decode_message(topic, payload)
        except WireError as error:
            result = {"error": error.code}
        except BaseException as error:  # noqa: B036 - the point is to see every other one
            result = {"crash": f"{type(error).__name__}: {error}"[:300]}
        else:
            header = dict(message["header"])
            header["sequence"] = str(header["sequence"])
            header["sent_at_ns"] = str(header["sent_at_ns"])
            result = {"topic": message["topic"], "header": header}
            if "pose" in message:
                result["pose"] = message["pose"]
            else:
                result["json"] = message["json"]
        print(json.dumps(result, allow_nan=False))


def track(path):
    with open(path, encoding="utf-8") as file:
        events = json.load(file)
    tracker = SequenceTracker()
    for topic, stream, sequence in events:
        print(json.dumps(tracker.record(topic, {"stream_id": stream, "sequence": sequence})))
    print(json.dumps({"delivered": tracker.delivered, "missing": tracker.missing,
                      "duplicates": tracker.duplicates, "restarts": tracker.restarts}))


if __name__ == "__main__":
    {"decode": decode, "track": track}[sys.argv[1]](sys.argv[2])
