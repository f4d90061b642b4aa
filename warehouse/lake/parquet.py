"""The lake's Parquet files: their settings, in one place for loads and compaction, and the writer that
splits a load's games into its partitions' files."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.lake.layout import Partition, staged
from warehouse.lake.location import Lake

# Row groups big enough for fast scans, small enough to keep a load's memory bounded.
ROW_GROUP_BYTES = 64 << 20
ROW_GROUP_GAMES = 50_000
PENDING_BYTES = 4 * ROW_GROUP_BYTES
FILE_GAMES = 1_000_000
# Parquet files a load keeps open at once: each costs ~430 KB of buffers and a file descriptor, so an
# archive spanning thousands of months (partitions) would otherwise exhaust memory and `ulimit -n`. Past
# it, the least recently written partition's file is closed; later games of that partition start another
# file (`warehouse.compact` merges them).
MAX_OPEN_FILES = 64

STATISTICS_COLUMNS = [
    "game_id",
    "datetime",
    "result",
    "tc_base",
    "tc_inc",
    "opening.eco",
    "players.list.element.elo",
    "n_plies",
    "source_offset",
]


def open_parquet_writer(lake: Lake, rel: str, schema: pa.Schema) -> pq.ParquetWriter:
    """The lake's Parquet settings, in one place for loads and compaction."""
    lake.make_parent(rel)
    return pq.ParquetWriter(
        lake.path(rel),
        schema,
        filesystem=lake.fs,
        compression="zstd",
        compression_level=3,
        # Min/max statistics where they prune scans (dates, ratings, ids); per-move columns
        # would pay for them on every ply and never use them.
        write_statistics=STATISTICS_COLUMNS,
        # `clk` is decimal(9, 1): INT32 storage instead of fixed-size binary.
        store_decimal_as_integer=True,
    )


@dataclass
class _PartitionFile:
    """One open Parquet file of a partition, with its pending row group."""

    final: str
    writer: pq.ParquetWriter
    pending: list[pa.RecordBatch] = field(default_factory=list)
    pending_rows: int = 0
    pending_bytes: int = 0
    rows: int = 0


class PartitionWriter:
    """Splits batches by partition and writes zstd Parquet files under the operation's staging folder,
    with at most `max_open` files open at once. Memory: `max_open` writers' buffers plus the pending row
    groups, at most `PENDING_BYTES` and one batch."""

    def __init__(self, lake: Lake, op_id: str, file_stem: str, max_open: int = MAX_OPEN_FILES):
        self.lake, self.op_id, self.file_stem, self.max_open = lake, op_id, file_stem, max_open
        self._open: dict[Partition, _PartitionFile] = {}  # least recently written first
        self._counts: dict[Partition, int] = {}
        self.file_rows: dict[str, int] = {}  # final path → rows, for files already closed
        self.rows = 0

    def write(self, key: Partition, part: pa.RecordBatch) -> None:
        """Adds games of partition `key` (`part` without the partition columns)."""
        if part.num_rows == 0:
            return
        f = self._open.pop(key, None) or self._start(key, part.schema)
        self._open[key] = f  # now the most recently written
        f.pending.append(part)
        f.pending_rows += part.num_rows
        f.pending_bytes += part.nbytes
        self.rows += part.num_rows
        if f.pending_rows >= ROW_GROUP_GAMES or f.pending_bytes >= ROW_GROUP_BYTES:
            self._flush(f)
            if f.rows >= FILE_GAMES:
                self._close(key)
        elif sum(o.pending_bytes for o in self._open.values()) >= PENDING_BYTES:
            # Many partitions at once (an archive spanning decades): smaller row groups, bounded memory.
            self._flush(max(self._open.values(), key=lambda o: o.pending_bytes))

    def _start(self, key: Partition, schema: pa.Schema) -> _PartitionFile:
        if len(self._open) >= self.max_open:
            self._close(next(iter(self._open)))
        n = self._counts.get(key, 0) + 1
        self._counts[key] = n
        final = f"{key.dir}/{self.file_stem}-{n}.parquet"
        return _PartitionFile(final, open_parquet_writer(self.lake, staged(self.op_id, final), schema))

    def _flush(self, f: _PartitionFile) -> None:
        if f.pending:
            f.writer.write_table(pa.Table.from_batches(f.pending), row_group_size=f.pending_rows)
            f.rows += f.pending_rows
            f.pending, f.pending_rows, f.pending_bytes = [], 0, 0

    def _close(self, key: Partition) -> None:
        f = self._open.pop(key)
        self._flush(f)
        f.writer.close()
        self.file_rows[f.final] = f.rows

    def finish(self) -> dict[str, int]:
        """Closes every file; returns each file's final path and row count."""
        for key in list(self._open):
            self._close(key)
        return self.file_rows

    def close_quietly(self) -> None:
        """Closes open writers after a failure (their staged files are dropped with the staging folder)."""
        for f in self._open.values():
            with contextlib.suppress(OSError):
                f.writer.close()
        self._open.clear()
