"""Test helper: the first frames of a video, padded and/or mirrored, in a lossless video.

    transform_video.py IN OUT.avi --frames N [--pad LEFT,TOP,RIGHT,BOTTOM] [--flip]

Each decoded frame of IN is mirrored left-right (--flip) and placed at (LEFT, TOP) on a black
canvas LEFT + RIGHT wider and TOP + BOTTOM taller, then written with FFV1 (lossless). The frames
are read back and compared with what was written: the detector then sees exactly the pixels of
IN, so its points on OUT can be compared exactly with its points on IN (Tests/
KinesiaIntegrationTests/CameraIngestTests.swift: --roi maps points back; --mirrored keeps sides).
"""

import argparse
import sys

import cv2
import numpy


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("destination")
    parser.add_argument("--frames", type=int, required=True)
    parser.add_argument("--pad", default="0,0,0,0")
    parser.add_argument("--flip", action="store_true")
    args = parser.parse_args(argv)
    left, top, right, bottom = (int(v) for v in args.pad.split(","))
    capture = cv2.VideoCapture(args.source)
    fps = capture.get(cv2.CAP_PROP_FPS)
    written = []
    writer = None
    for _ in range(args.frames):
        ok, frame = capture.read()
        if not ok:
            sys.exit(f"{args.source}: fewer than {args.frames} frames")
        if args.flip:
            frame = cv2.flip(frame, 1)
        height, width = frame.shape[:2]
        canvas = numpy.zeros((height + top + bottom, width + left + right, 3), numpy.uint8)
        canvas[top:top + height, left:left + width] = frame
        if writer is None:
            writer = cv2.VideoWriter(args.destination, cv2.CAP_FFMPEG, cv2.VideoWriter_fourcc(*"FFV1"),
                                     fps, (canvas.shape[1], canvas.shape[0]))
            if not writer.isOpened():
                sys.exit(f"cannot write {args.destination} with FFV1")
        writer.write(canvas)
        written.append(canvas)
    writer.release()
    check = cv2.VideoCapture(args.destination)
    for index, expected in enumerate(written):
        ok, frame = check.read()
        if not ok or not numpy.array_equal(frame, expected):
            sys.exit(f"{args.destination}: frame {index} does not read back identical")


if __name__ == "__main__":
    main(sys.argv[1:])
