"""Reading a lake's games back, partition by partition, in bounded batches: the input of every export.

The lake may be local or on S3 (see `warehouse.lake.storage`). Partitions come in a fixed order (type, year,
month) and, within one, games in file and row order, so an export of the same lake is the same bytes.
Within the partitions chosen, the games a selection's game filters keep (ratings, dates, a player:
`queries.filters.GameFilters`) are those the SQL views keep: DuckDB evaluates the views' condition
(`GameFilters.where`, on the views' fields: `game_fields` in sql/views/schema.sql) on each row group's
filter columns, read first, so memory holds a row group's filter columns and a batch whatever the
partition's size, and a row group keeping no game is not read further. (A count of the kept games per
partition comes first, on the filters' columns alone: a filter keeping none is refused before any output is
made, and a partition keeping none is not opened.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from warehouse import _core
from warehouse.errors import LakeError
from warehouse.lake.layout import GAMES, PARTITION_COLUMNS, PARTITION_SCHEMA, Partition
from warehouse.lake.location import Lake
from warehouse.lake.parquet import read_parquet
from warehouse.lake.records import Records
from warehouse.queries.filters import GameFilters

# Games per batch: ~1-5 MB of Arrow data for lichess games, enough to amortise a call into the Rust core.
SCAN_BATCH_GAMES = 2048
# How far a scan is: `(games read, games to read)`.
ScanProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class Selection:
    """Which partitions to read (None means all; otherwise the values to keep), and which of their games
    (`games`: no filter by default)."""

    types: Sequence[str] | None = None
    years: Sequence[int] | None = None
    months: Sequence[int] | None = None
    games: GameFilters = field(default_factory=GameFilters)

    def keeps(self, partition: Partition) -> bool:
        return (
            (self.types is None or partition.type in self.types)
            and (self.years is None or partition.year in self.years)
            and (self.months is None or partition.month in self.months)
        )

    def options(self) -> str:
        """The selection as the export commands' options: `--type blitz --month 5 --min-rating 2000`."""
        values = [("--type", self.types), ("--year", self.years), ("--month", self.months)]
        values += [(f"--{name.replace('_', '-')}", [v]) for name, v in self.games.chosen().items()]
        return " ".join(f"{flag} {value}" for flag, chosen in values for value in chosen or [])


ALL = Selection()


def games_files(lake: Lake) -> dict[Partition, list[str]]:
    """Every Parquet file of the lake's `games/` (relative to its root) by partition, both sorted: every
    file the lake holds, as DuckDB's `games/**/*.parquet` reads them (not pyarrow's dataset discovery,
    which leaves out files whose names start with `_` or `.`, as older versions named some).

    :raises LakeError: when `lake` has no `games/` directory, or a file of it is outside a partition folder.
    """
    if lake.fs.get_file_info(lake.path(GAMES)).type != pafs.FileType.Directory:
        raise LakeError(f"{lake.location}: not a lake (no {GAMES}/ directory)")
    found: dict[Partition, list[str]] = {}
    for rel in lake.parquet_files(GAMES):
        partition = Partition.of_file(rel)
        if partition is None:
            raise LakeError(f"{lake.location}/{rel}: not in a {GAMES}/type=…/year=…/month=… folder")
        found.setdefault(partition, []).append(rel)
    return {key: found[key] for key in sorted(found)}


def scan(
    lake: Lake,
    columns: Sequence[str],
    selection: Selection = ALL,
    batch_games: int = SCAN_BATCH_GAMES,
    progress: ScanProgress | None = None,
) -> Iterator[tuple[Partition, pa.RecordBatch]]:
    """The selected games' `columns`, partition by partition, in batches of at most `batch_games`;
    `progress(read, to_read)` after each row group (of the chosen partitions' games, those a filter leaves
    out included: what the scan has to read).

    Partition columns (`type`, `year`, `month`) may be among `columns`; they are filled from the path. A
    column may be a Parquet path inside a nested one (`moves.list.element.san`): only the fields named are
    read, the column keeps its top-level name.
    The lake is opened and its partitions chosen now, before the first batch is asked for, so that an
    export can refuse a bad lake or selection before it makes any output.

    What is read reconciles with the lake's committed records (`_loads/`): every file they list in the
    selected partitions is read, and gives the games they list for it (files no record lists, as a load
    published since the records were read, are read as they are).

    :raises LakeError: when `lake` is not a lake, `selection` (other than `ALL`) matches no partition or
        its game filters no game, or a file the records list is missing; while reading, when a file gives
        other games than listed.
    """
    # The records first: a load committed after them only adds files, which are then read unchecked.
    recorded = Records.scan(lake)[0].live_files()
    found = games_files(lake)
    chosen = {key: files for key, files in found.items() if selection.keeps(key)}
    if not chosen and selection != ALL:
        raise LakeError(f"{lake.location}: no partition matches {selection.options()} ({holds(found)})")
    listed = {rel for files in chosen.values() for rel in files}
    missing = sorted(
        rel
        for rel in recorded
        if rel not in listed and (key := Partition.of_file(rel)) is not None and selection.keeps(key)
    )
    if missing:
        raise LakeError(
            f"{lake.location}/{missing[0]}: listed by a committed record but not in the lake "
            f"({len(missing)} files missing): a publish not finished (the next load or compaction finishes "
            f"it), or a damaged lake (see `bgn check --lake {lake.location}`)"
        )
    kept = GameMask(lake, selection) if selection.games.selective() else None
    return batches(lake, chosen, recorded, columns, batch_games, kept, progress)


class GameMask:
    """Which games of a batch `selection`'s game filters keep, as the SQL views define them (of every
    variant).

    :raises LakeError: when its partitions hold no such game (before any output is made)."""

    # The columns the filters read (through the views' fields), with the batch's partition's.
    COLUMNS = ("type", "players", "datetime")

    def __init__(self, lake: Lake, selection: Selection):
        from warehouse.queries.sql import connect  # DuckDB: only for an export that filters games

        self.con = connect(lake.location, variant="all")
        self.where, self.params = selection.games.where()
        counts = self.con.sql(
            f"select type, year, month, count(*) from games where {self.where} group by all",
            params=self.params,
        ).fetchall()
        self.counts = {Partition(*row[:3]): row[3] for row in counts}
        if not any(n for partition, n in self.counts.items() if selection.keeps(partition)):
            raise LakeError(f"{lake.location}: no game matches {selection.options()}")

    def keeps_any(self, partition: Partition) -> bool:
        return bool(self.counts.get(partition))

    def row_group(self, parquet: pq.ParquetFile, group: int, partition: Partition) -> pa.BooleanArray:
        """Whether each game of the row group `group` of a file of `partition` is kept, from the filters'
        columns alone (a row group keeping none is not read further)."""
        stored = [c for c in self.COLUMNS if c not in PARTITION_COLUMNS]
        games = parquet.read_row_group(group, columns=stored).combine_chunks().to_batches()
        if not games:
            return pa.array([], pa.bool_())
        self.con.register("export_games", with_partition(games[0], partition, self.COLUMNS))
        try:
            query = f"select coalesce({self.where}, false) from game_fields('from export_games') as games"
            # In the row group's order: the connection preserves insertion order (DuckDB's default).
            return self.con.sql(query, params=self.params).to_arrow_table().column(0).combine_chunks()
        finally:
            self.con.unregister("export_games")


def holds(found: dict[Partition, list[str]]) -> str:
    """What partitions a lake holds, for a message: `it holds types blitz, rapid; years 2025; months 4, 5`."""
    if not found:
        return "it holds no games"
    kinds, years, months = (sorted(set(values), key=str) for values in zip(*found, strict=True))
    return "it holds types {}; years {}; months {}".format(
        *(", ".join(map(str, v)) for v in (kinds, years, months))
    )


def batches(
    lake: Lake,
    chosen: dict[Partition, list[str]],
    recorded: dict[str, int],
    columns: Sequence[str],
    batch_games: int,
    kept: GameMask | None = None,
    progress: ScanProgress | None = None,
) -> Iterator[tuple[Partition, pa.RecordBatch]]:
    """The games of the `chosen` files, those `kept` keeps if given (see `scan` for `progress`)."""
    file_columns = [c for c in columns if c not in PARTITION_COLUMNS]
    # Games to read: as recorded (a file published since the records were read adds its own when opened).
    to_read = sum(recorded.get(rel, 0) for files in chosen.values() for rel in files)
    read = 0
    for partition, files in chosen.items():
        if kept is not None and not kept.keeps_any(partition):
            read += sum(recorded.get(rel, 0) for rel in files)
            continue  # no game of it kept: its files are not read
        for rel in files:
            games = 0
            # ParquetFile reads a row group page by page; the dataset scanner would decode (and pre-buffer)
            # whole row groups of 50,000 games at once: 2-3x the memory.
            with read_parquet(lake, rel, pre_buffer=False) as parquet:
                to_read += 0 if rel in recorded else parquet.metadata.num_rows
                # A row group at a time: a batch across two fails on nested columns in pyarrow ("Nested
                # data conversions not implemented"), and row groups have any size (one kind of game
                # each, docs/schema.md).
                for group in range(parquet.num_row_groups):
                    rows = parquet.metadata.row_group(group).num_rows
                    games += rows
                    mask = kept.row_group(parquet, group, partition) if kept is not None else None
                    for batch in group_batches(parquet, group, file_columns, batch_games, mask):
                        yield partition, with_partition(batch, partition, columns)
                    read += rows
                    if progress is not None:
                        progress(read, to_read)
            if rel in recorded and games != recorded[rel]:
                raise LakeError(
                    f"{lake.location}/{rel}: {games:,} games read, its committed record lists "
                    f"{recorded[rel]:,} (see `bgn check --lake {lake.location}`)"
                )


def group_batches(
    parquet: pq.ParquetFile, group: int, columns: list[str], batch_games: int, mask: pa.BooleanArray | None
) -> Iterator[pa.RecordBatch]:
    """The row group's `columns` in batches of at most `batch_games`, of its rows `mask` keeps if given (no
    batch read at all when it keeps none), the empty batches left out."""
    if mask is not None and not mask.true_count:
        return
    at = 0  # the batch's first row in the row group
    for batch in parquet.iter_batches(batch_games, row_groups=[group], columns=columns):
        if mask is not None:
            at, batch = at + batch.num_rows, batch.filter(mask.slice(at, batch.num_rows))
        if batch.num_rows:
            yield batch


def with_partition(batch: pa.RecordBatch, partition: Partition, columns: Sequence[str]) -> pa.RecordBatch:
    """`batch` with the partition's values as constant columns, in the order of `columns` (by their
    top-level names)."""
    values = partition._asdict()
    columns = list(dict.fromkeys(c.split(".")[0] for c in columns))
    arrays = [
        pa.repeat(pa.scalar(values[c], PARTITION_SCHEMA.field(c).type), batch.num_rows)
        if c in values
        else batch.column(c)
        for c in columns
    ]
    return pa.RecordBatch.from_arrays(arrays, names=list(columns))


@dataclass
class Group:
    """Consecutive batches of one or more partitions as one table, and where each partition's rows are."""

    table: pa.Table
    spans: list[tuple[Partition, int, int]]


def grouped(
    batches: Iterator[tuple[Partition, pa.RecordBatch]], min_games: int = SCAN_BATCH_GAMES
) -> Iterator[Group]:
    """`batches` gathered into groups of at least `min_games` (but the last): one query per group amortises
    a query's fixed cost (~0.1 s to bind a long one) over a lake of many small partitions."""
    pending: list[pa.RecordBatch] = []
    spans: list[tuple[Partition, int, int]] = []
    rows = 0
    for partition, batch in batches:
        if spans and spans[-1][0] == partition:
            spans[-1] = (partition, spans[-1][1], rows + batch.num_rows)
        else:
            spans.append((partition, rows, rows + batch.num_rows))
        pending.append(batch)
        rows += batch.num_rows
        if rows >= min_games:
            yield Group(pa.Table.from_batches(pending), spans)
            pending, spans, rows = [], [], 0
    if pending:
        yield Group(pa.Table.from_batches(pending), spans)


Batches = Iterator[tuple[Partition, pa.RecordBatch]]


def with_san(batches: Batches) -> Batches:
    """`batches` of games with every null `san` (mainline and variations) set to the SAN the position gives
    (`_core.fill_san`): the lake stores a move's `san` only where the source wrote something else. The
    batches hold `moves`, `variations`, `start_fen`, `variant` and, for its errors, `game_id`.

    :raises LakeError: when a move is not legal where it stands (a damaged file the lake wrote without page
        checksums, `warehouse.lake.parquet.READ_OPTIONS`), naming the game and ply.
    """
    for partition, batch in batches:
        try:
            filled = _core.fill_san(batch)
        except ValueError as e:
            raise LakeError(f"{e}; `bgn check --full` names its file") from None
        yield partition, pa.record_batch(filled)
