"""The lake's Parquet files: their settings, in one place for loads, compaction and the upgrade, and the
writer that splits a load's games into its partitions' files, each `games/` file with its `plies/` twin."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from warehouse.errors import DamagedFile
from warehouse.lake.encoders import Encoders, Lane, RowGroupWrite
from warehouse.lake.layout import Partition, plies_twin, staged
from warehouse.lake.location import Lake
from warehouse.lake.plies import PLIES
from warehouse.lake.positions import derive, derived_schemas

# Row groups big enough for fast scans, small enough to keep a load's memory bounded.
ROW_GROUP_BYTES = 64 << 20
ROW_GROUP_GAMES = 50_000
# What the pending row groups of all open files may hold in memory: their batches' bytes, the reader's plies
# with them (`_Pending.held`; counted at the derived row groups' size, ~0.7 of it, a load held 1.35 x this).
PENDING_BYTES = 4 * ROW_GROUP_BYTES
# Rows below which a row group's batches are joined before they are derived and encoded (`coalesced`): a
# parallel reader's pieces (~200 games) cost a fixed overhead each; the single-threaded reader's batches
# (mostly thousands of games) go as they are (joined at 8,192, a 200k-game load with jobs=1 peaked at
# 512 MB instead of 408, and spent no less CPU).
COALESCE_ROWS = 2048
FILE_GAMES = 1_000_000
# A file that ends holding fewer games than this, none of them written yet, writes them as one row group
# (the others, then the analysed), not one of each kind (`by_analysis`): a row group's own footer entries
# and dictionary pages cost ~16 KB in both tables (bench/bench_storage.py), 3-16 B a game in such a file,
# while a question on analysed games reads at most this many games' plies more than it would (a few ms).
# A player's archive is hundreds of such partitions.
ONE_ROW_GROUP_GAMES = ROW_GROUP_GAMES // 10
# Bytes a ply adds to a pending row group once derived: its game_key, ply and key columns.
_PLY_BYTES = 8 + 4 + 8
# Partitions a load keeps open at once, each a games/ file and its plies/ twin: each file costs ~430 KB of
# buffers and a file descriptor, so an archive spanning thousands of months (partitions) would otherwise
# exhaust memory and `ulimit -n`. Past it, the least recently written partition's files are closed; later
# games of that partition start other files (`warehouse.maintenance.compact` merges them).
MAX_OPEN_PARTITIONS = 32

STATISTICS_COLUMNS = [
    "game_id",
    "game_key",
    "datetime",
    "result",
    "tc_base",
    "tc_inc",
    "opening.eco",
    "players.list.element.elo",
    "n_plies",
    "source_offset",
    # games' row groups of analysed games (`by_analysis`): a question on them skips the others'.
    "has_eval",
    # plies: a game's plies by key, the opening's by ply number; the row groups of analysed games.
    "ply",
    "analysed",
    # plies' NAGs: lichess writes them in analysed games only, so the others' row groups hold none and a
    # question on a NAG (blunders) skips them.
    "nag",
    # Both tables: the SQL views read a file whose row groups hold only the variants asked for without
    # testing each row (sql/views/schema.sql: selected_table).
    "variant",
]
# Encodings other than the dictionary, where they took fewer bytes on real lichess games
# (bench/bench_storage.py; B/game dictionary -> this): spread-out integers as deltas, unique strings as
# their lengths then bytes, 64-bit hashes as they are. Every reader of the lake decodes them (DuckDB, Spark).
COLUMN_ENCODINGS = {
    "moves.list.element.eval_cp": "DELTA_BINARY_PACKED",  # 13.4 -> 9.0
    "players.list.element.elo": "DELTA_BINARY_PACKED",  # 6.0 -> 3.2
    "players.list.element.name": "DELTA_LENGTH_BYTE_ARRAY",  # 19.4 -> 15.3
    "game_id": "DELTA_LENGTH_BYTE_ARRAY",  # 7.6 -> 6.2
    "site": "DELTA_LENGTH_BYTE_ARRAY",  # 7.6 -> 6.5
    "final_key": "PLAIN",  # 9.2 -> 8.1
    "source_offset": "PLAIN",  # 3.7 -> 2.5
    "n_plies": "DELTA_BINARY_PACKED",  # 1.6 -> 1.2
    # games' game_key (8.3 -> 6.4) and plies' (10.2 -> 7.9, runs of one value); plies' key 55.9 -> 52.5
    "game_key": "PLAIN",
    "key": "PLAIN",
    "eval_cp": "DELTA_BINARY_PACKED",  # plies: 11.7 -> 7.4
    # plies' mates, false but on a game's last ply: runs, which DuckDB scans in 0.26 CPU-s per 65M plies
    # instead of 0.46 for the bit-packed plain booleans (square_heat); the same bytes
    "mates": "RLE",
    "analysed": "RLE",  # one run per row group
    # plies' packed material: ~17 values a game, each repeated for a few plies; zstd takes the repeats
    # (438 lichess games: dictionary 65.9 -> 33.3; delta 49.3, byte-stream-split 39.3)
    "material": "PLAIN",
    "final_material": "PLAIN",  # games: 4.7 -> 3.6, ~unique per game as final_key is
}


class LakeWriter(pq.ParquetWriter):
    """pyarrow's ParquetWriter, failing as a whole. After an error (a full disk) every later write raises
    that error again, where pyarrow's raises "Operation on closed file", an ArrowInvalid that reads as a
    bug and may reach the user first from another thread. A close that fails leaves it closed: pyarrow's
    stays open then, and its `__del__` closes it once more at exit and prints the error after the
    command's one line. A writer dropped unclosed belongs to an operation that failed, whose staged files
    go: its `__del__` says nothing."""

    _failed: BaseException | None = None

    def write_table(self, table: pa.Table, row_group_size: int | None = None) -> None:
        if self._failed is not None:
            raise self._failed
        try:
            super().write_table(table, row_group_size)
        except BaseException as error:
            self._failed = error
            raise

    def close(self) -> None:
        try:
            super().close()
        except BaseException:
            self.is_open = False
            if self.file_handle is not None:
                with contextlib.suppress(Exception):
                    self.file_handle.close()
            raise

    def abandon(self) -> None:
        """Closes the writer after a failure, whatever it raises: its file is dropped."""
        with contextlib.suppress(Exception):
            self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            super().__del__()


def open_parquet_writer(lake: Lake, rel: str, schema: pa.Schema, **overrides: Any) -> LakeWriter:
    """The lake's Parquet settings, for both tables, in one place for every writer; `overrides` (pyarrow
    `ParquetWriter` options) only to measure what a setting costs (bench/bench_storage.py)."""
    lake.make_parent(rel)
    leaves = leaf_paths(schema)
    settings: dict[str, Any] = dict(
        compression="zstd",
        compression_level=3,
        # Min/max statistics where they prune scans (dates, ratings, ids); per-move columns
        # would pay for them on every ply and never use them.
        write_statistics=STATISTICS_COLUMNS,
        # `clk` is decimal(9, 1): INT32 storage instead of fixed-size binary.
        store_decimal_as_integer=True,
        # A CRC of every page, which the lake's readers verify (`read_parquet`): a bit flipped on the disk
        # is found by `check --full` and stops an export, where it would otherwise decode as another value.
        write_page_checksum=True,
        # Pages cut by their bytes (1 MB), not at pyarrow's 20,000 rows: `plies/` cut there wrote a page, a
        # zstd context made for it and its header every 20,000 plies of each column (17,457 contexts for
        # 200,000 games, 3,541 now): a load 0.97x the CPU, plies 1.7% smaller on real games. Nothing reads
        # page by page (no page index is written).
        max_rows_per_page=1 << 20,
        use_dictionary=[path for path in leaves if path not in COLUMN_ENCODINGS],
        column_encoding={path: e for path, e in COLUMN_ENCODINGS.items() if path in leaves},
    )
    return LakeWriter(lake.path(rel), schema, filesystem=lake.fs, **(settings | overrides))


# How every reader of the lake's files reads them: each page checked against its checksum (files written
# before the lake wrote checksums have none, and are read as they are).
READ_OPTIONS = {"page_checksum_verification": True}


@contextlib.contextmanager
def naming_damage(lake: Lake, rel: str) -> Iterator[None]:
    """Raises `DamagedFile` naming the lake's file `rel` for an error of a read of it (in the `with` block)
    that finds its content damaged (`is_damage`); the disk's and the network's errors go as they are."""
    try:
        yield
    except Exception as error:
        if not is_damage(error):
            raise
        raise DamagedFile(f"{lake.location}/{rel}", str(error).splitlines()[0]) from None


@contextlib.contextmanager
def read_parquet(
    lake: Lake, rel: str, *, pre_buffer: bool = True, read_dictionary: list[str] | None = None
) -> Iterator[pq.ParquetFile]:
    """The lake's file `rel` open for reading (`READ_OPTIONS`), its damage named (`naming_damage`); the
    columns `read_dictionary` names come as their pages' dictionaries with int32 keys, whatever the stored
    schema's key type (pyarrow would cast them to it)."""
    with (
        naming_damage(lake, rel),
        pq.ParquetFile(
            lake.path(rel),
            filesystem=lake.fs,
            pre_buffer=pre_buffer,
            read_dictionary=read_dictionary,
            **READ_OPTIONS,
        ) as parquet,
    ):
        yield parquet


def read_columns(lake: Lake, rel: str, columns: list[str] | None = None) -> pa.Table:
    """`columns` (all: None) of the lake's file `rel`, read whole (`READ_OPTIONS`), its damage named."""
    with naming_damage(lake, rel):
        return pq.read_table(lake.path(rel), columns=columns, filesystem=lake.fs, **READ_OPTIONS)


def is_damage(error: Exception) -> bool:
    """Whether pyarrow's `error`, reading a file, says that the file's content is damaged rather than that
    the disk or the network failed. pyarrow raises ArrowInvalid for the first (not Parquet, an index out of
    range) and OSError for both: the system's carry an errno and S3's name AWS, while its own (a checksum
    that fails, a page that does not decompress or decode) carry neither."""
    if isinstance(error, OSError):
        return error.errno is None and "AWS Error" not in str(error)
    return isinstance(error, pa.ArrowInvalid)


def row_group_tables(lake: Lake, rel: str) -> Iterator[pa.Table]:
    """The row groups of the lake's file `rel` in order (`read_parquet`), each read whole: pyarrow cannot
    read nested columns across two row groups ("Nested data conversions not implemented"), and the lake's
    row groups have any size (one kind of game each, `by_analysis`)."""
    with read_parquet(lake, rel) as parquet:
        for g in range(parquet.num_row_groups):
            yield parquet.read_row_group(g)


def leaf_paths(schema: pa.Schema) -> list[str]:
    """The Parquet paths of `schema`'s leaf columns, as `write_statistics` and `column_encoding` name them:
    `moves.list.element.clk`, `headers.key_value.key`."""

    def paths(prefix: str, t: pa.DataType) -> list[str]:
        if pa.types.is_map(t):
            entry = f"{prefix}.key_value"
            return paths(f"{entry}.key", t.key_type) + paths(f"{entry}.value", t.item_type)
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            return paths(f"{prefix}.list.element", t.value_type)
        if pa.types.is_struct(t):
            return [p for f in t for p in paths(f"{prefix}.{f.name}", f.type)]
        return [prefix]

    return [p for f in schema for p in paths(f.name, f.type)]


def plain_type(t: pa.DataType) -> pa.DataType:
    """`t` with every dictionary replaced by its values' type: files of the same content may hold
    different dictionaries, so values are compared through this."""
    if pa.types.is_dictionary(t):
        return plain_type(t.value_type)
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, plain_type(t.value_type), t.value_field.nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, plain_type(f.type), f.nullable) for f in t])
    return t


def plain_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` with plain types (see `plain_type`)."""
    return pa.schema([pa.field(f.name, plain_type(f.type), f.nullable) for f in schema])


def coalesced(batches: list[pa.RecordBatch], rows: int = COALESCE_ROWS) -> list[pa.RecordBatch]:
    """`batches` (of one schema) with each run of small ones joined into one of at least `rows` rows (or
    what remains): a parallel reader hands over a partition's games in pieces of ~200, and `derive` and
    the Parquet encoders cost a fixed overhead per batch: piece by piece, a game cost ~7 µs more to
    derive and ~5 µs more to encode than in joined batches, the copy included (measured on one thread).
    Batches of `rows` or more go as they are."""
    out: list[pa.RecordBatch] = []
    run: list[pa.RecordBatch] = []
    run_rows = 0
    for batch in batches:
        if not run and batch.num_rows >= rows:
            out.append(batch)
            continue
        run.append(batch)
        run_rows += batch.num_rows
        if run_rows >= rows:
            out.append(pa.concat_batches(run))
            run, run_rows = [], 0
    if run:
        out.append(run[0] if len(run) == 1 else pa.concat_batches(run))
    return out


Rows = TypeVar("Rows", pa.RecordBatch, pa.Table)


@dataclass
class _Pending:
    """Games of one kind, analysed (with an engine evaluation) or not, waiting to be derived and written
    as a row group: their position columns and plies derived by the reader, or not yet (`derive`)."""

    batches: list[pa.RecordBatch] = field(default_factory=list)
    rows: int = 0
    plies: int = 0
    bytes: int = 0  # the row group's size once derived, which decides where it ends (`full`)
    held: int = 0  # what its batches hold in memory now (with the reader's plies)

    def add(self, part: pa.RecordBatch) -> None:
        moves = part.column("moves").offsets
        plies = moves[-1].as_py() - moves[0].as_py()
        self.batches.append(part)
        self.rows += part.num_rows
        self.plies += plies
        # The plies will share the games' move arrays; their own are the game_key, ply and key columns.
        # The reader's plies (`PLIES`) counted as derived ones, wherever they were derived.
        derived = part.column(PLIES).nbytes if PLIES in part.schema.names else 0
        self.bytes += part.nbytes - derived + _PLY_BYTES * plies
        self.held += part.nbytes

    def full(self) -> bool:
        return row_group_full(self.rows, self.bytes)

    def then(self, other: _Pending) -> _Pending:
        """These games, then `other`'s, as one row group."""
        return _Pending(
            self.batches + other.batches,
            self.rows + other.rows,
            self.plies + other.plies,
            self.bytes + other.bytes,
            self.held + other.held,
        )


def row_group_full(games: int, nbytes: int) -> bool:
    """Whether a pending row group of `games` games taking `nbytes` is written now (`ROW_GROUP_GAMES`,
    `ROW_GROUP_BYTES`)."""
    return games >= ROW_GROUP_GAMES or nbytes >= ROW_GROUP_BYTES


def in_one_row_group(written: int, *kinds: int) -> bool:
    """Whether the last games of a file, `kinds` of them of each kind, after `written` games in earlier row
    groups, go in one row group (`ONE_ROW_GROUP_GAMES`) rather than one of each kind."""
    return written == 0 and sum(kinds) < ONE_ROW_GROUP_GAMES


def by_analysis(part: Rows, flag: str = "has_eval") -> list[tuple[bool, Rows]]:
    """`part`'s rows (games, or plies with `flag="analysed"`) by whether their game is analysed: as they
    are when all are, or none (the readers' batches), else in two copies."""
    flags = part.column(flag)
    analysed = pc.sum(flags).as_py() or 0
    if analysed in (0, part.num_rows):
        return [(analysed > 0, part)]
    return [(True, part.filter(flags)), (False, part.filter(pc.invert(flags)))]


@dataclass
class _PartitionFile:
    """One open `games/` file of a partition and its `plies/` twin, with their pending row groups (one of
    analysed games, one of the others: a row group holds one kind, so that a question on analysed games
    skips the others' by `plies.analysed`'s statistics; but a small file's games, `in_one_row_group`), the
    lanes their row groups are written in, and the writes not yet seen to end."""

    final: str
    games: LakeWriter
    plies: LakeWriter
    games_lane: Lane
    plies_lane: Lane
    pending: dict[bool, _Pending] = field(default_factory=lambda: {False: _Pending(), True: _Pending()})
    rows: int = 0
    ply_rows: int = 0
    writing: list[Future[None]] = field(default_factory=list)

    @property
    def pending_bytes(self) -> int:
        """Bytes its pending row groups hold in memory."""
        return sum(p.held for p in self.pending.values())

    def write_pending(self, encoders: Encoders, analysed: bool) -> None:
        """Hands the pending row group of games of that kind to the encoders."""
        pending = self.pending[analysed]
        self.pending[analysed] = _Pending()
        self._write(encoders, pending)

    def write_last(self, encoders: Encoders) -> None:
        """Hands the file's last pending games to the encoders: in one row group when few
        (`in_one_row_group`), else a row group of each kind."""
        others, analysed = self.pending[False], self.pending[True]
        self.pending = {False: _Pending(), True: _Pending()}
        if in_one_row_group(self.rows, others.rows, analysed.rows):
            self._write(encoders, others.then(analysed))
        else:
            self._write(encoders, others)
            self._write(encoders, analysed)

    def _write(self, encoders: Encoders, pending: _Pending) -> None:
        if not pending.batches:
            return
        self.rows += pending.rows
        self.ply_rows += pending.plies
        write = RowGroupWrite()
        encoders.admit(write)
        # Raises now the error of an earlier row group that ended; the others are waited for at close.
        for ended in [w for w in self.writing if w.done()]:
            ended.result()
            self.writing.remove(ended)
        self.writing.append(write.done)
        self.games_lane.submit(functools.partial(self._write_games, pending.batches, pending.rows, write))

    def _write_games(self, batches: list[pa.RecordBatch], rows: int, write: RowGroupWrite) -> None:
        """Derives the position columns and plies of `batches`, hands the plies to their lane and writes
        the games as one row group: on an encoder thread, as the Rust kernels and pyarrow's encoders
        release the GIL."""
        try:
            joined = coalesced(batches)
            batches.clear()  # `joined` holds every row: the pieces it copied can go
            derived = [derive(batch) for batch in joined]
            del joined
            games = pa.Table.from_batches([g for g, _ in derived], self.games.schema)
            plies = pa.Table.from_batches([p for _, p in derived], self.plies.schema)
        except BaseException as error:
            write.part_ended(error, parts=2)
            return
        del derived
        self.plies_lane.submit(lambda: self._write_plies(plies, write))
        try:
            self.games.write_table(games, row_group_size=rows)
        except BaseException as error:
            write.part_ended(error)
        else:
            write.part_ended()

    def _write_plies(self, plies: pa.Table, write: RowGroupWrite) -> None:
        try:
            # One row group for the same games in both files, whatever its number of plies.
            self.plies.write_table(plies, row_group_size=max(plies.num_rows, 1))
        except BaseException as error:
            write.part_ended(error)
        else:
            write.part_ended()

    def wait(self) -> None:
        """Waits for every write of this file, then raises the first error: writes still running on the
        encoders must end before the writers close (`close_quietly`), or they would write to a closed
        file. Interrupted (Ctrl-C), the writes not yet seen to end stay for `close_quietly` to wait for."""
        first: Exception | None = None
        for done in self.writing:
            try:
                done.result()
            except Exception as error:
                first = first or error
        self.writing = []
        if first is not None:
            raise first

    def close(self, encoders: Encoders) -> None:
        self.write_last(encoders)
        self.wait()
        self.games.close()
        self.plies.close()

    def close_quietly(self) -> None:
        with contextlib.suppress(Exception):
            self.wait()
        self.games.abandon()
        self.plies.abandon()


class PartitionWriter:
    """Splits batches by partition and writes zstd Parquet files under the operation's staging folder:
    each `games/` file with its `plies/` twin (`warehouse.lake.plies`), at most `max_open` pairs open at
    once, row groups derived (`warehouse.lake.positions.derive`) and encoded on `encoders` threads.
    `inline_while_reading`: on the thread that calls `write` until `finish` or `encode_on_pool`.
    Memory: `max_open` pairs of writers' buffers, the pending row groups (at most `PENDING_BYTES` and one
    batch) and the `encoders` row groups being derived and encoded (each at most `ROW_GROUP_BYTES` and
    one batch, with its plies, and a copy of its small batches joined: `coalesced`)."""

    def __init__(
        self,
        lake: Lake,
        op_id: str,
        file_stem: str,
        max_open: int = MAX_OPEN_PARTITIONS,
        encoders: int = 1,
        inline_while_reading: bool = False,
    ):
        self.lake, self.op_id, self.file_stem, self.max_open = lake, op_id, file_stem, max_open
        self._encoders = Encoders(encoders, inline_while_reading)
        self._open: dict[Partition, _PartitionFile] = {}  # least recently written first
        self._counts: dict[Partition, int] = {}
        self.file_rows: dict[str, int] = {}  # final path → rows, for `games/` files already closed
        self.ply_rows: dict[str, int] = {}  # the same for their `plies/` twins
        self.rows = 0

    def write(self, key: Partition, *parts: pa.RecordBatch) -> None:
        """Adds games of partition `key` (`parts`, without the partition columns, one batch of the
        reader's in one or more pieces) with their position columns, and their plies."""
        parts = tuple(part for part in parts if part.num_rows)
        if not parts:
            return
        f = self._open.pop(key, None) or self._start(key, parts[0].schema)
        self._open[key] = f  # now the most recently written
        for part in parts:
            self.rows += part.num_rows
            for analysed, games in by_analysis(part):
                f.pending[analysed].add(games)
                if f.pending[analysed].full():
                    f.write_pending(self._encoders, analysed)
        if f.rows >= FILE_GAMES:
            self._close(key)
        elif sum(o.pending_bytes for o in self._open.values()) >= PENDING_BYTES:
            # Many partitions at once (an archive spanning decades): smaller row groups, bounded memory.
            fullest = max(self._open.values(), key=lambda o: o.pending_bytes)
            fullest.write_pending(self._encoders, max(fullest.pending, key=lambda k: fullest.pending[k].held))

    def _start(self, key: Partition, read: pa.Schema) -> _PartitionFile:
        if len(self._open) >= self.max_open:
            self._close(next(iter(self._open)))
        n = self._counts.get(key, 0) + 1
        self._counts[key] = n
        final = f"{key.dir}/{self.file_stem}-{n}.parquet"
        schema, plies_schema = derived_schemas(read)
        games = open_parquet_writer(self.lake, staged(self.op_id, final), schema)
        try:
            plies = open_parquet_writer(self.lake, staged(self.op_id, plies_twin(final)), plies_schema)
        except BaseException:
            games.abandon()
            raise
        lanes = self._encoders.lane(), self._encoders.lane()
        return _PartitionFile(final, games, plies, *lanes)

    def _close(self, key: Partition) -> None:
        f = self._open[key]
        f.close(self._encoders)  # on an error, `f` stays open for `close_quietly`
        del self._open[key]
        self.file_rows[f.final] = f.rows
        self.ply_rows[plies_twin(f.final)] = f.ply_rows

    def encode_on_pool(self) -> None:
        """Row groups on every encoder thread from now on (`Encoders.use_pool`)."""
        self._encoders.use_pool()

    def finish(self) -> tuple[dict[str, int], dict[str, int]]:
        """Closes every file; returns the final path and row count of each `games/` file, and of each
        `plies/` file."""
        # Every file's last row group is handed to the encoders before any file waits for its own: closed
        # one by one, the last row groups of a load's partitions encoded on one thread at a time.
        self._encoders.use_pool()
        for f in self._open.values():
            f.write_last(self._encoders)
        for key in list(self._open):
            self._close(key)
        self._encoders.shutdown()
        return self.file_rows, self.ply_rows

    def close_quietly(self) -> None:
        """Closes open writers after a failure (their staged files are dropped with the staging folder)."""
        for f in self._open.values():
            f.close_quietly()
        self._open.clear()
        self._encoders.shutdown()
