"""What the benchmark scripts of the real processes share: where the release `kinesia` is,
building it, telling progress on standard error, and percentiles."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINESIA = os.path.join(ROOT, ".build", "release", "kinesia")


def speaker(name):
    """A function that writes `name: message` lines on standard error."""
    def say(message):
        print(f"{name}: {message}", file=sys.stderr, flush=True)
    return say


def percentile(values, fraction):
    """The value below which `fraction` of `values` lie (the nearest rank; the largest for 1.0)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def build_kinesia():
    """The release build of `kinesia`, its output on standard error."""
    subprocess.run(["swift", "build", "-c", "release", "--product", "kinesia"], check=True, cwd=ROOT,
                   stdout=sys.stderr)
