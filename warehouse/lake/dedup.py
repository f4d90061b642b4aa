"""`game_id` is unique in the lake: the id index that a load checks each game against.

A game's partition (type, year, month) follows from its own tags, so a game seen again lands in the same
partition: the index is per partition, built on the partition's first game in a load from the `game_id`
column of the partition's files (a cheap column: ~0.1 s per million games), and grows with the load's own
games. Ids are kept as sorted uint64 arrays, exactly, not hashed: a lichess id is 8 ASCII bytes (one
uint64), a content id 16 hex digits (one uint64 once decoded); they live in separate arrays, as their
values could coincide. Any other id (none today) falls back to a Python set. Memory: 8 bytes per game of
the partitions a load touches.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import numpy as np
import pyarrow as pa

from warehouse.lake.layout import Partition
from warehouse.lake.location import Lake
from warehouse.lake.parquet import read_columns

_HEX = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _HEX[_c] = 10 + _i
_SHIFTS = np.arange(60, -1, -4, dtype=np.uint64)


def encode_ids(ids: pa.Array) -> tuple[dict[int, np.ndarray], np.ndarray, list[str]]:
    """Ids as uint64 keys per kind (8: lichess, 16: content hash), the kind of each row (0 for other ids)
    and the other ids' strings."""
    ids = ids.cast(pa.large_string())
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int64)[ids.offset : ids.offset + len(ids) + 1]
    data = np.frombuffer(ids.buffers()[2] or b"", dtype=np.uint8)
    lengths = np.diff(offsets)
    kinds = np.zeros(len(ids), dtype=np.int8)
    keys: dict[int, np.ndarray] = {}
    for width in (8, 16):
        rows = np.flatnonzero(lengths == width)
        if not len(rows):
            keys[width] = np.empty(0, dtype=np.uint64)
            continue
        chars = data[offsets[rows][:, None] + np.arange(width)]
        if width == 8:
            ok = np.ones(len(rows), dtype=bool)
            values = np.ascontiguousarray(chars).view(np.uint64).ravel()
        else:
            nibbles = _HEX[chars]
            ok = (nibbles != 255).all(axis=1)
            values = (nibbles.astype(np.uint64) << _SHIFTS).sum(axis=1, dtype=np.uint64)
        kinds[rows[ok]] = width
        keys[width] = values[ok]
    others = [ids[int(i)].as_py() for i in np.flatnonzero(kinds == 0)]
    return keys, kinds, others


class SortedIds:
    """A growing set of integers (uint64, or int64) as a few sorted runs, merged as they pile up (each run at
    least twice the next one), so that lookups stay O(log n) per id and adding stays O(log n) amortised."""

    def __init__(self) -> None:
        self.runs: list[np.ndarray] = []

    def contains(self, values: np.ndarray) -> np.ndarray:
        found = np.zeros(len(values), dtype=bool)
        for run in self.runs:
            at = np.minimum(np.searchsorted(run, values), len(run) - 1)
            found |= run[at] == values
        return found

    def add(self, values: np.ndarray) -> None:
        if not len(values):
            return
        self.runs.append(np.sort(values))
        while len(self.runs) > 1 and 2 * len(self.runs[-1]) >= len(self.runs[-2]):
            last = self.runs.pop()
            self.runs[-1] = np.sort(np.concatenate([self.runs[-1], last]), kind="stable")


class IdSet:
    """Exact set of game ids."""

    def __init__(self) -> None:
        self.sorted = {8: SortedIds(), 16: SortedIds()}
        self.others: set[str] = set()

    def add_new(self, ids: pa.Array) -> np.ndarray:
        """Adds the ids not seen before; returns the mask of rows to keep: ids not already in the set,
        first occurrence within `ids`."""
        keys, kinds, others = encode_ids(ids)
        keep = np.zeros(len(ids), dtype=bool)
        for width, index in self.sorted.items():
            values = keys[width]
            _, first = np.unique(values, return_index=True)
            fresh = np.zeros(len(values), dtype=bool)
            fresh[first] = True
            fresh &= ~index.contains(values)
            keep[np.flatnonzero(kinds == width)] = fresh
            index.add(values[fresh])
        for row, text in zip(np.flatnonzero(kinds == 0), others, strict=True):
            if text not in self.others:
                self.others.add(text)
                keep[row] = True
        return keep


class PartitionIndex:
    """The id sets of the partitions a load touches, each read from the partition's files on first use."""

    def __init__(self, lake: Lake, exclude: Iterable[str] = ()):
        self.lake = lake
        self.exclude = set(exclude)  # files the load retires (`--force`): their ids do not count
        self.sets: dict[Partition, IdSet] = {}
        self.read_seconds = 0.0

    def keep(self, partition: Partition, ids: pa.Array) -> np.ndarray:
        """Mask of the games of `partition` to write: ids neither in the lake nor earlier in this load."""
        index = self.sets.get(partition)
        if index is None:
            index = self.sets[partition] = self._read(partition)
        return index.add_new(ids)

    def _read(self, partition: Partition) -> IdSet:
        start = time.perf_counter()
        index = IdSet()
        for info in self.lake.files(partition.dir):
            rel = self.lake.relative(info.path)
            if rel.endswith(".parquet") and rel not in self.exclude:
                column = read_columns(self.lake, rel, ["game_id"])["game_id"]
                index.add_new(column.combine_chunks())
        self.read_seconds += time.perf_counter() - start
        return index
