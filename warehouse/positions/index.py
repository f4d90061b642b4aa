"""The optional position index: the PolyGlot key of every position of every game (before each ply, and the
final one) with its game and ply, sorted by key, so that a search by FEN reads a few row groups instead of
replaying every ply of the lake.

Built on demand (`python -m loaders.position_index`), never by a load: it costs far more bytes than the
stored keys (docs/positions.md), and sits outside the lake's 2.0x storage bound because it is optional.
It is written through the lake's commit protocol (`warehouse.lake.commit`): staged, committed by an
`IndexRecord` (the index files, and the `games/` files it covers with their rows), published; a rebuild's
record retires the index before it. Files it does not cover (loaded after it, or rewritten by a
compaction or a `--force` reload) are searched by the replay scan (`warehouse.positions.search`), so
answers stay the same, only slower for those files; rebuilding covers them again.

Files: `_index/positions/<op>/<bucket>.parquet` (4 hex digits), 2^b buckets by the key's top b bits (b such
that a bucket holds about `BUCKET_POSITIONS`, so the build sorts one bucket at a time: each input file's
positions are first split into bucket parts staged beside, which publishing drops), each sorted by key, file,
row, ply, in row groups of `ROW_GROUP` rows: their min/max statistics let a lookup read only the groups that
can hold a key. Columns: `key`, `file` (the position of its `games/` file in the record's `covers`), `row`
(the game's row in that file: 2-3 bytes where its `game_key` would take 8), `ply` (as `search` gives it:
`n_plies` for the final position); delta-encoded. Beside them, `covers.parquet` lists the covered files for
SQL (the views, sql/views/schema.sql, do not read the records): `file`, `path` (the `games/` file), `games`;
it is published after the key files, so that a reader finding it finds them all. Before it, the explorer's
pre-aggregate of the positions many games reach (`warehouse.positions.aggregate`, the record's
`explorer_files`), summed from each bucket's frequent rows (staged per input file as the bucket is sorted,
then read a file at a time: memory holds a bucket and a file's share, not the lake's).
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from warehouse import _core
from warehouse.errors import LakeError
from warehouse.lake.commit import commit, discard, new_op_id, recover, writer_lock
from warehouse.lake.layout import GAMES, INDEX, staged, staging_dir
from warehouse.lake.location import Lake
from warehouse.lake.parquet import read_columns
from warehouse.lake.records import IndexRecord, Records, now
from warehouse.positions import aggregate
from warehouse.positions.replay import replay_batch

INDEX_DIR = f"{INDEX}/positions"
# The table of the covered `games/` files, beside an index's key files.
COVERS = "covers.parquet"
SCHEMA = pa.schema(
    [
        pa.field("key", pa.int64(), nullable=False),
        pa.field("file", pa.int32(), nullable=False),
        pa.field("row", pa.int32(), nullable=False),
        pa.field("ply", pa.int32(), nullable=False),
    ]
)
# Positions found (by `PositionIndex.lookup`, and `warehouse.positions.search`'s other ways): the game, its
# `games/` file and row there, and the ply index the position stands before (`n_plies` for the final one).
POSITIONS = pa.schema(
    [
        pa.field("game_key", pa.int64()),
        pa.field("file", pa.string()),
        pa.field("row", pa.int32()),
        pa.field("ply", pa.int32()),
    ]
)
# Rows per row group: a lookup reads whole groups, so small ones (~100 KB of zstd at most).
ROW_GROUP = 16_384
# Positions per bucket the build sorts at once (~100 MB of rows).
BUCKET_POSITIONS = 4_000_000
# Every ply of a game (`_core.position_keys` keys the first `keyed_plies`).
ALL_PLIES = 1 << 31


def build(lake: Lake, frequent_games: int = aggregate.FREQUENT_GAMES) -> IndexRecord:
    """Builds the index of every `games/` file of `lake` and commits it, retiring the previous one, with the
    explorer's pre-aggregate of the positions at least `frequent_games` games reach.
    Takes the lake's writer lock (one writer at a time, as loads and compactions)."""
    with writer_lock(lake):
        recover(lake)
        records = Records.read(lake)
        previous = latest(records)
        covers = dict(sorted(records.live_files().items()))
        record = IndexRecord(
            load_id=new_op_id(),
            started=now(),
            covers=covers,
            removes=previous.files_of_index() if previous else [],
        )
        try:
            positions = sum(records.live_plies().values()) + sum(covers.values())
            stage(lake, record, bucket_bits(positions), frequent_games)
        except BaseException:  # Ctrl-C included: nothing was committed, the staged files go
            with contextlib.suppress(OSError):
                discard(lake, record.load_id)
            raise
        record.written()
        commit(lake, record, "the position index")
        if previous is not None:  # its files are gone; publishing deletes files, not their folder
            lake.delete_dir(f"{INDEX_DIR}/{previous.load_id}")
        return record


def stage(lake: Lake, record: IndexRecord, bits: int, frequent_games: int) -> None:
    """Writes the index of `record.covers` in 2^`bits` buckets under the staging folder of `record`, then
    the pre-aggregate of the positions `frequent_games` games reach, and notes its files and positions."""
    for file, rel in enumerate(record.covers):
        for bucket, part in split(file_positions(lake, rel, file), bits):
            write(lake, staged(record.load_id, f"{INDEX_DIR}/parts/{bucket}/{file}.parquet"), part)
    frequent = 0
    for bucket in range(1 << bits):
        sorted_rows = merged(lake, staged(record.load_id, f"{INDEX_DIR}/parts/{bucket}"))
        rel = f"{INDEX_DIR}/{record.load_id}/{bucket:04x}.parquet"
        write(lake, staged(record.load_id, rel), sorted_rows)
        record.index_files.append(rel)
        record.positions += sorted_rows.num_rows
        # The frequent rows staged per input file (memory holds a bucket's, and then one file's).
        found = aggregate.frequent(sorted_rows, frequent_games)
        frequent += found.num_rows
        for file, part in split_by_file(found):
            write(lake, staged(record.load_id, f"{INDEX_DIR}/frequent/{file}/{bucket}.parquet"), part)
    if frequent:  # else no position is frequent enough: no pre-aggregate
        record.explorer_files = [f"{INDEX_DIR}/{record.load_id}/{name}" for name in aggregate.FILES]
        moves, top = (staged(record.load_id, rel) for rel in record.explorer_files)
        parts = staged(record.load_id, f"{INDEX_DIR}/frequent")
        aggregate.write(lake, parts, list(record.covers), moves, top, workdir(lake, record.load_id))
    record.covers_file = f"{INDEX_DIR}/{record.load_id}/{COVERS}"
    covers = pa.table(
        {
            "file": pa.array(range(len(record.covers)), pa.int32()),
            "path": pa.array(list(record.covers), pa.string()),
            "games": pa.array(list(record.covers.values()), pa.int64()),
        }
    )
    lake.make_parent(staged(record.load_id, record.covers_file))
    pq.write_table(covers, lake.path(staged(record.load_id, record.covers_file)), filesystem=lake.fs)


def workdir(lake: Lake, op_id: str) -> str | None:
    """Where the pre-aggregate spills: the index's staging folder on a local lake, so that nothing is
    written outside the lake and what a killed build leaves goes with its staging folder (the next writer's
    recovery drops it); None on S3 (the system's temporary folder, which a kill can leave behind)."""
    if not lake.local:
        return None
    folder = lake.path(staging_dir(op_id))
    os.makedirs(folder, exist_ok=True)
    return folder


def bucket_bits(positions: int) -> int:
    """How many top bits of the key pick a bucket, for buckets of about `BUCKET_POSITIONS` positions
    (at most 16: `bucket_of`'s uint16; past 2^16 x `BUCKET_POSITIONS` positions buckets grow instead)."""
    return min(16, max(0, math.ceil(math.log2(max(positions, 1) / BUCKET_POSITIONS))))


def bucket_of(keys: np.ndarray, bits: int) -> np.ndarray:
    """The bucket of each key: its top `bits` bits, the key read unsigned (as PolyGlot's). As uint16, which
    numpy's stable sort sorts by radix, 10x faster than int64."""
    if bits == 0:
        return np.zeros(len(keys), np.uint16)
    return (keys.view(np.uint64) >> np.uint64(64 - bits)).astype(np.uint16)


def file_positions(lake: Lake, rel: str, file: int) -> pa.Table:
    """Every keyed position of the games of `rel` (variants without keys have none), `file` its number.

    :raises LakeError: for a damaged file (not Parquet, or a move its position does not allow), naming it."""
    try:  # pyarrow's ArrowInvalid is a ValueError, as the kernel's errors are
        games, batch = replay_batch(lake, rel)
        plies, finals = (pa.array(a) for a in _core.position_keys(batch, ALL_PLIES))
    except ValueError as e:
        raise LakeError(f"{lake.location}/{rel}: {str(e).splitlines()[0]}") from None
    counts = games["n_plies"].to_numpy()
    rows = np.arange(len(counts), dtype=np.int32)
    starts = np.cumsum(counts) - counts
    ply = np.arange(counts.sum(), dtype=np.int32) - np.repeat(starts, counts).astype(np.int32)
    table = pa.table(
        {
            "key": pa.concat_arrays([plies, finals]),
            "file": np.full(len(plies) + len(finals), file, np.int32),
            "row": np.concatenate([np.repeat(rows, counts), rows]),
            "ply": np.concatenate([ply, counts.astype(np.int32)]),
        }
    )
    return table.filter(pc.is_valid(table["key"])).cast(SCHEMA)


def split(positions: pa.Table, bits: int) -> list[tuple[int, pa.Table]]:
    """`positions` by bucket (the buckets that hold any)."""
    buckets = bucket_of(positions["key"].to_numpy(), bits)
    order = np.argsort(buckets, kind="stable")
    ordered = positions.take(order)
    bounds = np.searchsorted(buckets[order], np.arange((1 << bits) + 1))
    return [
        (bucket, ordered.slice(bounds[bucket], bounds[bucket + 1] - bounds[bucket]))
        for bucket in range(1 << bits)
        if bounds[bucket + 1] > bounds[bucket]
    ]


def split_by_file(rows: pa.Table) -> list[tuple[int, pa.Table]]:
    """`rows` by their `file` (those that hold any), each in its order."""
    if rows.num_rows == 0:
        return []
    files = rows["file"].to_numpy()
    order = np.argsort(files, kind="stable")
    numbers, starts = np.unique(files[order], return_index=True)
    ordered = rows.take(order)
    ends = np.r_[starts[1:], len(order)]
    return [(int(n), ordered.slice(a, b - a)) for n, a, b in zip(numbers, starts, ends, strict=True)]


def merged(lake: Lake, parts: str) -> pa.Table:
    """The positions of the staged bucket parts under `parts` (one per input file, each in file, row, ply
    order), sorted by key, then file, row, ply: a stable sort by key of the parts in file order."""
    files = sorted(lake.files(parts), key=lambda i: int(i.base_name.removesuffix(".parquet")))
    tables = [pq.read_table(i.path, filesystem=lake.fs) for i in files]
    rows = pa.concat_tables([SCHEMA.empty_table(), *tables]).combine_chunks()
    return rows.take(np.argsort(rows["key"].to_numpy(), kind="stable"))


def write(lake: Lake, rel: str, table: pa.Table) -> None:
    lake.make_parent(rel)
    # Delta encoding: sorted keys, and rows and plies that repeat or climb within a key, take a few bits.
    pq.write_table(
        table,
        lake.path(rel),
        filesystem=lake.fs,
        row_group_size=ROW_GROUP,
        compression="zstd",
        use_dictionary=False,
        column_encoding=dict.fromkeys(SCHEMA.names, "DELTA_BINARY_PACKED"),
    )


def latest(records: Records) -> IndexRecord | None:
    """The index in force: the last one built."""
    built = [r for r in records.all if isinstance(r, IndexRecord)]
    return built[-1] if built else None


@dataclass(frozen=True)
class PositionIndex:
    """The index in force on a lake, and the `games/` files it covers among the live ones."""

    lake: Lake
    record: IndexRecord
    covered: frozenset[str]

    @classmethod
    def open(cls, lake: Lake) -> PositionIndex | None:
        """The lake's index, None when none was built (one existence check then). A damaged record does
        not stop a search: its files count as uncovered (replayed), as the views read them regardless."""
        if not lake.exists(INDEX_DIR):
            return None
        records, _damaged = Records.scan(lake)
        record = latest(records)
        if record is None:
            return None
        live = records.live_files()
        covered = frozenset(f for f, rows in record.covers.items() if live.get(f) == rows)
        return cls(lake, record, covered)

    def uncovered(self) -> list[str]:
        """The lake's `games/` files (listed now) it does not cover: loaded or rewritten since the build
        (searched by the replay scan); none when it covers the whole lake."""
        return [rel for rel in self.lake.parquet_files(GAMES) if rel not in self.covered]

    def lookup(self, key: int) -> pa.Table:
        """The positions (`POSITIONS`) whose key is `key` in the covered files: the row groups of the key's
        bucket whose statistics can hold it, then the `game_key` of the rows found in each file."""
        bits = int(math.log2(len(self.record.index_files)))
        bucket = int(bucket_of(np.array([key], np.int64), bits)[0])
        parquet = pq.ParquetFile(self.lake.path(self.record.index_files[bucket]), filesystem=self.lake.fs)
        found = aggregate.keyed_rows(parquet, key)
        found = SCHEMA.empty_table() if found is None else found
        parts = [POSITIONS.empty_table()]
        for file, rel in enumerate(self.record.covers):
            hits = found.filter(pc.equal(found["file"], file))
            if rel in self.covered and hits.num_rows:
                game_keys = read_columns(self.lake, rel, ["game_key"])
                keys = game_keys["game_key"].take(hits["row"])
                files = pa.repeat(rel, hits.num_rows)
                parts.append(pa.table([keys, files, hits["row"], hits["ply"]], schema=POSITIONS))
        return pa.concat_tables(parts)
