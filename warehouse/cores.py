"""How many threads a command runs by default (one per core this process may use), and how a load
spends them."""

from __future__ import annotations

import os
from dataclasses import dataclass


def default_jobs() -> int:
    """Reader threads by default: the cores this process may run on (its CPU affinity, not the
    machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this platform (macOS)
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class LoadThreads:
    """How a load spends its `jobs` threads (`load_threads`)."""

    reader_jobs: int  # the Rust reader's workers (1: the single-threaded reader)
    reader_own_thread: bool  # the single-threaded reader on a thread of its own, not the loading thread
    encoders: int  # threads that derive and encode row groups (1: the loading thread)
    encode_inline_while_reading: bool  # on the loading thread, one at a time, until the input is read
    read_frame_parts: bool  # a multi-frame .pgn.zst by two readers on alternating parts of its frames


def load_threads(jobs: int) -> LoadThreads:
    """One job: all on the loading thread. Two: a multi-frame `.pgn.zst` is read by two single-threaded
    readers on alternating parts of its frames (`warehouse.ingest.frame_parts`), the row groups encoded on
    two threads; any other input by a pipeline, the single-threaded reader on a thread of its own and the
    loading thread deriving and encoding until the input is read, its last row groups then on both. (Two
    parallel-reader workers beside two encoders took 1.2-1.26x the CPU a game of one job, against ~1.05x:
    docs/operations.md, "Parallel loads".) More jobs: that many reader workers (beside a thread that
    frames) and that many encoders."""
    if jobs <= 1:
        return LoadThreads(1, False, 1, False, False)
    if jobs == 2:
        return LoadThreads(1, True, 2, True, True)
    return LoadThreads(jobs, False, jobs, False, False)
