"""kinesia.bus: the bus directory's rule, as `kinesia` applies it."""

from __future__ import annotations

import os
import stat
import tempfile
import unittest

from kinesia.bus import BusDirectoryError, default_bus_directory, prepare_bus_directory


class BusDirectoryTests(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = tempfile.TemporaryDirectory()
        self.root = self.scratch.name

    def tearDown(self) -> None:
        self.scratch.cleanup()

    def test_the_default_is_under_an_absolute_xdg_runtime_dir_else_in_tmp(self) -> None:
        self.assertEqual(default_bus_directory({"XDG_RUNTIME_DIR": "/run/user/5"}),
                         "/run/user/5/kinesia")
        for environ in ({}, {"XDG_RUNTIME_DIR": "relative"}):
            self.assertEqual(default_bus_directory(environ), f"/tmp/kinesia-{os.getuid()}")

    def test_a_missing_directory_is_made_with_mode_0700_and_then_accepted(self) -> None:
        directory = os.path.join(self.root, "a", "bus")
        self.assertEqual(prepare_bus_directory(directory), directory)
        self.assertEqual(stat.S_IMODE(os.stat(directory).st_mode), 0o700)
        self.assertEqual(prepare_bus_directory(directory), directory)

    def test_a_link_a_loose_directory_and_a_loose_broker_file_are_refused(self) -> None:
        directory = os.path.join(self.root, "bus")
        os.mkdir(directory, 0o700)
        link = os.path.join(self.root, "link")
        os.symlink(directory, link)
        with self.assertRaisesRegex(BusDirectoryError, "is a symbolic link"):
            prepare_bus_directory(link)
        with open(os.path.join(directory, "pub.sock"), "w"):
            pass
        os.chmod(os.path.join(directory, "pub.sock"), 0o666)
        with self.assertRaisesRegex(BusDirectoryError, "pub.sock has mode 0666"):
            prepare_bus_directory(directory)
        os.chmod(os.path.join(directory, "pub.sock"), 0o600)
        os.chmod(directory, 0o750)
        with self.assertRaisesRegex(BusDirectoryError, "has mode 0750: other users may reach it"):
            prepare_bus_directory(directory)
        self.assertEqual(stat.S_IMODE(os.stat(directory).st_mode), 0o750)  # never changed


if __name__ == "__main__":
    unittest.main()
