"""BlazePose landmarks to the pose contract of Kinesia's JSON Lines, with no I/O.

The pose contract (docs in README, "Cameras"): pixels of the full frame with y down, anatomical
sides, only the points seen with at least the minimum visibility, confidences from the
visibility, `neck` and `root` as the midpoints of the shoulders and of the hips when both are
present, `w`/`h` set, and an empty pose when nobody is found.

MediaPipe's LEFT landmarks are the person's anatomical left on an unmirrored frame (the left
shoulder of a person facing the camera is on the image's right). A mirrored selfie view shows
the person as a mirror image, which the detector labels like an unmirrored person: `mirrored`
swaps the sides back. Points stay in the pixels of the image as given.

Plain functions so that they run without mediapipe or OpenCV (`test_pose_lines.py`).
"""

import json
import math

# BlazePose's 33 landmark indices for the 17 joints the contract takes from it.
BLAZEPOSE_JOINTS = (
    ("nose", 0),
    ("leftEye", 2),
    ("rightEye", 5),
    ("leftEar", 7),
    ("rightEar", 8),
    ("leftShoulder", 11),
    ("rightShoulder", 12),
    ("leftElbow", 13),
    ("rightElbow", 14),
    ("leftWrist", 15),
    ("rightWrist", 16),
    ("leftHip", 23),
    ("rightHip", 24),
    ("leftKnee", 25),
    ("rightKnee", 26),
    ("leftAnkle", 27),
    ("rightAnkle", 28),
)

# The contract's 19 joints in Joint order (Sources/KinesiaMotion/Pose/Joint.swift).
JOINT_ORDER = (
    "nose", "leftEye", "rightEye", "leftEar", "rightEar", "neck", "root",
    "leftShoulder", "rightShoulder", "leftElbow", "rightElbow", "leftWrist", "rightWrist",
    "leftHip", "rightHip", "leftKnee", "rightKnee", "leftAnkle", "rightAnkle",
)

DEFAULT_MIN_VISIBILITY = 0.3


def swap_side(name):
    """`leftKnee` <-> `rightKnee`; names without a side are unchanged."""
    if name.startswith("left"):
        return "right" + name[4:]
    if name.startswith("right"):
        return "left" + name[5:]
    return name


class Region:
    """The analysed part of a frame, `x0,y0,x1,y1` in full-frame pixels (x1, y1 excluded)."""

    def __init__(self, x0, y0, x1, y1):
        self.x0, self.y0, self.x1, self.y1 = x0, y0, x1, y1

    @property
    def width(self):
        return self.x1 - self.x0

    @property
    def height(self):
        return self.y1 - self.y0

    @staticmethod
    def parse(text):
        """`X0,Y0,X1,Y1` (integers) -> Region; ValueError with the reason otherwise."""
        parts = text.split(",")
        if len(parts) != 4:
            raise ValueError(f"--roi wants X0,Y0,X1,Y1 (four integers), got {text!r}")
        try:
            x0, y0, x1, y1 = (int(p) for p in parts)
        except ValueError:
            raise ValueError(f"--roi wants X0,Y0,X1,Y1 (four integers), got {text!r}") from None
        if x0 < 0 or y0 < 0 or x1 <= x0 or y1 <= y0:
            raise ValueError(f"--roi {text}: needs 0 <= X0 < X1 and 0 <= Y0 < Y1")
        return Region(x0, y0, x1, y1)

    def check_inside(self, width, height):
        """Raises ValueError when the region does not fit a `width` x `height` frame."""
        if self.x1 > width or self.y1 > height:
            raise ValueError(
                f"--roi {self.x0},{self.y0},{self.x1},{self.y1} is outside the "
                f"{width}x{height} frame")

    def __eq__(self, other):
        return isinstance(other, Region) and (self.x0, self.y0, self.x1, self.y1) == (
            other.x0, other.y0, other.x1, other.y1)

    def __repr__(self):
        return f"Region({self.x0}, {self.y0}, {self.x1}, {self.y1})"


def convert(landmarks, frame_width, frame_height, region=None, mirrored=False,
            min_visibility=DEFAULT_MIN_VISIBILITY):
    """BlazePose landmarks -> (points, confidence) of the contract.

    landmarks: 33 (x, y, visibility) with x, y normalised to the analysed image (the region,
    or the whole frame), or None when nobody was found. Landmarks outside the analysed image
    (BlazePose extrapolates them) are not observed points.
    """
    if region is None:
        region = Region(0, 0, frame_width, frame_height)
    points, confidence = {}, {}
    if landmarks is None:
        return points, confidence
    for name, index in BLAZEPOSE_JOINTS:
        x, y, visibility = landmarks[index]
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(visibility)):
            continue
        if visibility < min_visibility or not (0 <= x <= 1 and 0 <= y <= 1):
            continue
        joint = swap_side(name) if mirrored else name
        points[joint] = (region.x0 + x * region.width, region.y0 + y * region.height)
        confidence[joint] = min(max(visibility, 0.0), 1.0)
    for middle, left, right in (("neck", "leftShoulder", "rightShoulder"),
                                ("root", "leftHip", "rightHip")):
        if left in points and right in points:
            (lx, ly), (rx, ry) = points[left], points[right]
            points[middle] = ((lx + rx) / 2, (ly + ry) / 2)
            confidence[middle] = min(confidence[left], confidence[right])
    return points, confidence


def pose_line(t, frame_width, frame_height, points, confidence):
    """One JSON line of the contract (no newline): pixels to 2 decimals, confidences to 4,
    joints in Joint order."""
    ordered = [j for j in JOINT_ORDER if j in points]
    body = {
        "t": round(t, 6),
        "w": frame_width,
        "h": frame_height,
        "points": {j: [round(points[j][0], 2), round(points[j][1], 2)] for j in ordered},
        "confidence": {j: round(confidence[j], 4) for j in ordered if j in confidence},
    }
    return json.dumps(body, separators=(",", ":"))


def stats_line(counters):
    """The detector's periodic report on standard error: `stats ` and a JSON object."""
    return "stats " + json.dumps(counters, separators=(",", ":"), sort_keys=True)
