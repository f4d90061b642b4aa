"""A load's reopened partitions merged before it commits: one staged file a partition (up to `FILE_GAMES`).

The writer (`PartitionWriter`) keeps `MAX_OPEN_PARTITIONS` partitions' files open; past it, it closes the
least recently written, and more games of that partition start another file. Inputs that cycle through more
partitions than that (study files named by game id, an archive of decades) leave several small files per
partition, each paying the Parquet footer and dictionaries (~15-20 KB). Before the load commits, the staged
files of each such partition are rewritten into one (more only past `FILE_GAMES` games), with their `plies/`
twins: read a row group at a time by compaction's reader (`compact.row_groups`, each games row group with
the plies of its games), the games in the order the writer wrote them within each kind (analysed or not),
in row groups of one kind of at most `ROW_GROUP_GAMES` games or `ROW_GROUP_BYTES` (a small file's games in
one, `in_one_row_group`, as the writer writes it), each with a plies row group of the same games. Every
merged pair is checked against the writer's counts (games, plies, row groups paired) before the files it
replaces are deleted. All of it happens inside the load's staging folder before its record is written, so
a crash at any moment leaves all of the load or nothing, as for any load.

Not compaction's `rewrite` itself: its content hash of every row, read and read back (polars' `hash_rows`
on the nested columns), took more CPU than the whole load of study files (+5.4 CPU-s on 7.7 for 2,329 games).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import pyarrow as pa

from warehouse.lake.layout import STAGING, plies_twin
from warehouse.lake.location import Lake
from warehouse.lake.parquet import (
    FILE_GAMES,
    ROW_GROUP_BYTES,
    ROW_GROUP_GAMES,
    LakeWriter,
    by_analysis,
    in_one_row_group,
    open_parquet_writer,
    read_parquet,
)
from warehouse.maintenance.compact import CompactionMismatch, groups, row_groups

# The suffix of a merged file in the staging folder until the files it replaces are deleted.
MERGING = ".merging"


def staging_lake(lake: Lake, op_id: str) -> Lake:
    """The staging folder of operation `op_id` seen as a lake: its files at their final paths (`games/…`),
    where compaction's reader finds them."""
    root = f"{STAGING}/{op_id}"
    return Lake(lake.fs, lake.path(root), f"{lake.location}/{root}")


def merge_reopened(
    lake: Lake, op_id: str, file_rows: dict[str, int], ply_rows: dict[str, int], target: int | None = None
) -> tuple[dict[str, int], dict[str, int]]:
    """Merges the staged files of each partition the writer wrote more than one file of (with their
    `plies/` twins) into files of up to `target` games (default `FILE_GAMES`): consecutive files packed,
    as compaction packs them (`compact.groups`), a file the writer closed full left as it is. Returns the
    load's files and their rows (`file_rows`, `ply_rows` as the writer returned them) once merged. A
    merged file takes the name of the first file it replaces. A load that never reopened a partition
    merges nothing.

    :raises CompactionMismatch: when a merged file does not hold the games and plies the writer counted in
        the files it replaces: nothing is committed.
    """
    target = FILE_GAMES if target is None else target
    by_partition: dict[str, list[str]] = defaultdict(list)
    for final in file_rows:
        by_partition[final.rsplit("/", 1)[0]].append(final)
    staging = staging_lake(lake, op_id)
    replaced: dict[str, str] = {}  # each file merged → the file it was merged into
    for files in by_partition.values():
        # In the order the writer started them (`<stem>-<n>.parquet`, one stem a load), but for the files
        # the writer closed full (`FILE_GAMES`), which stay as they are.
        small = sorted((f for f in files if file_rows[f] < target), key=lambda f: (len(f), f))
        for group in groups([(f, file_rows[f]) for f in small], target):
            games, plies = sum(file_rows[f] for f in group), sum(ply_rows[plies_twin(f)] for f in group)
            _merge(staging, group, games, plies)
            replaced.update(dict.fromkeys(group, group[0]))
    if not replaced:
        return file_rows, ply_rows
    # The files replaced go, then each merged pair takes its first one's name.
    for rel in replaced:
        staging.delete(rel)
        staging.delete(plies_twin(rel))
    for rel in set(replaced.values()):
        for name in (rel, plies_twin(rel)):
            staging.move(name + MERGING, name)
    out_files: dict[str, int] = {}
    out_plies: dict[str, int] = {}
    for rel, rows in file_rows.items():
        into = replaced.get(rel, rel)
        out_files[into] = out_files.get(into, 0) + rows
        out_plies[plies_twin(into)] = out_plies.get(plies_twin(into), 0) + ply_rows[plies_twin(rel)]
    return out_files, out_plies


@dataclass
class _Kind:
    """The games of one kind (analysed or not) waiting to be written as one row group, with their plies."""

    games: list[pa.Table] = field(default_factory=list)
    plies: list[pa.Table] = field(default_factory=list)
    rows: int = 0
    bytes: int = 0

    def add(self, games: pa.Table, plies: pa.Table) -> bool:
        """Adds games and their plies; whether the row group is now full."""
        self.games.append(games)
        self.plies.append(plies)
        self.rows += games.num_rows
        self.bytes += games.nbytes + plies.nbytes
        return self.rows >= ROW_GROUP_GAMES or self.bytes >= ROW_GROUP_BYTES

    def take(self, other: _Kind) -> None:
        """Adds `other`'s games and plies after its own, as one row group; empties `other`."""
        self.games += other.games
        self.plies += other.plies
        self.rows += other.rows
        self.bytes += other.bytes
        other.games, other.plies, other.rows, other.bytes = [], [], 0, 0

    def write(self, out: tuple[LakeWriter, LakeWriter]) -> int:
        """Writes the games as one row group and their plies as one, empties itself; returns the games."""
        rows = self.rows
        if rows:
            for writer, parts in zip(out, (self.games, self.plies), strict=True):
                table = pa.concat_tables(parts)
                writer.write_table(table, row_group_size=max(table.num_rows, 1))
        self.games, self.plies, self.rows, self.bytes = [], [], 0, 0
        return rows


def _merge(staging: Lake, files: list[str], games: int, plies: int) -> None:
    """Writes the staged `files` (of one partition, `games/` files with their `plies/` twins) into the
    first one's name + `MERGING`, and its twin's, as the writer writes a file: row groups of one kind, but
    a small file's games in one (`in_one_row_group`: the others, then the analysed); checks that they hold
    `games` games and `plies` plies (the writer's counts), row group for row group paired."""
    target = files[0] + MERGING
    kinds = {False: _Kind(), True: _Kind()}
    out: tuple[LakeWriter, LakeWriter] | None = None
    written = 0
    try:
        for games_group, plies_group in row_groups(staging, files):
            if out is None:
                out = (
                    open_parquet_writer(staging, target, games_group.schema),
                    open_parquet_writer(staging, plies_twin(target), plies_group.schema),
                )
            plies_by_kind = dict(by_analysis(plies_group, "analysed"))
            for kind, kind_games in by_analysis(games_group):
                # A kind whose games have no move has no plies row either.
                kind_plies = plies_by_kind.get(kind, plies_group.slice(0, 0))
                if kinds[kind].add(kind_games, kind_plies):
                    written += kinds[kind].write(out)
        if out is None:
            raise CompactionMismatch(f"{staging.location}/{files[0]}: no row group to merge")
        others, analysed = kinds[False], kinds[True]
        if in_one_row_group(written, others.rows, analysed.rows):
            others.take(analysed)
        others.write(out)
        analysed.write(out)
        for writer in out:
            writer.close()
    except BaseException:
        for writer in out or ():
            writer.abandon()
        raise
    with read_parquet(staging, target) as g, read_parquet(staging, plies_twin(target)) as p:
        written_counts = g.metadata.num_rows, p.metadata.num_rows, g.num_row_groups
        if written_counts != (games, plies, p.num_row_groups):
            raise CompactionMismatch(
                f"{staging.location}/{target}: {written_counts[0]} games, {written_counts[1]} plies in "
                f"{written_counts[2]} and {p.num_row_groups} row groups, merged from {len(files)} files of "
                f"{games} games and {plies} plies"
            )
