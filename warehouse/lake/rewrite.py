"""Rewriting the lake's files: the row groups of `games/` files read with their plies in step, and written
into a new `games/` file and its `plies/` twin as a load writes them. Compaction
(`warehouse.maintenance.compact`) and a load merging its reopened partitions (`warehouse.ingest.merge`)
both rewrite files so, packing a partition's small files (`groups`).

A rewritten file holds its games in row groups of one kind, analysed or not (`by_analysis`), each kind in
the order read, of at most `ROW_GROUP_GAMES` games or `ROW_GROUP_BYTES` (`row_group_full`); a small file's
all in one (`in_one_row_group`), the others then the analysed games; each games row group with a plies row
group of the same games. Memory: the row group read and one pending row group of each kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from warehouse.lake.layout import plies_twin
from warehouse.lake.location import Lake
from warehouse.lake.parquet import (
    LakeWriter,
    by_analysis,
    in_one_row_group,
    open_parquet_writer,
    read_parquet,
    row_group_full,
    row_group_tables,
)


class RewriteMismatch(RuntimeError):
    """Files read or rewritten do not hold the rows they should: nothing is committed."""


def row_groups(lake: Lake, files: Iterable[str]) -> Iterator[tuple[pa.Table, pa.Table]]:
    """Each row group of the `games/` files, in order, with the plies of its games (read from the twin in
    step: a file's plies are its games' in the same order)."""
    for rel in files:
        with read_parquet(lake, plies_twin(rel)) as plies_file:
            plies = plies_file.iter_batches(batch_size=1 << 16)
            held: list[pa.RecordBatch] = []
            for group in row_group_tables(lake, rel):
                wanted = pc.sum(group["n_plies"]).as_py() or 0
                while sum(b.num_rows for b in held) < wanted and (batch := next(plies, None)) is not None:
                    held.append(batch)
                joined = pa.Table.from_batches(held, plies_file.schema_arrow)
                if joined.num_rows < wanted:
                    raise RewriteMismatch(f"{plies_twin(rel)}: fewer plies than its games' n_plies")
                yield group, joined.slice(0, wanted)
                held = joined.slice(wanted).to_batches()
            if held or next(plies, None) is not None:
                raise RewriteMismatch(f"{plies_twin(rel)}: more plies than its games' n_plies")


def groups(files: list[tuple[str, int]], target: int) -> list[list[str]]:
    """Consecutive files packed into groups of at most `target` rows; single files are left alone."""
    out: list[list[str]] = [[]]
    rows = 0
    for rel, n in files:
        if out[-1] and rows + n > target:
            out.append([])
            rows = 0
        out[-1].append(rel)
        rows += n
    return [g for g in out if len(g) >= 2]


@dataclass
class _Pending:
    """Games of one kind, with their plies, waiting to be written as one row group."""

    games: list[pa.Table] = field(default_factory=list)
    plies: list[pa.Table] = field(default_factory=list)
    rows: int = 0
    bytes: int = 0

    def add(self, games: pa.Table, plies: pa.Table) -> None:
        self.games.append(games)
        self.plies.append(plies)
        self.rows += games.num_rows
        self.bytes += games.nbytes + plies.nbytes

    def full(self) -> bool:
        return row_group_full(self.rows, self.bytes)

    def then(self, other: _Pending) -> _Pending:
        """These games, then `other`'s, as one row group."""
        games, plies = self.games + other.games, self.plies + other.plies
        return _Pending(games, plies, self.rows + other.rows, self.bytes + other.bytes)


class RewrittenFile:
    """A `games/` file and its `plies/` twin (at `paths` in the lake: final or staged) written from row
    groups of games with their plies (of any kinds, as `row_groups` reads them), as a load writes them
    (above). The files are opened with the first row group's schemas; `close` writes what is pending."""

    def __init__(self, lake: Lake, *paths: str):
        self.lake, self.paths = lake, paths
        self.rows = 0  # games written so far
        self._out: tuple[LakeWriter, LakeWriter] | None = None
        self._pending = {False: _Pending(), True: _Pending()}

    def add(self, games: pa.Table, plies: pa.Table) -> None:
        if self._out is None:
            games_out = open_parquet_writer(self.lake, self.paths[0], games.schema)
            try:
                plies_out = open_parquet_writer(self.lake, self.paths[1], plies.schema)
            except BaseException:
                games_out.abandon()
                raise
            self._out = games_out, plies_out
        plies_by_kind = dict(by_analysis(plies, "analysed"))
        for analysed, kind_games in by_analysis(games):
            pending = self._pending[analysed]
            # A kind whose games have no move has no plies row either.
            pending.add(kind_games, plies_by_kind.get(analysed, plies.slice(0, 0)))
            if pending.full():
                self._pending[analysed] = _Pending()
                self._write(pending)

    def close(self) -> None:
        """Writes the pending games (in one row group when few: `in_one_row_group`) and closes the files.

        :raises RewriteMismatch: when no row group was added: there is no file to write.
        """
        if self._out is None:
            raise RewriteMismatch(f"{self.lake.location}/{self.paths[0]}: no row group to write")
        others, analysed = self._pending[False], self._pending[True]
        self._pending = {False: _Pending(), True: _Pending()}
        if in_one_row_group(self.rows, others.rows, analysed.rows):
            self._write(others.then(analysed))
        else:
            self._write(others)
            self._write(analysed)
        for writer in self._out:
            writer.close()

    def abandon(self) -> None:
        """Closes the files after a failure, whatever it raises: they are dropped."""
        for writer in self._out or ():
            writer.abandon()

    def _write(self, pending: _Pending) -> None:
        if not pending.rows:
            return
        assert self._out is not None
        games, plies = pa.concat_tables(pending.games), pa.concat_tables(pending.plies)
        for writer, table in zip(self._out, (games, plies), strict=True):
            writer.write_table(table, row_group_size=max(table.num_rows, 1))
        self.rows += games.num_rows
