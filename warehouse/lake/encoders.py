"""Where a load's row groups are derived and encoded: on the loading thread (one job), or on a pool of
threads (the position kernel and pyarrow's encoders release the GIL, so a load's files encode on every
core).

A row group is two tasks, each on the lane of its file: derive it and encode its `games/` row group, then
encode its `plies/` row group. Split so, a row group's plies encode beside the next row group's games,
and the last row groups of a load spread over every thread. A lane runs its file's tasks one after the
other, in order, and no task ever waits in the pool for another: a task that ends hands its lane's next
to the pool. Measured on a 200k-game load with jobs=2: a write per file at once, behind a loading
thread that waited for each file's previous write, left a single encoder running for ~10% of the load.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

Task = Callable[[], None]


class Lane:
    """Tasks run one after the other, in the order submitted, on the encoders' pool (on the calling
    thread while they have none in use)."""

    def __init__(self, encoders: Encoders):
        self._encoders = encoders
        self._lock = threading.Lock()
        self._queue: deque[Task] = deque()
        self._busy = False

    def submit(self, task: Task) -> None:
        """Runs `task` after the lane's earlier ones. `task` must not raise: it reports its own errors."""
        pool = self._encoders.pool()
        if pool is None:  # no task of the lane is queued: inline ones end before `submit` returns
            task()
            return
        with self._lock:
            if self._busy:
                self._queue.append(task)
                return
            self._busy = True
        pool.submit(self._run, pool, task)

    def _run(self, pool: ThreadPoolExecutor, task: Task) -> None:
        try:
            task()
        finally:
            with self._lock:
                following = self._queue.popleft() if self._queue else None
                self._busy = following is not None
            if following is not None:
                pool.submit(self._run, pool, following)


class RowGroupWrite:
    """The two tasks of one row group (its `games/` part, then its `plies/`): `done` once both ended,
    with the first error of either."""

    def __init__(self) -> None:
        self.done: Future[None] = Future()
        self._lock = threading.Lock()
        self._parts = 2
        self._error: BaseException | None = None

    def part_ended(self, error: BaseException | None = None, parts: int = 1) -> None:
        """`parts` of the write ended (a failed games part ends both: its plies are never encoded)."""
        with self._lock:
            self._error = self._error or error
            self._parts -= parts
            if self._parts:
                return
        if self._error is None:
            self.done.set_result(None)
        else:
            self.done.set_exception(self._error)


class Encoders:
    """The pool of `threads` (none for 1), and how many row groups may be written at once: `threads`,
    each derived and encoded, or waiting in its lane (the games they hold count toward a load's memory).
    With `inline_while_reading`, the row groups are written on the loading thread, one at a time, until
    `use_pool`: a reader on a thread of its own keeps the other core."""

    def __init__(self, threads: int, inline_while_reading: bool = False):
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="parquet") if threads > 1 else None
        self._threads = threads
        self._inline = inline_while_reading or self._pool is None
        self._writing: set[Future[None]] = set()

    def pool(self) -> ThreadPoolExecutor | None:
        """Where lanes run their tasks now: None, on the thread that submits them."""
        return None if self._inline else self._pool

    def use_pool(self) -> None:
        """Row groups on every thread from now on: the input is read (its last row groups), or its readers
        keep no core of their own."""
        self._inline = self._pool is None

    def lane(self) -> Lane:
        return Lane(self)

    def admit(self, write: RowGroupWrite) -> None:
        """Waits until fewer than `threads` row groups are being written (one while they are written
        inline; the first of them to end makes room); counts `write` among them. Raises the error of a
        write that failed."""
        while len(self._writing) >= (1 if self._inline else self._threads):
            ended, self._writing = wait(self._writing, return_when=FIRST_COMPLETED)
            for future in ended:
                future.result()
        self._writing.add(write.done)

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
