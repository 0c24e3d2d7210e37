#!/usr/bin/env python3
"""Writes the OpenPose fixture folders of data/openpose/ from a real recording.

The first 12 frames of data/recordings/p2s_balance_cam01_openpose25b.jsonl (60 fps) are written
back as OpenPose `--write_json` frames in three keypoint orders, so that the Swift tests can check
that reading the folders gives the recording's poses again:

- body25b/  BODY_25B, 25 keypoints: no neck base, no hip centre (both derived by the reader);
            keypoint 17 (UpperNeck) is set to a point that is NOT the neck base, to prove that
            the reader ignores it. Names zero-padded like OpenPose's.
- body25/   BODY_25, 25 keypoints, with Neck (1) and MidHip (8) from the recording.
- coco/     COCO, 18 keypoints, with Neck (1), no hip centre. Names NOT zero-padded
            (frame_2 must come before frame_10: the reader sorts numbers by value).

Special frames (the same in every folder):
- frame 3: a second, smaller person is listed FIRST; the reader must pick the larger one.
- frame 5: nobody detected (empty "people"): an empty pose.
- frame 7: leftWrist has confidence 0.1 (dropped: under the 0.3 cut) and rightElbow is at
           (0, 0) with confidence 0.9 (dropped: OpenPose's "not detected").

Run from the repository root: python3 scripts/make-openpose-fixtures.py
"""
import json
import os
import shutil

SOURCE = "data/recordings/p2s_balance_cam01_openpose25b.jsonl"
OUT = "data/openpose"
FRAMES = 12

BODY25 = ["nose", "neck", "rightShoulder", "rightElbow", "rightWrist", "leftShoulder",
          "leftElbow", "leftWrist", "root", "rightHip", "rightKnee", "rightAnkle", "leftHip",
          "leftKnee", "leftAnkle", "rightEye", "leftEye", "rightEar", "leftEar",
          None, None, None, None, None, None]
BODY25B = ["nose", "leftEye", "rightEye", "leftEar", "rightEar", "leftShoulder",
           "rightShoulder", "leftElbow", "rightElbow", "leftWrist", "rightWrist", "leftHip",
           "rightHip", "leftKnee", "rightKnee", "leftAnkle", "rightAnkle", "UPPER_NECK",
           "HEAD_TOP", None, None, None, None, None, None]
COCO = ["nose", "neck", "rightShoulder", "rightElbow", "rightWrist", "leftShoulder",
        "leftElbow", "leftWrist", "rightHip", "rightKnee", "rightAnkle", "leftHip", "leftKnee",
        "leftAnkle", "rightEye", "leftEye", "rightEar", "leftEar"]


def keypoints(order, points, confidence):
    values = []
    for name in order:
        if name == "UPPER_NECK" and "nose" in points and "neck" in points:
            # Halfway between the nose and the neck base: clearly not the neck base.
            (nx, ny), (kx, ky) = points["nose"], points["neck"]
            values += [round((nx + kx) / 2, 2), round((ny + ky) / 2, 2), 0.8]
        elif name == "HEAD_TOP" and "nose" in points:
            values += [points["nose"][0], round(points["nose"][1] - 80, 2), 0.7]
        elif name in points:
            values += [points[name][0], points[name][1], confidence[name]]
        else:
            values += [0, 0, 0]
    return values


def smaller_copy(values):
    # Half the size, placed near the image's top-left corner; confidences kept.
    out = []
    for i in range(0, len(values), 3):
        x, y, c = values[i:i + 3]
        out += [0, 0, 0] if c == 0 else [round(20 + x / 2, 2), round(20 + y / 2, 2), c]
    return out


def frame_json(people):
    return json.dumps({"version": 1.3, "people": [
        {"person_id": [-1], "pose_keypoints_2d": p, "face_keypoints_2d": [],
         "hand_left_keypoints_2d": [], "hand_right_keypoints_2d": []} for p in people]})


def main():
    with open(SOURCE) as f:
        poses = [json.loads(line) for line in f][:FRAMES]
    folders = {
        "body25b": (BODY25B, lambda i: f"balance_{i:012d}_keypoints.json"),
        "body25": (BODY25, lambda i: f"balance_{i:012d}_keypoints.json"),
        "coco": (COCO, lambda i: f"frame_{i}_keypoints.json"),
    }
    for folder, (order, name) in folders.items():
        path = os.path.join(OUT, folder)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        for i, pose in enumerate(poses):
            points, confidence = dict(pose["points"]), dict(pose["confidence"])
            if i == 7:
                confidence["leftWrist"] = 0.1
            values = keypoints(order, points, confidence)
            if i == 7 and "rightElbow" in order:
                j = order.index("rightElbow")
                values[3 * j:3 * j + 3] = [0, 0, 0.9]
            people = [values]
            if i == 3:
                people = [smaller_copy(values), values]
            if i == 5:
                people = []
            with open(os.path.join(path, name(i)), "w") as out:
                out.write(frame_json(people) + "\n")


if __name__ == "__main__":
    main()
