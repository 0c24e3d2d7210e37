"""Makes data/video/s2d_demo_walk.mp4 from the Sports2D demo video (BSD 3-Clause).

    pip download sports2d==0.8.34 --no-deps -d /tmp/s2d
    unzip -o /tmp/s2d/sports2d-0.8.34-py3-none-any.whl 'Sports2D/Demo/demo.mp4' -d /tmp/s2d
    python detector/make_test_video.py /tmp/s2d/Sports2D/Demo/demo.mp4 data/video/s2d_demo_walk.mp4

Frames 0-200 of the 1768x994, 30 fps original, every second one (15 fps), scaled to 704x396
(INTER_AREA; MediaPipe analyses a 256x256 image either way), MPEG-4 part 2 (OpenCV's wheels have
no H.264 encoder): 1.5 MB instead of 4 MB. The agreement with the recording made on the
original (data/recordings/s2d_demo_walk_mediapipe.jsonl) is checked on the original itself,
which scripts/setup fetches (detector/README.md).
"""

import sys

import cv2


def main(source, destination):
    capture = cv2.VideoCapture(source)
    if not capture.isOpened():
        sys.exit(f"cannot read {source}")
    writer = cv2.VideoWriter(destination, cv2.CAP_FFMPEG, cv2.VideoWriter_fourcc(*"mp4v"), 15.0,
                             (704, 396))
    if not writer.isOpened():
        sys.exit(f"cannot write {destination}")
    for index in range(201):
        ok, frame = capture.read()
        if not ok:
            sys.exit(f"{source} has only {index} frames")
        if index % 2 == 0:
            writer.write(cv2.resize(frame, (704, 396), interpolation=cv2.INTER_AREA))
    writer.release()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
