"""A multi-frame `.pgn.zst` read by two single-threaded readers at once, on alternating parts of its zstd
frames, their batches handed on in input order: what `--jobs 2` reads such a file with (`load_threads`).

A part is whole frames (`zstd_frames.frame_parts`), read as a Spark task reads one (`PgnReader(frames=)`):
it skips the end of a game begun before it and reads past its end to finish its last game. The parts are
chained as the Spark load chains its tasks' (`spark_load._chain`): a part must start where the part
before stopped (`first_game` against `stopped_at`), else it is read again told where to start; nothing
after the part where the input ends or is damaged is kept. So the games, rejects and counts are a whole
read's, in its order; the batches are cut at the parts' ends too.

Memory: a part's batches are held until it is read whole (its chaining is known then), and at most two
parts are read or held at once, beside the one being handed on: three parts' text as Arrow, each part at
most `MAX_PART_BYTES` (a file of larger frames is read as one).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from warehouse import _core
from warehouse.ingest.inputs import file_sha256
from warehouse.ingest.zstd_frames import frame_parts, input_goes_on, starts_where_stopped
from warehouse.lake.positions import reader_openings

# Decompressed bytes of a part at least (whole frames): each part costs its reader a batch per partition met,
# and three parts are held at most.
PART_BYTES = 32 << 20
# A part's bytes at most: a file whose frames make larger parts (a frame of gigabytes) is read through the
# pipeline, so that the parts held stay within ~3 x this of text (the bench dumps' frames are 64 MB).
MAX_PART_BYTES = 128 << 20
READERS = 2


def parts_to_read(path: str) -> list[tuple[int, int, int]]:
    """The parts `PartsReader` reads `path` in: none for a file of one part, not multi-frame zstd, with a
    part over `MAX_PART_BYTES`, or unreadable (the reader then says why, as for any input)."""
    try:
        parts = frame_parts(path, PART_BYTES)
    except OSError:
        return []
    return parts if all(end - start <= MAX_PART_BYTES for _, start, end in parts) else []


Item: TypeAlias = "tuple[Any, Any, list[_core.Reject]]"  # _core.Reject: a stub-only alias


@dataclass
class _Read:
    """One part read whole: its reader (its outcome) and its batches."""

    reader: _core.PgnReader
    items: list[Item] = field(default_factory=list)


class PartsReader:
    """Reads `path`'s `parts` (raw offset, decompressed start and end) on `READERS` threads; iterated, the
    batches of a whole read, in order. Its outcome (`load.ReadOutcome`) is known once iterated.

    :raises _core.PgnInputError: for an input the reader refuses (its first part is opened here).
    """

    compression = "zstd"

    def __init__(self, path: str, source_name: str, batch_games: int, parts: list[tuple[int, int, int]]):
        self.path, self.source_name, self.batch_games, self.parts = path, source_name, batch_games, parts
        self._first = self._reader(0, None)
        self.input_size: int | None = self._first.input_size
        self.games_seen = self.games_written = self.games_rejected = 0
        self.raw_bytes_read = 0
        self.damage: str | None = None
        self.sha256: str | None = None
        self._stop = threading.Event()

    def _reader(self, part: int, first_game: int | None) -> _core.PgnReader:
        frames = self.parts[part]
        return _core.PgnReader(
            self.path,
            source_name=self.source_name,
            batch_games=self.batch_games,
            frames=frames,
            first_game=0 if frames[1] == 0 else first_game,
            openings=reader_openings(),
        )

    def _read(self, part: int, first_game: int | None = None) -> _Read:
        reader = self._first if part == 0 else self._reader(part, first_game)
        read = _Read(reader=reader)
        for item in reader:
            if self._stop.is_set():  # the input ended, or was damaged, before this part
                break
            read.items.append(item)
        return read

    def __iter__(self) -> Iterator[Item]:
        with ThreadPoolExecutor(READERS + 1, thread_name_prefix="frame-parts") as pool:
            checksum = pool.submit(file_sha256, self.path, self._stop)
            pending: dict[int, Future[_Read]] = {}
            try:
                yield from self._in_order(pool, pending)
                # As a whole read: no checksum of an input read only up to its damage.
                if self.damage is None:
                    self.sha256 = checksum.result()
            finally:
                self._stop.set()
                for future in pending.values():
                    future.cancel()

    def _in_order(self, pool: ThreadPoolExecutor, pending: dict[int, Future[_Read]]) -> Iterator[Item]:
        for part in range(min(READERS, len(self.parts))):
            pending[part] = pool.submit(self._read, part)
        before: _core.PgnReader | None = None
        for part in range(len(self.parts)):
            if before is not None and not input_goes_on(before):
                return
            read = pending.pop(part).result()
            if before is not None and not starts_where_stopped(before, read.reader):
                read = self._read(part, first_game=before.stopped_at)
            if part + READERS < len(self.parts):
                pending[part + READERS] = pool.submit(self._read, part + READERS)
            yield from read.items
            before = read.reader
            self._add(before)

    def _add(self, reader: _core.PgnReader) -> None:
        self.games_seen += reader.games_seen
        self.games_written += reader.games_written
        self.games_rejected += reader.games_rejected
        self.raw_bytes_read += reader.raw_bytes_read
        self.damage = reader.damage
