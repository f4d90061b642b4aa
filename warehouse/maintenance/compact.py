"""Merging small files (`bgn compact`, `python -m warehouse.maintenance.compact`; the command's options are in
`loaders.compact`).

Monthly loads of a few thousand games (a player's own games) leave many small files per partition; scans
pay per file. In each partition with two or more files under half the target size, those files are
rewritten into files of up to `--target-games` games, and their `plies/` twins likewise: the games in the
same order within each kind (analysed or not), in row groups of one kind (a small file's in one), as a
load writes them. Before it commits, the rewrite is verified: the new files (of both tables) hold the
same number of rows and the same content hash (an order-independent sum of per-row hashes) as the files
they replace, read back from storage. The swap is one commit (see `warehouse.lake.commit`): new files and
the retirement of the old ones are recorded together.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from warehouse.lake.commit import commit, discard, new_op_id, recover, writer_lock
from warehouse.lake.layout import GAMES, plies_twin, staged
from warehouse.lake.location import Lake
from warehouse.lake.parquet import FILE_GAMES, plain_schema, read_parquet, row_group_tables
from warehouse.lake.records import CompactRecord, Records, now
from warehouse.lake.rewrite import RewriteMismatch, RewrittenFile, groups, row_groups

HASH_MODULUS = 2**64


@dataclass
class Digest:
    """Rows and an order-independent content hash of a stream of batches."""

    rows: int = 0
    hash: int = 0

    def add(self, batch: pa.RecordBatch) -> None:
        # Dictionary columns are hashed by value: polars would hash their codes, which differ by file.
        plain = pa.Table.from_batches([batch]).cast(plain_schema(batch.schema))
        hashes = pl.DataFrame(plain).hash_rows().to_numpy()
        self.rows += len(hashes)
        # The sum is modulo 2**64: numpy wraps arrays silently, but a numpy scalar addition that wraps
        # warns of an overflow, so the running total is a Python int.
        self.hash = (self.hash + int(hashes.sum(dtype=np.uint64))) % HASH_MODULUS


def small_files(lake: Lake, target: int) -> dict[str, list[tuple[str, int]]]:
    """Per partition directory, its files under half the target, with their rows, in name order."""
    parts: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for rel in lake.parquet_files(GAMES):
        with read_parquet(lake, rel) as parquet:
            rows = parquet.metadata.num_rows
        if rows < target // 2:
            parts[rel.rsplit("/", 1)[0]].append((rel, rows))
    return {part: files for part, files in parts.items() if len(files) >= 2}


def batches(lake: Lake, files: Iterable[str]) -> Iterable[pa.RecordBatch]:
    """The rows of `files`, a row group at a time (`row_group_tables`)."""
    for rel in files:
        for group in row_group_tables(lake, rel):
            yield from group.to_batches()


def rewrite(lake: Lake, op_id: str, part: str, n: int, files: list[str]) -> tuple[str, int, Digest, int]:
    """Writes `files` into one staged file and their `plies/` twins into its twin (`RewrittenFile`: as a
    load writes them), verified (below); returns its final path, rows, the sources' digest and the plies'
    rows."""
    final = f"{part}/compact-{op_id}-{n}.parquet"
    targets = staged(op_id, final), staged(op_id, plies_twin(final))
    out = RewrittenFile(lake, *targets)
    sources = Digest(), Digest()
    try:
        for games, plies in row_groups(lake, files):
            for digest, table in zip(sources, (games, plies), strict=True):
                for batch in table.to_batches():
                    digest.add(batch)
            out.add(games, plies)
        out.close()
    except BaseException:
        out.abandon()
        raise
    for target, source in zip(targets, sources, strict=True):
        written = Digest()
        for batch in batches(lake, [target]):
            written.add(batch)
        if (written.rows, written.hash) != (source.rows, source.hash):
            raise RewriteMismatch(f"{target}: rewritten rows differ from the {len(files)} files they replace")
    return final, sources[0].rows, sources[0], sources[1].rows


@dataclass
class Plan:
    """What a compaction merges: per partition directory, groups of files that each become one file."""

    groups: dict[str, list[list[str]]]

    @property
    def merges(self) -> int:
        return sum(len(g) for g in self.groups.values())


def plan(lake: Lake, target: int) -> Plan:
    """The merges that would bring every partition's small files to files of up to `target` games."""
    found = {part: groups(files, target) for part, files in small_files(lake, target).items()}
    return Plan({part: g for part, g in found.items() if g})


def compact(lake: Lake, target: int = FILE_GAMES, dry_run: bool = False) -> Plan | CompactRecord:
    """Compacts every partition with small files in one commit; returns the committed record, or (with
    `dry_run`, or when there is nothing to merge) the plan, changing nothing."""
    with writer_lock(lake):
        recover(lake)
        Records.read(lake)  # a damaged record leaves what is committed unknown: refuse to rewrite files
        todo = plan(lake, target)
        if not todo.merges or dry_run:
            return todo
        record = CompactRecord(load_id=new_op_id(), started=now())
        try:
            for part, part_groups in todo.groups.items():
                for n, files in enumerate(part_groups, 1):
                    final, rows, digest, ply_rows = rewrite(lake, record.load_id, part, n, files)
                    record.file_rows[final] = rows
                    record.ply_rows[plies_twin(final)] = ply_rows
                    record.removes += [*files, *map(plies_twin, files)]
                    record.content[final] = f"{digest.rows}:{digest.hash:016x}"
        except BaseException:
            discard(lake, record.load_id)
            raise
        record.written()
        commit(lake, record, subject="compaction")
        return record


if __name__ == "__main__":
    # `python -m warehouse.maintenance.compact`, as the docs have it; the command itself is in loaders/.
    from loaders.compact import main

    sys.exit(main())
