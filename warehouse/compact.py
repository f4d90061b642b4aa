"""Merge small files: python -m warehouse.compact [--lake DIR|s3://…] [--target-games N] [--dry-run]

Monthly loads of a few thousand games (a player's own games) leave many small files per partition; scans
pay per file. In each partition with two or more files under half the target size, those files are
rewritten into files of up to `--target-games` games, rows in the same order. Before it commits, the
rewrite is verified: the new files hold the same number of rows and the same content hash (an
order-independent sum of per-row hashes) as the files they replace, read back from storage. The swap is
one commit (see warehouse.commit): new files and the retirement of the old ones are recorded together.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.commit import NotPublished, commit, discard, recover, writer_lock
from warehouse.lake import (
    FILE_GAMES,
    GAMES,
    ROW_GROUP_GAMES,
    Lake,
    OneLineParser,
    add_lake_argument,
    count_option,
    default_lake,
    open_parquet_writer,
    staged,
)
from warehouse.load import new_op_id
from warehouse.loads import DamagedRecord, Records
from warehouse.storage import StorageError

HASH_MODULUS = 2**64
# Below 2, no two files could be merged; a file beyond this many games would be slow to scan and to redo.
TARGET_GAMES_MAX = 100_000_000


class CompactionMismatch(RuntimeError):
    """The rewritten files do not hold the rows they replace: nothing is committed."""


@dataclass
class Digest:
    """Rows and an order-independent content hash of a stream of batches."""

    rows: int = 0
    hash: int = 0

    def add(self, batch: pa.RecordBatch) -> None:
        # Dictionary columns are hashed by value: polars would hash their codes, which differ by file.
        plain = pa.Table.from_batches([batch]).cast(_plain_schema(batch.schema))
        hashes = pl.from_arrow(plain).hash_rows().to_numpy()
        self.rows += len(hashes)
        # The sum is modulo 2**64: numpy wraps arrays silently, but a numpy scalar addition that wraps
        # warns of an overflow, so the running total is a Python int.
        self.hash = (self.hash + int(hashes.sum(dtype=np.uint64))) % HASH_MODULUS


def _plain(t: pa.DataType) -> pa.DataType:
    if pa.types.is_dictionary(t):
        return _plain(t.value_type)
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, _plain(t.value_type), t.value_field.nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _plain(f.type), f.nullable) for f in t])
    return t


def _plain_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, _plain(f.type), f.nullable) for f in schema])


def small_files(lake: Lake, target: int) -> dict[str, list[tuple[str, int]]]:
    """Per partition directory, its files under half the target, with their rows, in name order."""
    parts: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for info in sorted(lake.files(GAMES), key=lambda i: i.path):
        if info.path.endswith(".parquet"):
            rows = pq.read_metadata(info.path, filesystem=lake.fs).num_rows
            if rows < target // 2:
                rel = lake.relative(info.path)
                parts[rel.rsplit("/", 1)[0]].append((rel, rows))
    return {part: files for part, files in parts.items() if len(files) >= 2}


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


def batches(lake: Lake, files: Iterable[str]) -> Iterable[pa.RecordBatch]:
    for rel in files:
        yield from pq.ParquetFile(lake.path(rel), filesystem=lake.fs).iter_batches(batch_size=ROW_GROUP_GAMES)


def rewrite(lake: Lake, op_id: str, part: str, n: int, files: list[str]) -> tuple[str, int, Digest]:
    """Writes `files` into one staged file; returns its final path, rows and the sources' digest."""
    final = f"{part}/compact-{op_id}-{n}.parquet"
    source = Digest()
    writer = None
    pending: list[pa.RecordBatch] = []
    try:
        for batch in batches(lake, files):
            source.add(batch)
            writer = writer or open_parquet_writer(lake, staged(op_id, final), batch.schema)
            pending.append(batch)
            if sum(b.num_rows for b in pending) >= ROW_GROUP_GAMES:
                writer.write_table(pa.Table.from_batches(pending))
                pending = []
        if writer is not None and pending:
            writer.write_table(pa.Table.from_batches(pending))
    finally:
        if writer is not None:
            writer.close()
    written = Digest()
    for batch in batches(lake, [staged(op_id, final)]):
        written.add(batch)
    if (written.rows, written.hash) != (source.rows, source.hash):
        raise CompactionMismatch(f"{final}: rewritten rows differ from the {len(files)} files they replace")
    return final, written.rows, source


def compact(lake: Lake, target: int = FILE_GAMES, dry_run: bool = False) -> dict | None:
    """Compacts every partition with small files in one commit; returns the record, None if nothing to do."""
    with writer_lock(lake):
        recover(lake)
        Records.read(lake)  # a damaged record leaves what is committed unknown: refuse to rewrite files
        plan = {part: groups(files, target) for part, files in small_files(lake, target).items()}
        plan = {part: g for part, g in plan.items() if g}
        if not plan or dry_run:
            return {"plan": plan} if plan else None
        started = time.time()
        op_id = new_op_id()
        record: dict = {"kind": "compact", "load_id": op_id, "file_rows": {}, "removes": [], "content": {}}
        try:
            for part, part_groups in plan.items():
                for n, files in enumerate(part_groups, 1):
                    final, rows, digest = rewrite(lake, op_id, part, n, files)
                    record["file_rows"][final] = rows
                    record["removes"] += files
                    record["content"][final] = f"{digest.rows}:{digest.hash:016x}"
        except BaseException:
            discard(lake, op_id)
            raise
        record["files"] = list(record["file_rows"])
        record["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        record["seconds"] = round(time.time() - started, 3)
        commit(lake, record)
        return record


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m warehouse.compact", description=__doc__.split("\n\n")[1])
    add_lake_argument(p)
    p.add_argument(
        "--target-games",
        type=count_option(2, TARGET_GAMES_MAX),
        default=FILE_GAMES,
        help=f"games per file, 2 to {TARGET_GAMES_MAX:,} (default: {FILE_GAMES:,})",
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be merged, change nothing")
    args = p.parse_args(argv)
    try:
        lake = Lake.open_existing(args.lake or default_lake())
        record = compact(lake, args.target_games, args.dry_run)
    except NotPublished as e:
        print(f"{'' if e.interrupted else 'error: '}{e.why}: compaction {e.state}", file=sys.stderr)
        return 130 if e.interrupted else 2
    except KeyboardInterrupt:
        print("interrupted: compaction stopped before its commit; the lake is unchanged", file=sys.stderr)
        return 130
    except (StorageError, OSError, DamagedRecord) as e:
        print(f"error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    if record is None:
        print(f"{lake.location}: nothing to compact")
    elif args.dry_run:
        for part, part_groups in record["plan"].items():
            print(f"{part}: would merge {sum(map(len, part_groups))} files into {len(part_groups)}")
    else:
        print(
            f"{lake.location}: merged {len(record['removes'])} files into {len(record['files'])} "
            f"({sum(record['file_rows'].values()):,} games, same rows and content hash), "
            f"{record['seconds']} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
