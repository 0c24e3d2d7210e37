"""The conversion of BlazePose landmarks to the pose contract (no mediapipe needed).

    python3 -m unittest discover -s detector -p 'test_*.py'
"""

import json
import math
import unittest

import pose_lines
from pose_lines import Region, convert, pose_line


def landmarks(**overrides):
    """33 landmarks all at the image's centre, visibility 0.9, with some replaced by index."""
    result = [(0.5, 0.5, 0.9)] * 33
    for key, value in overrides.items():
        result[int(key[1:])] = value
    return result


class ConversionTests(unittest.TestCase):
    def test_nobody_found_is_an_empty_pose(self):
        self.assertEqual(convert(None, 640, 480), ({}, {}))
        line = json.loads(pose_line(1.5, 640, 480, {}, {}))
        self.assertEqual(line, {"t": 1.5, "w": 640, "h": 480, "points": {}, "confidence": {}})

    def test_the_19_joints_in_full_frame_pixels_y_down(self):
        marks = landmarks(i11=(0.75, 0.25, 0.99), i12=(0.25, 0.25, 0.98), i23=(0.6, 0.75, 0.8),
                          i24=(0.4, 0.75, 0.7))
        points, confidence = convert(marks, 640, 480)
        self.assertEqual(list(points), list(confidence))
        self.assertEqual(set(points), set(pose_lines.JOINT_ORDER))
        self.assertEqual(points["leftShoulder"], (480, 120))
        self.assertEqual(points["rightShoulder"], (160, 120))
        self.assertEqual(points["neck"], (320, 120))
        self.assertEqual(points["root"], (320, 360))
        self.assertEqual(confidence["neck"], 0.98)
        self.assertEqual(confidence["root"], 0.7)

    def test_points_under_the_minimum_visibility_and_outside_the_image_are_left_out(self):
        marks = landmarks(i11=(0.75, 0.25, 0.29), i25=(0.5, 1.2, 0.99), i26=(-0.01, 0.5, 0.99),
                          i0=(0.5, 0.5, float("nan")))
        points, confidence = convert(marks, 640, 480)
        for joint in ("leftShoulder", "neck", "leftKnee", "rightKnee", "nose"):
            self.assertNotIn(joint, points)
            self.assertNotIn(joint, confidence)
        self.assertIn("rightShoulder", points)
        self.assertIn("root", points)
        points, _ = convert(marks, 640, 480, min_visibility=0.2)
        self.assertIn("leftShoulder", points)

    def test_a_region_maps_points_back_to_the_full_frame(self):
        marks = landmarks(i11=(0.0, 0.0, 0.9), i12=(1.0, 1.0, 0.9), i13=(0.25, 0.5, 0.9))
        points, _ = convert(marks, 1768, 994, Region(100, 470, 1868, 994))
        self.assertEqual(points["leftShoulder"], (100, 470))
        self.assertEqual(points["rightShoulder"], (1868, 994))
        self.assertEqual(points["leftElbow"], (100 + 0.25 * 1768, 470 + 0.5 * 524))

    def test_a_mirrored_view_swaps_the_sides_only(self):
        marks = landmarks(i11=(0.75, 0.25, 0.99), i12=(0.25, 0.25, 0.5))
        points, confidence = convert(marks, 640, 480, mirrored=True)
        self.assertEqual(points["rightShoulder"], (480, 120))
        self.assertEqual(confidence["rightShoulder"], 0.99)
        self.assertEqual(points["leftShoulder"], (160, 120))
        self.assertEqual(points["nose"], (320, 240))
        self.assertEqual(pose_lines.swap_side("leftEar"), "rightEar")
        self.assertEqual(pose_lines.swap_side("root"), "root")

    def test_a_line_has_the_contract_fields_in_joint_order(self):
        points, confidence = convert(landmarks(), 640, 480)
        line = pose_line(0.0333333333, 640, 480, points, confidence)
        decoded = json.loads(line)
        self.assertEqual(list(decoded), ["t", "w", "h", "points", "confidence"])
        self.assertEqual(list(decoded["points"]), list(pose_lines.JOINT_ORDER))
        self.assertEqual(decoded["t"], 0.033333)
        self.assertTrue(all(math.isfinite(v) for p in decoded["points"].values() for v in p))

    def test_regions_are_checked(self):
        self.assertEqual(Region.parse("0,470,1768,994"), Region(0, 470, 1768, 994))
        for text in ("0,470,1768", "a,b,c,d", "10,0,5,20", "-1,0,5,5", "0,0,0,0"):
            with self.assertRaises(ValueError):
                Region.parse(text)
        with self.assertRaises(ValueError):
            Region(0, 470, 1769, 994).check_inside(1768, 994)
        Region(0, 470, 1768, 994).check_inside(1768, 994)


if __name__ == "__main__":
    unittest.main()
