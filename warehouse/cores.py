"""How many threads a command runs by default: one per core this process may use."""

from __future__ import annotations

import os


def default_jobs() -> int:
    """Reader threads by default: the cores this process may run on (its CPU affinity, not the
    machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this platform (macOS)
        return max(1, os.cpu_count() or 1)
