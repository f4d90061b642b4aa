"""The lake as BGN JSON-lines, bz2, laid out as the BGN archive:
``<out>/<type>/<year>/<month>/G.<n>.<type>.json.bz2``.

One game a line, BGN's names, absent values omitted (never null); the shape is docs/exports.md and the
JSON Schema docs/bgn.schema.json. DuckDB writes each line from a batch of games (see `export_sql`); only
games with variations (rare outside annotated collections) are finished in Python, which nests their
alternate lines into the moves they replace.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from warehouse import export_sql
from warehouse.export_out import OutputFile, output_location, staged_directory, thread_pool
from warehouse.lake.layout import Partition
from warehouse.lake.location import Lake
from warehouse.lake_scan import ALL, Selection, grouped, scan

GAMES_PER_FILE = 200_000
EMPTY_ANNOTATION = "{}"
COLUMNS = [
    "type", "game_id", "site", "event", "round", "datetime", "result", "termination", "time_control",
    "opening", "players", "variant", "start_fen", "comment", "moves", "variations",
]  # fmt: skip


def connect() -> duckdb.DuckDBPyConnection:
    return export_sql.connect("json")


def json_lines(con: duckdb.DuckDBPyConnection, batch: pa.Table) -> list[str]:
    """One BGN JSON text per game of `batch` (which holds `COLUMNS`), in order."""
    lines: list[str] = export_sql.run(con, batch, "json_lines").column("line").to_pylist()
    branching = pc.indices_nonzero(pc.greater(pc.list_value_length(batch.column("variations")), 0))
    if len(branching):
        parts = export_sql.run(con, batch.take(branching), "json_parts").to_pylist()
        for i, game in zip(branching.to_pylist(), parts, strict=True):
            lines[i] = game["head"] + assemble(game["mainline"], game["variations"]) + "}"
    return lines


def assemble(mainline: list[dict[str, Any]], variations: list[dict[str, Any]]) -> str:
    """The `moves` array of a game with variations: each line goes, as `{"alt": [line, ...]}` in `a`, on
    the move it replaces; a line's starting comment is `{"precomment": ...}` in its first move's `a`."""
    children = export_sql.branches(variations)

    def pieces(line: export_sql.Line) -> list[str | export_sql.Line]:
        out: list[str | export_sql.Line] = ["["]
        for ply, part in enumerate(line["moves"]):
            extra = [] if part["ann"] == EMPTY_ANNOTATION else [part["ann"]]
            if ply == 0 and line["comment"]:
                extra.append('{"precomment":' + line["comment"] + "}")
            alts = children.get((line["id"], ply), [])
            out.append(("," if ply else "") + part["head"])
            if extra or alts:
                out.append(',"a":[' + ",".join(extra))
                if alts:
                    out.append(("," if extra else "") + '{"alt":[')
                    for n, alt in enumerate(alts):
                        out.extend([",", alt] if n else [alt])
                    out.append("]}")
                out.append("]")
            out.append("}")
        out.append("]")
        return out

    return "".join(export_sql.unfold({"id": 0, "moves": mainline, "comment": None}, pieces))


@dataclass
class ExportResult:
    """What an export wrote: games, files (paths on their filesystem) and their total size."""

    games: int = 0
    files: list[str] = field(default_factory=list)
    bytes: int = 0


class ArchiveWriter:
    """Writes lines into ``<root>/<type>/<year>/<month>/G.<n>.<type>.json.bz2``, `games_per_file` a file;
    `names` are the files' paths under `root`. `shown` names the archive in messages."""

    def __init__(
        self, fs: pafs.FileSystem, root: str, games_per_file: int, pool: ThreadPoolExecutor, shown: str
    ):
        self.fs, self.root, self.games_per_file, self.pool = fs, root, games_per_file, pool
        self.shown = shown
        self.games = self.bytes = 0
        self.names: list[str] = []
        self.file: OutputFile | None = None
        self.partition: Partition | None = None
        self.in_file = 0
        self.numbers: dict[Partition, int] = {}

    def write(self, partition: Partition, lines: list[str]) -> None:
        start = 0
        while start < len(lines):
            if self.file is None or partition != self.partition or self.in_file >= self.games_per_file:
                self._next_file(partition)
            assert self.file is not None
            take = lines[start : start + self.games_per_file - self.in_file]
            self.file.write(("\n".join(take) + "\n").encode())
            self.in_file += len(take)
            self.games += len(take)
            start += len(take)

    def _next_file(self, partition: Partition) -> None:
        self.close()
        n = self.numbers[partition] = self.numbers.get(partition, -1) + 1
        kind, year, month = partition
        name = f"{kind}/{year}/{month}/G.{n}.{kind}.json.bz2"
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
) -> ExportResult:
    """Writes the selected games of `lake` as BGN JSON-lines under `out` (local or s3://), which must be
    empty or absent. Streams group by group of batches (bounded memory); bz2 is compressed on every core.

    The files are staged out of `out` and published at the end (see `export_out.staged_directory`): an
    export that fails or is interrupted leaves `out` as it was; one killed leaves a staging folder the
    next export into `out` clears.

    :raises OutputError: when `out` is a file, holds files, is inside `lake`, or another export is writing
        it.
    :raises LakeError: when `lake` is not a lake, or a non-empty `selection` matches none of its partitions.
    """
    if games_per_file < 1:
        raise ValueError(f"games per file must be at least 1, got {games_per_file}")
    batches = scan(lake, COLUMNS, selection)  # the lake's errors before any output is made
    fs, root = output_location(out, lake)
    staging = staged_directory(fs, root, str(out))
    con = connect()
    try:
        with thread_pool() as pool:
            writer = ArchiveWriter(fs, staging.root, games_per_file, pool, str(out))
            try:
                for group in grouped(batches):
                    lines = json_lines(con, group.table)
                    for partition, start, stop in group.spans:
                        writer.write(partition, lines[start:stop])
                writer.close()
            finally:
                writer.abort()
        staging.publish()
    except BaseException:
        staging.discard()
        raise
    return ExportResult(writer.games, [f"{root}/{name}" for name in writer.names], writer.bytes)
