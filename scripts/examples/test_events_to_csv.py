"""Unit tests of events_to_csv.py's pure parts: the rows of each event shape, and the cursor read
back from a CSV file (the torn last row, damaged files, the counts a restart resumes with).

    .venv/bin/python -m unittest discover -s scripts/examples -p 'test_*.py'
"""

import csv
import io
import os
import stat
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import events_to_csv as e2c  # noqa: E402

STREAM = "0123456789abcdef"
OTHER = "00000000000000ff"
EVENTS = [
    '{"type":"setupChanged","t":0.5,"issues":["tooFar"]}',
    '{"type":"repCompleted","t":2.5,"rep":{"peak":92.5,"faults":[],"start":1.0,"end":2.5}}',
    '{"type":"formFault","t":3.0,"fault":"keepTrunkUpright"}',
    '{"type":"repRejected","t":4.25,"rep":{"peak":80.0,"faults":["keepTrunkUpright","tooFast"],'
    '"start":3.0,"end":4.25}}',
    '{"type":"holdStarted","t":5.0}',
    '{"type":"repCompleted","t":35.0,"rep":{"peak":95.0,"faults":[],"start":5.0,"end":35.0}}',
    '{"type":"visibilityChanged","t":36.0,"visibility":{"isVisible":false,'
    '"missingJoints":["leftHip","leftKnee"]}}',
    '{"type":"baselineCompleted","t":40.0,"value":1e-05}',
]


def write(rows):
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    return text.getvalue().encode("utf-8")


def motion_file(events=EVENTS, stream=STREAM):
    state = e2c.StreamState()
    rows = [e2c.motion_row(stream, index, text, state) for index, text in enumerate(events)]
    return write([e2c.MOTION_COLUMNS] + rows), rows, state


class RowTests(unittest.TestCase):
    def column(self, row, name):
        return row[e2c.MOTION_COLUMNS.index(name)]

    def test_each_event_shape_fills_its_columns_with_the_json_text_of_its_values(self):
        _, rows, _ = motion_file()
        c = self.column
        self.assertEqual(c(rows[0], "setupIssues"), "tooFar")
        self.assertEqual([c(rows[1], n) for n in ("repNumber", "cleanCount", "hold", "peak",
                                                  "duration")], ["1", "1", "false", "92.5", "1.5"])
        self.assertEqual(c(rows[2], "faults"), "keepTrunkUpright")
        self.assertEqual([c(rows[3], n) for n in ("repNumber", "cleanCount", "faults", "peak")],
                         ["2", "1", "keepTrunkUpright;tooFast", "80.0"])
        self.assertEqual([c(rows[5], n) for n in ("repNumber", "cleanCount", "hold", "duration")],
                         ["3", "2", "true", "30.0"])
        self.assertEqual([c(rows[6], n) for n in ("isVisible", "missingJoints")],
                         ["false", "leftHip;leftKnee"])
        self.assertEqual(c(rows[7], "value"), "1e-05")  # as written, never reformatted
        self.assertEqual([c(row, "json") for row in rows], EVENTS)
        self.assertEqual([c(row, "sequence") for row in rows], [str(i) for i in range(len(EVENTS))])

    def test_a_payload_without_the_fields_of_its_type_is_refused(self):
        for text in ['{"type":"repCompleted","t":1}', '{"type":"formFault","t":1,"fault":3}',
                     '{"type":"holdStarted","t":"1"}', '[1]', '{"t":1}', 'not json',
                     '{"type":"baselineCompleted","t":1,"value":NaN}']:
            with self.assertRaises(ValueError, msg=text):
                e2c.motion_row(STREAM, 0, text, e2c.StreamState())

    def test_an_unknown_type_keeps_its_type_time_and_json(self):
        row = e2c.motion_row(STREAM, 4, '{"type":"newKind","t":7,"x":1}', e2c.StreamState())
        self.assertEqual([self.column(row, n) for n in ("type", "t", "json")],
                         ["newKind", "7", '{"type":"newKind","t":7,"x":1}'])

    def test_analytics_records_fill_their_columns(self):
        text = ('{"type":"repSymmetry","t":20.0,"set":1,"pair":2,"left":{"rep":2,"peak":90.0,'
                '"range":88.0,"timeUnderTension":2.5},"right":{"rep":2,"peak":80.0,"range":77.0,'
                '"timeUnderTension":2.0},'
                '"peakDifference":10.0,"rangeRatio":0.875,"tempoRatio":null}')
        row = dict(zip(e2c.ANALYTICS_COLUMNS, e2c.analytics_row(STREAM, 9, text)))
        self.assertEqual((row["left.peak"], row["right.range"], row["peakDifference"],
                          row["tempoRatio"]), ("90.0", "77.0", "10.0", ""))
        self.assertEqual(e2c.kind_of(text), "analytics")
        with self.assertRaises(ValueError):
            e2c.analytics_row(STREAM, 9, '{"type":"repSymmetry","t":1}')


class CursorTests(unittest.TestCase):
    def test_the_last_row_of_each_stream_is_the_cursor_and_the_counts_resume(self):
        data, _, written = motion_file()
        keep, kind, streams = e2c.read_session_csv(data)
        self.assertEqual((keep, kind), (len(data), "motion"))
        state = streams[STREAM]
        self.assertEqual((state.sequence, state.reps, state.clean, state.holding),
                         (written.sequence, written.reps, written.clean, written.holding))
        self.assertEqual(state.sequence, len(EVENTS) - 1)

    def test_a_hold_under_way_is_resumed(self):
        data, _, _ = motion_file(EVENTS[:5])
        _, _, streams = e2c.read_session_csv(data)
        self.assertTrue(streams[STREAM].holding)
        row = e2c.motion_row(STREAM, 5, EVENTS[5], streams[STREAM])
        self.assertEqual(row[e2c.MOTION_COLUMNS.index("hold")], "true")

    def test_every_cut_of_the_last_row_is_cut_off_and_the_rows_before_it_kept(self):
        data, _, _ = motion_file()
        before, _, _ = motion_file(EVENTS[:-1])
        for cut in range(len(before), len(data)):
            keep, _, streams = e2c.read_session_csv(data[:cut])
            self.assertEqual(keep, len(before), f"cut at {cut}")
            self.assertEqual(streams[STREAM].sequence, len(EVENTS) - 2)

    def test_a_cut_in_the_header_leaves_an_empty_file_and_an_empty_one_has_no_cursor(self):
        header = write([e2c.MOTION_COLUMNS])
        for cut in range(0, len(header)):
            self.assertEqual(e2c.read_session_csv(header[:cut]), (0, None, {}))
        self.assertEqual(e2c.read_session_csv(header)[:2], (len(header), "motion"))

    def test_streams_are_counted_apart(self):
        state_a, state_b = e2c.StreamState(), e2c.StreamState()
        rows = [e2c.motion_row(STREAM, 0, EVENTS[1], state_a),
                e2c.motion_row(OTHER, 7, EVENTS[1], state_b),
                e2c.motion_row(STREAM, 1, EVENTS[3], state_a)]
        _, _, streams = e2c.read_session_csv(write([e2c.MOTION_COLUMNS] + rows))
        self.assertEqual({key: (s.sequence, s.reps) for key, s in streams.items()},
                         {STREAM: (1, 2), OTHER: (7, 1)})

    def test_a_file_that_is_not_ours_or_is_damaged_before_its_end_is_refused(self):
        data, _, _ = motion_file()
        lines = data.split(b"\n")
        damaged = b"\n".join(lines[:3] + [b"garbage"] + lines[3:])
        for bad in [b"name,age\nann,3\n", damaged, b"\xff\xfe" + data]:
            with self.assertRaises(e2c.DamagedFile):
                e2c.read_session_csv(bad)


class FlushTests(unittest.TestCase):
    def test_a_batch_interrupted_after_its_write_is_not_written_again(self):
        # SIGTERM or a disk error after the rows are written, while they are fsynced: the
        # program's last flush (on its way out) must not append them a second time.
        with tempfile.TemporaryDirectory() as directory:
            files = e2c.SessionFiles(directory, lambda _: None, lambda *_: None)
            topic = "event/cam0/left/"
            files.load(topic, {})
            files.deliver(topic, STREAM, 3, EVENTS[4])
            files.deliver(topic, STREAM, 4, EVENTS[7])
            real_fsync = os.fsync

            def interrupted(descriptor):
                real_fsync(descriptor)
                if not stat.S_ISDIR(os.fstat(descriptor).st_mode):  # the file, not --out
                    raise KeyboardInterrupt

            with mock.patch("os.fsync", interrupted), self.assertRaises(KeyboardInterrupt):
                files.flush()
            files.flush()
            files.close()
            with open(os.path.join(directory, "cam0-left.csv"), newline="") as file:
                sequences = [row[1] for row in csv.reader(file)]
            self.assertEqual(sequences, ["sequence", "3", "4"])


if __name__ == "__main__":
    unittest.main()
