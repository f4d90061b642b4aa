"""The lake's layout on disk and the writer that fills its partitions.

    <lake>/games/type=<type>/year=<yyyy>/month=<m>/<input>-<load>-<n>.parquet
    <lake>/rejects/<input>-<load>.jsonl
    <lake>/_loads/<load>.json

Every file is written under a hidden temporary name (``.<name>.tmp``, which DuckDB's and Spark's
globs skip) and renamed into place only when the whole input has loaded: a crash or Ctrl-C leaves no
partial file visible.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

PARTITION_COLUMNS = ("type", "year", "month")

# Row groups big enough for fast scans, small enough to keep a load's memory bounded.
ROW_GROUP_BYTES = 64 << 20
ROW_GROUP_GAMES = 50_000
PENDING_BYTES = 4 * ROW_GROUP_BYTES
FILE_GAMES = 1_000_000

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


def default_lake() -> Path:
    """``$CHESS_LAKE``, else ``./lake``."""
    return Path(os.environ.get("CHESS_LAKE", "lake"))


@dataclass(frozen=True)
class Lake:
    root: Path

    @property
    def games(self) -> Path:
        return self.root / "games"

    @property
    def rejects(self) -> Path:
        return self.root / "rejects"

    @property
    def loads(self) -> Path:
        return self.root / "_loads"

    def partition(self, kind: str, year: int, month: int) -> Path:
        return self.games / f"type={kind}" / f"year={year}" / f"month={month}"


def temp_name(final: Path) -> Path:
    return final.with_name(f".{final.name}.tmp")


@dataclass
class _PartitionFile:
    """One open Parquet file of a partition, with its pending row group."""

    final: Path
    writer: pq.ParquetWriter
    pending: list[pa.RecordBatch] = field(default_factory=list)
    pending_rows: int = 0
    pending_bytes: int = 0
    rows: int = 0


class PartitionWriter:
    """Splits batches by partition and writes zstd Parquet files, renamed into place on `commit`."""

    def __init__(self, lake: Lake, file_stem: str):
        self.lake = lake
        self.file_stem = file_stem
        self._open: dict[tuple[str, int, int], _PartitionFile] = {}
        self._closed: list[Path] = []
        self._counts: dict[tuple[str, int, int], int] = {}
        self.rows = 0

    def write(self, batch: pa.RecordBatch) -> None:
        """Adds a batch of games of one partition (the Rust reader emits them so)."""
        if batch.num_rows == 0:
            return
        key = tuple(batch.column(name)[0].as_py() for name in PARTITION_COLUMNS)
        part = batch.drop_columns(list(PARTITION_COLUMNS))
        f = self._open.get(key) or self._start(key, part.schema)
        f.pending.append(part)
        f.pending_rows += part.num_rows
        f.pending_bytes += part.nbytes
        self.rows += batch.num_rows
        if f.pending_rows >= ROW_GROUP_GAMES or f.pending_bytes >= ROW_GROUP_BYTES:
            self._flush(f)
            if f.rows >= FILE_GAMES:
                self._close(key)
        elif sum(o.pending_bytes for o in self._open.values()) >= PENDING_BYTES:
            # Many partitions at once (an archive spanning decades): smaller row groups, bounded memory.
            self._flush(max(self._open.values(), key=lambda o: o.pending_bytes))

    def _start(self, key: tuple[str, int, int], schema: pa.Schema) -> _PartitionFile:
        n = self._counts.get(key, 0) + 1
        self._counts[key] = n
        final = self.lake.partition(*key) / f"{self.file_stem}-{n}.parquet"
        final.parent.mkdir(parents=True, exist_ok=True)
        writer = pq.ParquetWriter(
            temp_name(final),
            schema,
            compression="zstd",
            compression_level=3,
            # Min/max statistics where they prune scans (dates, ratings, ids); per-move columns
            # would pay for them on every ply and never use them.
            write_statistics=STATISTICS_COLUMNS,
            # `clk` is decimal(9, 1): INT32 storage instead of fixed-size binary.
            store_decimal_as_integer=True,
        )
        f = _PartitionFile(final, writer)
        self._open[key] = f
        return f

    def _flush(self, f: _PartitionFile) -> None:
        if f.pending:
            f.writer.write_table(pa.Table.from_batches(f.pending), row_group_size=f.pending_rows)
            f.rows += f.pending_rows
            f.pending, f.pending_rows, f.pending_bytes = [], 0, 0

    def _close(self, key: tuple[str, int, int]) -> None:
        f = self._open.pop(key)
        self._flush(f)
        f.writer.close()
        self._closed.append(f.final)

    def commit(self) -> list[Path]:
        """Finishes every file and renames them into the lake; returns their paths."""
        for key in list(self._open):
            self._close(key)
        for final in self._closed:
            os.replace(temp_name(final), final)
        return self._closed

    def abort(self) -> None:
        """Drops everything written so far."""
        for f in self._open.values():
            f.writer.close()
            self._closed.append(f.final)
        self._open.clear()
        for final in self._closed:
            temp_name(final).unlink(missing_ok=True)
        self._closed = []


def write_atomic_text(path: Path, lines: Iterable[str]) -> None:
    """Writes text lines to `path` through a temporary name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    with open(tmp, "w", encoding="utf-8") as out:
        for line in lines:
            out.write(line)
    os.replace(tmp, path)


def write_json(path: Path, record: dict) -> None:
    write_atomic_text(path, [json.dumps(record, indent=2, ensure_ascii=False) + "\n"])
