"""kinesia.sequence: SequenceTracker (the Swift tests compare it with the Swift tracker too)."""

from __future__ import annotations

import unittest

from kinesia.sequence import SequenceTracker


def header(stream: str, sequence: int) -> dict[str, object]:
    return {"stream_id": stream, "sequence": sequence}


class SequenceTrackerTests(unittest.TestCase):
    def test_order_gaps_duplicates_and_restarts_are_told_apart_per_topic(self) -> None:
        tracker = SequenceTracker()
        events = [("a/", "01", 5), ("a/", "01", 6), ("a/", "01", 9), ("a/", "01", 8),
                  ("b/", "01", 0), ("a/", "02", 0), ("a/", "02", 0), ("a/", "02", 1)]
        self.assertEqual([tracker.record(t, header(s, n)) for t, s, n in events],
                         ["newStream", "inOrder", "gap:2", "old", "newStream", "restart", "old",
                          "inOrder"])
        self.assertEqual((tracker.delivered, tracker.missing, tracker.duplicates,
                          tracker.restarts), (6, 2, 2, 1))


if __name__ == "__main__":
    unittest.main()
