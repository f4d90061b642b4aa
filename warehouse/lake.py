"""The lake's layout, on a local disk or S3, and the writer that fills its partitions.

    <lake>/games/type=<type>/year=<yyyy>/month=<m>/<input>-<load>-<n>.parquet
    <lake>/rejects/<input>-<load>.jsonl
    <lake>/_loads/<load>.json              the commit record of a load (or a compaction)
    <lake>/_staging/<load>/...             files of an operation not yet published, same relative paths

Files are written under `_staging/`, which no reader's `games/**/*.parquet` glob reaches, and moved to their
final place only after the operation's record has been written (see `warehouse.commit`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from warehouse.storage import StorageError, lake_filesystem

PARTITION_COLUMNS = ("type", "year", "month")
GAMES, REJECTS, LOADS, STAGING = "games", "rejects", "_loads", "_staging"

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

Key = tuple[str, int, int]


def default_lake() -> str:
    """``$CHESS_LAKE``, else ``./lake``."""
    return os.environ.get("CHESS_LAKE") or "lake"


class OneLineParser(argparse.ArgumentParser):
    """A command's options: a usage error is one line on stderr and exit 2, like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def add_lake_argument(parser: argparse.ArgumentParser) -> None:
    """`--lake`, the same for every command."""
    parser.add_argument(
        "--lake",
        default=None,
        help="lake directory or s3://bucket/prefix (default: $CHESS_LAKE, else ./lake)",
    )


def count_option(low: int, high: int) -> Callable[[str], int]:
    """An argparse `type` for a whole number from `low` to `high`: anything else is a usage error (one
    line, exit 2), never clamped or passed on to fail later."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {low:,} to {high:,}")
        return value

    return parse


def partition_dir(kind: str, year: int, month: int) -> str:
    """A partition's directory relative to the lake's root."""
    return f"{GAMES}/type={kind}/year={year}/month={month}"


def staged(op_id: str, rel: str) -> str:
    """Where operation `op_id` writes the file that will live at `rel`."""
    return f"{STAGING}/{op_id}/{rel}"


@dataclass(frozen=True)
class Lake:
    """A lake's root on a pyarrow filesystem; every path below is relative to the root, `/`-separated."""

    fs: pafs.FileSystem
    root: str
    location: str

    @classmethod
    def open(cls, location: str | os.PathLike[str]) -> Lake:
        """A lake to write: it may not exist yet, but a local one must not be a file.

        :raises StorageError: for an unusable location (see `lake_filesystem`) or a file.
        """
        fs, root = lake_filesystem(location)
        lake = cls(fs, root, os.fsdecode(location))
        if lake.local and fs.get_file_info(root).type == pafs.FileType.File:
            raise StorageError(f"{lake.location}: is a file, not a lake directory")
        return lake

    @classmethod
    def open_existing(cls, location: str | os.PathLike[str]) -> Lake:
        """A lake to check or compact: it must hold a `_loads/` or `games/` folder (else it is a typo or
        the wrong directory, and reporting it "ok" or "nothing to do" would mislead).

        :raises StorageError: when `location` is no lake.
        """
        lake = cls.open(location)
        if not lake.exists(""):
            raise StorageError(f"{lake.location}: no such lake")
        if not (lake.exists(LOADS) or lake.exists(GAMES)):
            raise StorageError(f"{lake.location}: not a lake (no {LOADS}/ or {GAMES}/ in it)")
        return lake

    @property
    def local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def exists(self, rel: str) -> bool:
        return self.fs.get_file_info(self.path(rel)).type != pafs.FileType.NotFound

    def files(self, rel: str) -> list[pafs.FileInfo]:
        """Files below `rel` (recursively), none when it does not exist."""
        selector = pafs.FileSelector(self.path(rel), recursive=True, allow_not_found=True)
        return [i for i in self.fs.get_file_info(selector) if i.type == pafs.FileType.File]

    def relative(self, path: str) -> str:
        return posixpath.relpath(path, self.root)

    def make_parent(self, rel: str) -> None:
        # S3 has no directories: creating one would only leave a marker object behind.
        if self.local:
            self.fs.create_dir(posixpath.dirname(self.path(rel)), recursive=True)

    def read_text(self, rel: str) -> str:
        with self.fs.open_input_stream(self.path(rel)) as f:
            return f.read().decode("utf-8")

    def write_text(self, rel: str, text: str) -> None:
        """Writes `rel` so that a reader sees the old content or the whole new one, never a part: through
        a temporary name and a rename on a local disk; on S3 an object appears only once its upload is
        complete."""
        self.make_parent(rel)
        target = self.path(rel)
        tmp = f"{posixpath.dirname(target)}/.{posixpath.basename(target)}.tmp" if self.local else target
        with self.fs.open_output_stream(tmp) as out:
            out.write(text.encode("utf-8"))
        if tmp != target:
            self.fs.move(tmp, target)

    def move(self, src: str, dst: str) -> None:
        """A rename on a local disk; a server-side copy then a delete on S3."""
        self.make_parent(dst)
        self.fs.move(self.path(src), self.path(dst))

    def delete(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.delete_file(self.path(rel))

    def delete_dir(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.delete_dir(self.path(rel))


def write_json(lake: Lake, rel: str, record: dict) -> None:
    lake.write_text(rel, json.dumps(record, indent=2, ensure_ascii=False) + "\n")


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
        self._open: dict[Key, _PartitionFile] = {}  # least recently written first
        self._counts: dict[Key, int] = {}
        self.file_rows: dict[str, int] = {}  # final path → rows, for files already closed
        self.rows = 0

    def write(self, key: Key, part: pa.RecordBatch) -> None:
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

    def _start(self, key: Key, schema: pa.Schema) -> _PartitionFile:
        if len(self._open) >= self.max_open:
            self._close(next(iter(self._open)))
        n = self._counts.get(key, 0) + 1
        self._counts[key] = n
        final = f"{partition_dir(*key)}/{self.file_stem}-{n}.parquet"
        return _PartitionFile(final, open_parquet_writer(self.lake, staged(self.op_id, final), schema))

    def _flush(self, f: _PartitionFile) -> None:
        if f.pending:
            f.writer.write_table(pa.Table.from_batches(f.pending), row_group_size=f.pending_rows)
            f.rows += f.pending_rows
            f.pending, f.pending_rows, f.pending_bytes = [], 0, 0

    def _close(self, key: Key) -> None:
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
