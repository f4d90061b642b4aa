"""The lake as BGN JSON-lines, laid out as the BGN archive:
``<out>/<type>/<year>/<month>/G.<n>.<type>.json.bz2`` (or ``.json.zst``).

One game a line, BGN's names, absent values omitted (never null); the shape is docs/exports.md and the
JSON Schema docs/bgn.schema.json. The Rust core writes a batch's lines (`_core.json_lines`,
crates/bgn-core/src/export_json.rs), variations nested into the moves they replace: one buffer a batch, no
Python object per game or move. bz2 is compressed on every core (`output.Bz2Writer`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from warehouse import _core
from warehouse.exports.lake_scan import ALL, ScanProgress, Selection, scan
from warehouse.lake.layout import Partition
from warehouse.lake.location import Lake
from warehouse.output import OutputFile, output_location, staged_directory, thread_pool

GAMES_PER_FILE = 200_000
# How the archive's files are compressed: the suffix names it (see `output.compressor`).
COMPRESSIONS = ("bz2", "zst")
COLUMNS = [
    "type", "game_id", "site", "event", "round", "datetime", "result", "termination", "time_control",
    "opening", "players", "variant", "start_fen", "comment", "moves", "variations",
]  # fmt: skip


def json_lines(batch: pa.RecordBatch) -> pa.Array:
    """The BGN JSON line of each game of `batch` (which holds `COLUMNS`), each ending in a newline."""
    return pa.array(_core.json_lines(batch))


def text_ends(texts: pa.Array) -> np.ndarray:
    """Where each text of the large_string array `texts` starts and ends in its data buffer: n + 1 offsets."""
    return np.frombuffer(texts.buffers()[1], dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]


@dataclass
class ExportResult:
    """What an export wrote: games, files (paths on their filesystem) and their total size."""

    games: int = 0
    files: list[str] = field(default_factory=list)
    bytes: int = 0


class ArchiveWriter:
    """Writes lines into ``<root>/<type>/<year>/<month>/G.<n>.<type>.json.<compression>``,
    `games_per_file` a file; `names` are the files' paths under `root`. `shown` names the archive in
    messages."""

    def __init__(
        self,
        fs: pafs.FileSystem,
        root: str,
        games_per_file: int,
        pool: ThreadPoolExecutor,
        shown: str,
        compression: str = "bz2",
    ):
        self.fs, self.root, self.games_per_file, self.pool = fs, root, games_per_file, pool
        self.shown, self.compression = shown, compression
        self.games = self.bytes = 0
        self.names: list[str] = []
        self.file: OutputFile | None = None
        self.partition: Partition | None = None
        self.in_file = 0
        self.numbers: dict[Partition, int] = {}

    def write(self, partition: Partition, lines: pa.Array) -> None:
        """Writes `lines` (`json_lines`: a large_string array, each line ending in a newline)."""
        ends, data = text_ends(lines), memoryview(lines.buffers()[2])
        start = 0
        while start < len(lines):
            if self.file is None or partition != self.partition or self.in_file >= self.games_per_file:
                self._next_file(partition)
            assert self.file is not None
            stop = min(len(lines), start + self.games_per_file - self.in_file)
            self.file.write(data[ends[start] : ends[stop]])
            self.in_file += stop - start
            self.games += stop - start
            start = stop

    def _next_file(self, partition: Partition) -> None:
        self.close()
        n = self.numbers[partition] = self.numbers.get(partition, -1) + 1
        kind, year, month = partition
        name = f"{kind}/{year}/{month}/G.{n}.{kind}.json.{self.compression}"
        path = f"{self.root}/{name}"
        file = OutputFile(self.fs, path, self.pool, f"{self.shown}/{name}")
        self.file, self.partition, self.in_file = file, partition, 0
        self.names.append(name)

    def close(self) -> None:
        if self.file is not None:
            file, self.file = self.file, None
            self.bytes += file.close()

    def abort(self) -> None:
        if self.file is not None:
            file, self.file = self.file, None
            file.abort()


def export_json(
    lake: Lake,
    out: str | os.PathLike[str],
    games_per_file: int = GAMES_PER_FILE,
    selection: Selection = ALL,
    compression: str = "bz2",
    progress: ScanProgress | None = None,
) -> ExportResult:
    """Writes the selected games of `lake` as BGN JSON-lines under `out` (local or s3://), which must be
    empty or absent, compressed as `compression` (one of `COMPRESSIONS`). Streams batch by batch (bounded
    memory); bz2 and zstd are compressed on every core. `progress`: as `lake_scan.scan` calls it.

    The files are staged out of `out` and published at the end (see `output.staged_directory`): an
    export that fails or is interrupted leaves `out` as it was; one killed leaves a staging folder the
    next export into `out` clears.

    :raises OutputError: when `out` is a file, holds files, is inside `lake`, or another export is writing
        it.
    :raises LakeError: when `lake` is not a lake, or a non-empty `selection` matches none of its partitions.
    """
    if games_per_file < 1:
        raise ValueError(f"games per file must be at least 1, got {games_per_file}")
    if compression not in COMPRESSIONS:
        raise ValueError(f"compression must be one of {COMPRESSIONS}, got {compression!r}")
    batches = scan(lake, COLUMNS, selection, progress=progress)  # the lake's errors before any output
    fs, root = output_location(out, lake)
    staging = staged_directory(fs, root, str(out))
    try:
        with thread_pool() as pool:
            writer = ArchiveWriter(fs, staging.root, games_per_file, pool, str(out), compression)
            try:
                for partition, batch in batches:
                    writer.write(partition, json_lines(batch))
                writer.close()
            finally:
                writer.abort()
        staging.publish()
    except BaseException:
        staging.discard()
        raise
    return ExportResult(writer.games, [f"{root}/{name}" for name in writer.names], writer.bytes)
