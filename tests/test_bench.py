"""The benches' own measuring (bench/): what they print is the figure they name."""

from __future__ import annotations

import sys

import support

sys.path.insert(0, str(support.REPO / "bench"))
from bench_load import run_measured  # bench/ is not a package: on the path above


def test_run_measured_gives_the_childs_peak_not_the_parents() -> None:
    """A small child of a process that has grown: its peak RSS is its own. wait4's ru_maxrss starts from
    the parent's RSS at the fork, so bench_positions' book command looked as big as the bench."""
    grown = b"\x01" * (400 << 20)  # written: resident in this process
    child = "x = b'\\x01' * (50 << 20)"
    _, _, rss_mb = run_measured([sys.executable, "-c", child])
    assert 50 <= rss_mb < 200, f"{rss_mb} MB"
    assert len(grown) == 400 << 20
