"""The wire format's test vectors from the command line (docs/wire-format.md):

    python -m kinesia.fixtures decode FILE [--topic TOPIC]   # print a payload as JSON
    python -m kinesia.fixtures check FIXTURES_DIR            # verify the test vectors
    python -m kinesia.fixtures encode-fixtures EXPECTED_JSON OUT_DIR
    python -m kinesia.fixtures check-replay REPLAY_JSON      # verify the replay vectors

The vectors are Tests/KinesiaWireTests/Fixtures (expected.json, replay.json and the payloads);
the Swift tests check the same files.
"""

from __future__ import annotations

import json
import os
import sys

from kinesia.replay import (_REPLAY_ERROR, ReplayError, decode_replay_reply, decode_replay_request,
                            encode_replay_reply, encode_replay_request)
from kinesia.wire import VERSION, WireError, decode_message, decode_payload, encode_message


def _check(directory: str) -> int:
    with open(os.path.join(directory, "expected.json"), encoding="utf-8") as file:
        expected = json.load(file)
    if expected["format_version"] != VERSION:
        raise SystemExit(f"fixtures are for format version {expected['format_version']}")
    failures: list[str] = []
    checked = 0
    for entry in expected["valid"]:
        checked += 1
        with open(os.path.join(directory, entry["file"]), "rb") as file:
            payload = file.read()
        try:
            message = decode_message(entry["topic"], payload)
        except WireError as error:
            failures.append(f"{entry['file']}: {error}")
            continue
        if message["header"] != entry["header"]:
            failures.append(f"{entry['file']}: header {message['header']} != {entry['header']}")
        if "pose" in entry and message.get("pose") != entry["pose"]:
            failures.append(f"{entry['file']}: pose {message.get('pose')} != {entry['pose']}")
        if "json" in entry and message.get("json") != entry["json"]:
            failures.append(f"{entry['file']}: json {message.get('json')!r} != {entry['json']!r}")
        _, encoded = encode_message(entry["topic"], entry["header"], pose=entry.get("pose"),
                                    json_text=entry.get("json"))
        if encoded != payload:
            failures.append(f"{entry['file']}: Python encodes {encoded.hex()}, fixture is "
                            f"{payload.hex()}")
    for entry in expected["invalid"]:
        checked += 1
        with open(os.path.join(directory, entry["file"]), "rb") as file:
            payload = file.read()
        try:
            decode_message(entry["topic"], payload)
            failures.append(f"{entry['file']}: decoded, expected {entry['error']}")
        except WireError as error:
            if error.code != entry["error"]:
                failures.append(f"{entry['file']}: {error.code} ({error}), expected "
                                f"{entry['error']}")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"{checked} fixtures ok")
    return 0


def _check_replay(path: str) -> int:
    """Checks the replay vectors (Tests/KinesiaWireTests/Fixtures/replay.json) both ways."""
    with open(path, encoding="utf-8") as file:
        vectors = json.load(file)
    failures: list[str] = []
    checked = 0
    for entry in vectors["requests"]:
        checked += 1
        frame = bytes.fromhex(entry["hex"])
        try:
            decoded = decode_replay_request(frame)
        except ReplayError as error:
            if error.code != entry.get("error"):
                failures.append(f"{entry['name']}: {error.code}, expected {entry.get('error')}")
            continue
        if "error" in entry:
            failures.append(f"{entry['name']}: decoded, expected {entry['error']}")
            continue
        expected = {"request_id": entry["request_id"], "topic": entry["topic"],
                    "stream_id": entry["stream_id"], "from": int(entry["from"]),
                    "limit": entry["limit"]}
        if decoded != expected:
            failures.append(f"{entry['name']}: {decoded} != {expected}")
        encoded = encode_replay_request(decoded["request_id"], decoded["topic"],
                                        decoded["stream_id"], decoded["from"], decoded["limit"])
        if encoded != frame:
            failures.append(f"{entry['name']}: Python encodes {encoded.hex()}")
    for entry in vectors["replies"]:
        checked += 1
        frames = [bytes.fromhex(frame) for frame in entry["frames"]]
        try:
            reply = decode_replay_reply(frames)
        except ReplayError as error:
            failures.append(f"{entry['name']}: {error}")
            continue
        for field, value in entry.items():
            if field in ("name", "frames"):
                continue
            got = reply.get(field)
            if str(got) != str(value):
                failures.append(f"{entry['name']}: {field} {got!r} != {value!r}")
        if reply["type"] == "entry":
            decode_message(reply["frames"][0], reply["frames"][1])
        if encode_replay_reply(reply) != frames:
            failures.append(f"{entry['name']}: Python encodes other frames")
        fixed = _REPLAY_ERROR.size if reply["type"] == "error" else len(frames[0])
        for cut in range(fixed):   # an error's text is free in length: cut its fixed part
            try:
                decode_replay_reply([frames[0][:cut]] + frames[1:])
                failures.append(f"{entry['name']}: cut at {cut} decoded")
            except ReplayError:
                pass
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"{checked} replay vectors ok")
    return 0


def _encode_fixtures(expected_path: str, directory: str) -> int:
    with open(expected_path, encoding="utf-8") as file:
        expected = json.load(file)
    os.makedirs(directory, exist_ok=True)
    for entry in expected["valid"]:
        _, payload = encode_message(entry["topic"], entry["header"], pose=entry.get("pose"),
                                    json_text=entry.get("json"))
        with open(os.path.join(directory, entry["file"]), "wb") as file:
            file.write(payload)
    print(f"{len(expected['valid'])} fixtures written to {directory}")
    return 0


def _decode_file(path: str, topic: str | None) -> int:
    with open(path, "rb") as file:
        payload = file.read()
    try:
        message = decode_message(topic, payload) if topic else decode_payload(payload)
    except WireError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return 1
    if "json" in message:
        try:
            message["body"] = json.loads(message["json"])
        except ValueError:
            pass
    print(json.dumps(message, indent=2, ensure_ascii=False))
    return 0


def main(argv: list[str]) -> int:
    usage = ("usage: python -m kinesia.fixtures decode FILE [--topic TOPIC]\n"
             "       python -m kinesia.fixtures check FIXTURES_DIR\n"
             "       python -m kinesia.fixtures encode-fixtures EXPECTED_JSON OUT_DIR\n"
             "       python -m kinesia.fixtures check-replay REPLAY_JSON")
    if len(argv) >= 2 and argv[0] == "decode":
        topic: str | None = None
        if len(argv) == 4 and argv[2] == "--topic":
            topic = argv[3]
        elif len(argv) != 2:
            print(usage, file=sys.stderr)
            return 64
        return _decode_file(argv[1], topic)
    if len(argv) == 2 and argv[0] == "check":
        return _check(argv[1])
    if len(argv) == 2 and argv[0] == "check-replay":
        return _check_replay(argv[1])
    if len(argv) == 3 and argv[0] == "encode-fixtures":
        return _encode_fixtures(argv[1], argv[2])
    if argv and argv[0] in ("-h", "--help", "help"):
        print(usage)
        return 0
    print(usage, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
