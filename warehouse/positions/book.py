"""Opening books from the lake: each position of the stored plies, the moves played from it and how they
scored, as Parquet, TSV or PolyGlot `.bin`; and the streaming merge of books built apart.

A book row is one (position, move): `key` (PolyGlot, signed), `fen`, `uci`, `san`, `white_wins`, `draws`,
`black_wins`, `games` (results unknown included), `rated` (games with both Elos) and `mean_rating` (their
mean Elo), `first_date`, `last_date`; sorted by `key`, then `uci`. The moves are those of the first
`BOOK_PLIES` plies of standard games, between the stored keys (`plies.key`: the first `KEYED_PLIES`
positions), so a book is a count of pairs of consecutive keys with their games' results, Elos and dates
(`build`, in Rust), each row's move named at the end from one game's keys (docs/positions.md).
"""

from __future__ import annotations

import heapq
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from warehouse import _core
from warehouse.errors import InputError, LakeError
from warehouse.export_out import OutputFile
from warehouse.filters import GameFilters
from warehouse.lake.dedup import SortedIds
from warehouse.lake.layout import GAMES, plies_twin
from warehouse.lake.location import Lake
from warehouse.lake.parquet import read_parquet
from warehouse.lake.plies import KEYED_PLIES

BOOK_SCHEMA = pa.schema(
    [
        ("key", pa.int64()),
        ("fen", pa.string()),
        ("uci", pa.string()),
        ("san", pa.string()),
        ("white_wins", pa.int64()),
        ("draws", pa.int64()),
        ("black_wins", pa.int64()),
        ("games", pa.int64()),
        ("rated", pa.int64()),
        ("mean_rating", pa.float64()),
        ("first_date", pa.timestamp("ms", "UTC")),
        ("last_date", pa.timestamp("ms", "UTC")),
    ]
)
FORMATS = ("parquet", "tsv", "bin")
# PolyGlot's promotion pieces, by the UCI letter.
POLYGLOT_PROMOTION = {"": 0, "n": 1, "b": 2, "r": 3, "q": 4}
# PolyGlot writes castling as the king taking its rook.
POLYGLOT_CASTLING = {"e1g1": "e1h1", "e1c1": "e1a1", "e8g8": "e8h8", "e8c8": "e8a8"}
MAX_WEIGHT = 0xFFFF
# The keys are counted in batches of this many rows (512 KiB), which the count reads while they are still
# in the CPU's cache: batches of a million rows took 0.2 CPU-s more on the 1M-game bench lake.
KEY_BATCH_ROWS = 1 << 16
# What a book reads of each games file (the Elos alone of the players).
GAME_COLUMNS = [
    "n_plies",
    "game_key",
    "variant",
    "result",
    "datetime",
    "start_fen",
    "final_key",
    "players.list.element.elo",
]
# A book's moves are those of the first BOOK_PLIES plies: the key of the position each reaches is stored.
BOOK_PLIES = KEYED_PLIES - 1


@dataclass(frozen=True)
class Filters(GameFilters):
    """Which games count (`GameFilters`), and rows of at least `min_games` games."""

    min_games: int = 1


def build(con: duckdb.DuckDBPyConnection, filters: Filters = Filters()) -> pa.Table:
    """The book of the lake `con` reads (`warehouse.connect`), for the games `filters` keeps: the moves of
    their first `BOOK_PLIES` plies.

    No join, and no move read: file by file, a `games/` file's columns and the keys of its `plies/` twin,
    whose rows are the file's games' plies in order, so that a ply's row names its game
    (`_core.BookCounter`, which counts the pairs of consecutive keys and names the moves of the rows
    kept). pyarrow reads the files: it decodes the keys faster than DuckDB hands them over, and reads the
    Elos without the players' names. The filters are the games view's (`Filters.where`): with any, the
    games it keeps are the ones counted."""
    ((location,),) = con.sql("select getvariable('chess_lake')").fetchall()
    kept = kept_keys(con, filters) if filters.selective() else None
    counter = _core.BookCounter(BOOK_PLIES)
    lake = Lake.open(location)
    for rel in lake.parquet_files(GAMES):
        try:  # the kernel's errors are ValueErrors: keys that do not fit their games (a damaged lake)
            count_file(lake, counter, rel, kept)
        except ValueError as e:
            raise LakeError(f"{location}/{rel}: {str(e).splitlines()[0]}") from None
    try:
        book = counter.finish(filters.min_games)
    except ValueError as e:  # the keys of a game no legal move joins
        raise LakeError(f"{location}: {str(e).splitlines()[0]}") from None
    return pa.Table.from_batches([pa.record_batch(book)]).cast(BOOK_SCHEMA)


def kept_keys(con: duckdb.DuckDBPyConnection, filters: Filters) -> SortedIds:
    """The `game_key`s of the standard games `filters` keep."""
    where, params = filters.where()
    kept = con.sql(f"select game_key from games where games.variant = 'Standard' and {where}", params=params)
    keys = SortedIds()
    keys.add(kept.to_arrow_table()["game_key"].to_numpy())
    return keys


def count_file(lake: Lake, counter: _core.BookCounter, rel: str, kept: SortedIds | None) -> None:
    """Counts the plies of the `games/` file `rel` (its `plies/` twin's keys) of its standard games (of
    those whose `game_key` is in `kept`, unless None)."""
    with read_parquet(lake, rel) as parquet:
        games = parquet.read(columns=GAME_COLUMNS, use_threads=False).combine_chunks()
    counted = pc.equal(games["variant"], "Standard")
    if kept is not None:
        counted = pc.and_(counted, pa.array(kept.contains(games["game_key"].to_numpy())))
    players = games["players"]
    elos = [pc.struct_field(pc.list_element(players, side), "elo") for side in (0, 1)]
    columns = {
        "n_plies": games["n_plies"],
        "game_key": games["game_key"],
        "counted": counted,
        "result": games["result"],
        "elo_sum": pc.add(*elos),
        "date_ms": games["datetime"].cast(pa.int64()),
        "start_fen": games["start_fen"],
        "final_key": games["final_key"],
    }
    counter.start_file(
        pa.RecordBatch.from_arrays([c.combine_chunks() for c in columns.values()], list(columns))
    )
    with read_parquet(lake, plies_twin(rel)) as parquet:
        for batch in parquet.iter_batches(KEY_BATCH_ROWS, columns=["key"], use_threads=False):
            counter.add_keys(batch.column(0))
    counter.end_file()


def write(book: pa.Table, out: OutputFile, fmt: str) -> None:
    """Writes `book` as `fmt` into `out` (a new file, see `export_out.output_file`): `parquet`, `tsv` (one
    row a line, a header, the book's columns) or `bin` (PolyGlot: 16-byte entries sorted by key, weight =
    2 x wins + draws of the side to move)."""
    if fmt == "parquet":
        pq.write_table(book, out.sink, compression="zstd")
    elif fmt == "tsv":
        out.write(("\t".join(book.column_names) + "\n").encode())
        for row in book.to_pylist():
            out.write(("\t".join("" if v is None else str(v) for v in row.values()) + "\n").encode())
    elif fmt == "bin":
        out.write(b"".join(polyglot_entries(book)))
    else:
        raise InputError(f"unknown book format {fmt!r}: one of {', '.join(FORMATS)}")


def polyglot_entries(book: pa.Table) -> Iterator[bytes]:
    """PolyGlot's entries of `book`, by key (unsigned) then weight descending; moves that never scored for
    their side (weight 0) are left out, as PolyGlot's own books leave them."""
    entries = []
    for row in book.select(["key", "fen", "uci", "white_wins", "draws", "black_wins"]).to_pylist():
        white = row["fen"].split()[1] == "w"
        weight = 2 * (row["white_wins"] if white else row["black_wins"]) + row["draws"]
        if weight:
            entries.append((row["key"] % (1 << 64), min(weight, MAX_WEIGHT), polyglot_move(row["uci"])))
    for key, weight, move in sorted(entries, key=lambda e: (e[0], -e[1])):
        yield struct.pack(">QHHI", key, move, weight, 0)


def polyglot_move(uci: str) -> int:
    """A UCI move in PolyGlot's 16 bits: to file, to row, from file, from row, promotion (3 bits each)."""
    uci = POLYGLOT_CASTLING.get(uci, uci)
    squares = [(ord(uci[i]) - ord("a"), int(uci[i + 1]) - 1) for i in (0, 2)]
    (from_file, from_row), (to_file, to_row) = squares
    promotion = POLYGLOT_PROMOTION[uci[4:]]
    return to_file | to_row << 3 | from_file << 6 | from_row << 9 | promotion << 12


def merge(books: Iterable[str | Path], out: OutputFile, batch_rows: int = 65_536) -> int:
    """Merges Parquet books (each sorted by key, uci, as `build` writes them) into one in `out` (a new file,
    see `export_out.output_file`), summing the counts of a row present in several: one pass, a batch of
    each input in memory. Returns the rows."""
    streams = [_rows(path, batch_rows) for path in books]
    written = 0
    with pq.ParquetWriter(out.sink, BOOK_SCHEMA, compression="zstd") as writer:
        pending: list[dict[str, Any]] = []
        current: dict[str, Any] | None = None
        for _, row in heapq.merge(*streams, key=lambda item: item[0]):
            if current is not None and (current["key"], current["uci"]) == (row["key"], row["uci"]):
                current = combine(current, row)
                continue
            if current is not None:
                pending.append(current)
            current = row
            if len(pending) >= batch_rows:
                writer.write_table(pa.Table.from_pylist(pending, BOOK_SCHEMA))
                written += len(pending)
                pending = []
        if current is not None:
            pending.append(current)
        writer.write_table(pa.Table.from_pylist(pending, BOOK_SCHEMA))
        written += len(pending)
    return written


def _rows(path: str | Path, batch_rows: int) -> Iterator[tuple[tuple[int, str], dict[str, Any]]]:
    for batch in pq.ParquetFile(path).iter_batches(batch_rows):
        for row in batch.to_pylist():
            yield (row["key"], row["uci"]), row


def combine(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """One book row from two of the same position and move."""
    rated = a["rated"] + b["rated"]
    ratings = [(r["mean_rating"], r["rated"]) for r in (a, b) if r["rated"]]
    dates = [d for r in (a, b) for d in (r["first_date"], r["last_date"]) if d is not None]
    return {
        **a,
        **{name: a[name] + b[name] for name in ("white_wins", "draws", "black_wins", "games", "rated")},
        "mean_rating": sum(m * n for m, n in ratings) / rated if rated else None,
        "first_date": min(dates, default=None),
        "last_date": max(dates, default=None),
    }
