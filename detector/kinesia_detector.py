"""Kinesia's pose detector: frames of a video file or a V4L2 camera -> pose JSON lines.

    kinesia_detector.py --source video:PATH|camera:/dev/videoN [--fps N] [--size WxH]
                        [--mirrored] [--roi X0,Y0,X1,Y1] [--min-visibility 0.3]
                        [--speed S] [--max-frames N]

`kinesia ingest` and `kinesia analyze` run it as a child process (in the virtual environment
that scripts/setup makes); it can also run by hand. It only turns frames into poses:

- standard output: one pose per frame, a JSON line of the pose contract (pose_lines.py);
- standard error: `stats {...}` about once a second and once at the end (framesIn, framesOut,
  framesDropped, fpsIn, fpsOut, detectorMs, decodeMs, otherMs per frame over the last second,
  and the totals detectorSeconds, decodeSeconds, otherSeconds, wallSeconds since the model was
  loaded), `warning: ...` for the ingest's log, and `error: ...` before a non-zero exit;
  anything else (MediaPipe's own logging) is only shown when the detector fails.

MediaPipe Pose (BlazePose, model_complexity=1, the model inside the mediapipe 0.10.21 wheel:
nothing is downloaded). A file is read frame after frame, every frame analysed, timestamps
from each frame's presentation time. A camera is read by a thread of its own that keeps only
the newest frame: when the detector is slower than the camera, older frames are dropped and
counted; timestamps from the monotonic clock at capture. A video file given as a camera
(camera:clip.mp4) is played like one, at its frame rate times --speed.

Exit status: 0 at the end of a file, 2 when the source cannot be opened or the options are
wrong, 3 when a camera stops delivering frames.
"""

import argparse
import os
import queue
import sys
import threading
import time

import pose_lines

EXIT_USAGE = 2
EXIT_SOURCE_LOST = 3


def fail(message, status=EXIT_USAGE):
    print(f"error: {message}", file=sys.stderr, flush=True)
    sys.exit(status)


def exit_with_parent():
    """Exits when the process that started us (the ingest) is gone, even if it was killed and
    never closed our pipes: a thread checks the parent's pid twice a second."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def import_mediapipe():
    """`import mediapipe`, which imports its drawing utilities, which import matplotlib at the
    top. Pose never draws: when matplotlib is not installed (the environment leaves it out, with
    its nine dependencies), an empty stand-in satisfies that import. Nothing calls it."""
    try:
        import matplotlib.pyplot  # noqa: F401
    except ImportError:
        import types
        stand_in = types.ModuleType("matplotlib")
        stand_in.pyplot = types.ModuleType("matplotlib.pyplot")
        sys.modules["matplotlib"] = stand_in
        sys.modules["matplotlib.pyplot"] = stand_in.pyplot
    import mediapipe
    return mediapipe


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="Frames to Kinesia pose JSON lines.")
    parser.add_argument("--source", required=True, help="video:PATH or camera:/dev/videoN")
    parser.add_argument("--fps", type=float, help="frames per second asked of a camera")
    parser.add_argument("--size", help="WxH asked of a camera, e.g. 1280x720")
    parser.add_argument("--mirrored", action="store_true",
                        help="the image is a mirror view (a front camera): swap left and right")
    parser.add_argument("--roi", help="X0,Y0,X1,Y1: analyse this region of the frame only")
    parser.add_argument("--min-visibility", type=float, default=pose_lines.DEFAULT_MIN_VISIBILITY)
    parser.add_argument("--speed", type=float, default=1.0,
                        help="a video file played as a camera: this many times its frame rate")
    parser.add_argument("--max-frames", type=int, help="stop after this many frames")
    parser.add_argument("--stats-seconds", type=float, default=1.0)
    args = parser.parse_args(argv)
    kind, _, path = args.source.partition(":")
    if kind not in ("video", "camera") or not path:
        fail(f"--source {args.source!r}: use video:PATH or camera:/dev/videoN")
    args.kind, args.path = kind, path
    try:
        args.region = pose_lines.Region.parse(args.roi) if args.roi else None
    except ValueError as error:
        fail(str(error))
    args.width = args.height = None
    if args.size:
        try:
            w, h = args.size.lower().split("x")
            args.width, args.height = int(w), int(h)
        except ValueError:
            fail(f"--size wants WxH, e.g. 1280x720, got {args.size!r}")
    if kind == "video":
        if os.path.isdir(path):
            fail(f"{path} is a directory, not a video file: give the path of a video (.mp4, .mov...)")
        if not os.path.exists(path):
            fail(f"no such video file: {path}")
        if not os.access(path, os.R_OK):
            fail(f"cannot read {path}: permission denied")
    elif not os.path.exists(path):
        fail(f"no such camera: {path} (list the cameras with: ls /dev/video*)")
    return args


class Stats:
    """Counters and timings, reported on standard error."""

    def __init__(self, interval):
        self.interval = interval
        self.started = time.monotonic()
        self.frames_in = 0
        self.frames_out = 0
        self.dropped = 0
        self.totals = {"detector": 0.0, "decode": 0.0, "other": 0.0}
        self.window = {"detector": 0.0, "decode": 0.0, "other": 0.0}
        self.window_start = self.started
        self.window_in = 0
        self.window_out = 0
        self.lock = threading.Lock()

    def restart(self):
        """Times from now on (after the model is loaded)."""
        self.started = self.window_start = time.monotonic()

    def add(self, kind, seconds):
        self.totals[kind] += seconds
        self.window[kind] += seconds

    def report_if_due(self, final=False):
        now = time.monotonic()
        span = now - self.window_start
        if not final and span < self.interval:
            return
        with self.lock:
            frames_in, dropped = self.frames_in, self.dropped
            analysed = self.frames_out - self.window_out
            per_frame = (lambda seconds: round(1000 * seconds / analysed, 2)) if analysed else (
                lambda seconds: 0)
            counters = {
                "framesIn": frames_in, "framesOut": self.frames_out, "framesDropped": dropped,
                "fpsIn": round((frames_in - self.window_in) / span, 2) if span > 0 else 0,
                "fpsOut": round(analysed / span, 2) if span > 0 else 0,
                "detectorMs": per_frame(self.window["detector"]),
                "decodeMs": per_frame(self.window["decode"]),
                "otherMs": per_frame(self.window["other"]),
                "detectorSeconds": round(self.totals["detector"], 4),
                "decodeSeconds": round(self.totals["decode"], 4),
                "otherSeconds": round(self.totals["other"], 4),
                "wallSeconds": round(now - self.started, 4),
            }
            self.window = {k: 0.0 for k in self.window}
            self.window_start, self.window_in, self.window_out = now, frames_in, self.frames_out
        if final:
            counters["final"] = True
        print(pose_lines.stats_line(counters), file=sys.stderr, flush=True)


class FileFrames:
    """Every frame of a video file, with its presentation time.

    A thread decodes ahead (up to 4 frames) while the model runs on the current one: OpenCV
    releases the GIL while it decodes, so on two cores or more decoding is hidden behind the
    detector instead of adding to each frame's time."""

    AHEAD = 4

    def __init__(self, cv2, path, stats):
        self.capture = cv2.VideoCapture(path)
        if not self.capture.isOpened():
            fail(f"cannot decode {path}: not a video file OpenCV can read")
        self.cv2, self.stats, self.path = cv2, stats, path
        self.fps = self.capture.get(cv2.CAP_PROP_FPS) or 30.0
        self.queue = queue.Queue(maxsize=self.AHEAD)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        index, last_t = 0, None
        while not self.stopping.is_set():
            started = time.perf_counter()
            ok, frame = self.capture.read()
            elapsed = time.perf_counter() - started
            with self.stats.lock:
                self.stats.add("decode", elapsed)
            if not ok:
                self.queue.put(("end", index == 0))
                return
            t = self.capture.get(self.cv2.CAP_PROP_POS_MSEC) / 1000.0
            if last_t is not None and not t > last_t:
                t = index / self.fps  # a container without usable timestamps
            last_t = t
            index += 1
            with self.stats.lock:
                self.stats.frames_in += 1
            self.queue.put((frame, t))

    def next(self):
        item = self.queue.get()
        if isinstance(item[0], str):
            if item[1]:
                fail(f"cannot decode {self.path}: no frame could be read")
            return None, None
        return item

    def close(self):
        self.stopping.set()
        while self.thread.is_alive():
            try:
                self.queue.get(timeout=0.1)
            except queue.Empty:
                pass
        self.capture.release()


class CameraFrames:
    """The newest frame of a V4L2 camera; a thread reads the device continuously and older
    frames that nobody took are dropped (counted).

    A video file given as a camera is played as one: read at its own frame rate (times --speed), its
    frames dropped like a camera's when the detector is slower, and its end is the source's end
    (a rehearsal of a live session, and the tests of the drops)."""

    def __init__(self, cv2, path, args, stats):
        self.replay = os.path.isfile(path)
        self.capture = cv2.VideoCapture(path) if self.replay else cv2.VideoCapture(path, cv2.CAP_V4L2)
        if not self.capture.isOpened():
            fail(f"cannot open camera {path}: check that it is a capture device, that no other "
                 f"program uses it and that you may read it (the video group)")
        self.interval = None
        if self.replay:
            self.interval = 1.0 / ((self.capture.get(cv2.CAP_PROP_FPS) or 30.0) * args.speed)
        elif args.width:
            self.capture.set(cv2.CAP_PROP_FRAME_WIDTH, args.width)
            self.capture.set(cv2.CAP_PROP_FRAME_HEIGHT, args.height)
        if args.fps:
            self.capture.set(cv2.CAP_PROP_FPS, args.fps)
        self.stats, self.path = stats, path
        self.condition = threading.Condition()
        self.latest = None
        self.ended = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        failures = 0
        due = time.monotonic()
        while True:
            if self.interval is not None:
                due += self.interval
                time.sleep(max(0.0, due - time.monotonic()))
            ok, frame = self.capture.read()
            t = time.monotonic()
            if not ok and self.replay:
                failures = 10
            if not ok:
                failures += 1
                if failures < 10:
                    time.sleep(0.05)
                    continue
                with self.condition:
                    self.ended = True
                    self.condition.notify()
                return
            failures = 0
            with self.condition:
                with self.stats.lock:
                    self.stats.frames_in += 1
                    if self.latest is not None:
                        self.stats.dropped += 1
                self.latest = (frame, t)
                self.condition.notify()

    def next(self):
        with self.condition:
            while self.latest is None and not self.ended:
                self.condition.wait(timeout=1.0)
            if self.latest is None and self.replay:
                return None, None
            if self.latest is None:
                fail(f"camera {self.path} stopped delivering frames (unplugged?)",
                     EXIT_SOURCE_LOST)
            frame, t = self.latest
            self.latest = None
            return frame, t

    def close(self):
        self.capture.release()


def main(argv):
    args = parse_arguments(argv)
    exit_with_parent()
    # MediaPipe's C++ logging: warnings and errors only.
    os.environ.setdefault("GLOG_minloglevel", "2")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import cv2
    mp = import_mediapipe()

    stats = Stats(args.stats_seconds)
    frames = (FileFrames(cv2, args.path, stats) if args.kind == "video"
              else CameraFrames(cv2, args.path, args, stats))
    detector = mp.solutions.pose.Pose(static_image_mode=False, model_complexity=1,
                                      smooth_landmarks=True, enable_segmentation=False,
                                      min_detection_confidence=0.5, min_tracking_confidence=0.5)
    out = sys.stdout
    stats.restart()
    try:
        while args.max_frames is None or stats.frames_out < args.max_frames:
            frame, t = frames.next()
            if frame is None:
                break
            started = time.perf_counter()
            height, width = frame.shape[:2]
            region = args.region
            if region is not None:
                try:
                    region.check_inside(width, height)
                except ValueError as error:
                    fail(str(error))
                frame = frame[region.y0:region.y1, region.x0:region.x1]
            rgb = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
            converted = time.perf_counter()
            result = detector.process(rgb)
            detected = time.perf_counter()
            landmarks = None
            if result.pose_landmarks is not None:
                landmarks = [(l.x, l.y, l.visibility) for l in result.pose_landmarks.landmark]
            points, confidence = pose_lines.convert(landmarks, width, height, region,
                                                    args.mirrored, args.min_visibility)
            out.write(pose_lines.pose_line(t, width, height, points, confidence) + "\n")
            out.flush()
            with stats.lock:
                stats.frames_out += 1
                stats.add("detector", detected - converted)
                stats.add("other", (converted - started) + (time.perf_counter() - detected))
            stats.report_if_due()
    except BrokenPipeError:
        # The reader went away: nothing more to do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        detector.close()
        frames.close()
    stats.report_if_due(final=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
