"""Opening books from the lake: each position of the stored plies, the moves played from it and how they
scored, as Parquet, TSV or PolyGlot `.bin`; and the streaming merge of books built apart.

A book row is one (position, move): `key` (PolyGlot, signed), `fen`, `uci`, `san`, `white_wins`, `draws`,
`black_wins`, `games` (results unknown included), `rated` (games with both Elos) and `mean_rating` (their
mean Elo), `first_date`, `last_date`; sorted by `key`, then `uci`. The positions are those of the stored
keys (`plies.key`: the first `KEYED_PLIES` plies of standard games), so a book is a count of the keyed
plies by (key, move) with their games' results, Elos and dates (`build`, in Rust): no replay but one game
per row, for its FEN and SAN.
"""

from __future__ import annotations

import datetime as dt
import heapq
import re
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse import _core
from warehouse.errors import InputError, LakeError
from warehouse.lake.layout import GAMES, plies_twin

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
# The keyed plies of a file are counted in batches of this many rows, so a big file needs no more memory.
PLIES_BATCH_ROWS = 1 << 20


@dataclass(frozen=True)
class Filters:
    """Which games count: speed (`type`), the mean of the two Elos within [min_rating, max_rating], a date
    range [since, until], games of one player (either side); and rows of at least `min_games` games."""

    type: str | None = None
    min_rating: int | None = None
    max_rating: int | None = None
    since: dt.date | None = None
    until: dt.date | None = None
    player: str | None = None
    min_games: int = 1

    def where(self) -> tuple[str, dict[str, Any]]:
        """A SQL condition on the games view's columns (`games.`), and its parameters."""
        tests = {
            "type": "games.type = $type",
            "min_rating": "games.mean_elo >= $min_rating",
            "max_rating": "games.mean_elo <= $max_rating",
            "since": "games.datetime >= $since::date",
            "until": "games.datetime < $until::date + interval 1 day",
            "player": "(games.white_name = $player or games.black_name = $player)",
        }
        chosen = {name: getattr(self, name) for name in tests if getattr(self, name) is not None}
        return " and ".join(["true", *(tests[name] for name in chosen)]), chosen


def build(con: duckdb.DuckDBPyConnection, filters: Filters = Filters()) -> pa.Table:
    """The book of the lake `con` reads (`warehouse.connect`), for the games `filters` keeps.

    No join: a `games/` file and its `plies/` twin hold the same games in the same order, each game's plies
    in a row, so a keyed ply's row number in its file names its game (`_core.BookCounter`, which counts
    the (key, move) rows and replays one game of each for its FEN and SAN). Per file, DuckDB reads the
    keyed plies' squares; the games' columns come from the games view, filters applied there."""
    where, params = filters.where()
    ((lake,),) = con.sql("select getvariable('chess_lake')").fetchall()
    counted = con.sql(
        f"""
        select
            filename,
            file_row_number as row,
            game_key,
            result,
            (white_elo + black_elo)::integer as elo_sum,
            epoch_ms(datetime) as date_ms,
            start_fen
        from games
        where games.variant = 'Standard' and {where}
        """,
        params=params,
    ).to_arrow_table()
    counter = _core.BookCounter()
    for name, games in by_file(counted).items():
        try:  # the kernel's errors are ValueErrors: plies that do not fit their games (a damaged lake)
            count_file(con, counter, lake, name, games)
        except ValueError as e:
            raise LakeError(f"{name}: {str(e).splitlines()[0]}") from None
    try:
        book = counter.finish(filters.min_games)
    except ValueError as e:  # a sample game whose moves do not replay
        raise LakeError(f"{lake}: {str(e).splitlines()[0]}") from None
    return pa.Table.from_batches([pa.record_batch(book)]).cast(BOOK_SCHEMA)


def count_file(
    con: duckdb.DuckDBPyConnection, counter: _core.BookCounter, lake: str, name: str, games: pa.RecordBatch
) -> None:
    """Counts the keyed plies of the `games/` file `name` (its plies twin) of the games `games` of it."""
    # Where each game's plies start in the twin: every game of the file counts, in file order.
    n_plies = con.sql("select n_plies from read_parquet($path)", params={"path": glob_escaped(name)})
    counter.start_file(n_plies.to_arrow_table()["n_plies"].combine_chunks(), games)
    plies = con.sql(
        "select file_row_number, key, f, t, promote from read_parquet($path, file_row_number = true) "
        "where key is not null",
        params={"path": glob_escaped(plies_file(lake, name))},
    )
    for batch in plies.to_arrow_reader(PLIES_BATCH_ROWS):
        counter.add_plies(batch)


def by_file(table: pa.Table) -> dict[str, pa.RecordBatch]:
    """The rows of `table` but its `filename` of each file, by that name, in the order of the names."""
    names = table["filename"].combine_chunks().dictionary_encode()
    indices = names.indices.to_numpy()
    order = np.argsort(indices, kind="stable")
    bounds = np.searchsorted(indices[order], np.arange(len(names.dictionary) + 1))
    rows = table.drop_columns(["filename"]).take(order)
    batch = pa.RecordBatch.from_arrays([c.combine_chunks() for c in rows.columns], schema=rows.schema)
    parts = {names.dictionary[i].as_py(): (bounds[i], bounds[i + 1]) for i in range(len(names.dictionary))}
    return {name: batch.slice(start, stop - start) for name, (start, stop) in sorted(parts.items())}


def plies_file(lake: str, games_file: str) -> str:
    """The `plies/` twin of the `games/` file `games_file` of the lake at `lake` (as the views name them)."""
    prefix = f"{lake}/{GAMES}/"
    if not games_file.startswith(prefix):
        raise ValueError(f"{games_file!r} is not a file of {prefix}")
    return f"{lake}/{plies_twin(games_file[len(lake) + 1 :])}"


def glob_escaped(path: str) -> str:
    """`path` as a DuckDB file pattern naming it alone (its `[`, `]`, `?`, `*` escaped, as lake_path does)."""
    return re.sub(r"([][?*])", r"[\1]", path)


def write(book: pa.Table, out: str | Path, fmt: str) -> None:
    """Writes `book` as `fmt`: `parquet`, `tsv` (one row a line, a header, the book's columns) or `bin`
    (PolyGlot: 16-byte entries sorted by key, weight = 2 x wins + draws of the side to move)."""
    if fmt == "parquet":
        pq.write_table(book, out, compression="zstd")
    elif fmt == "tsv":
        with open(out, "w", encoding="utf-8") as f:
            f.write("\t".join(book.column_names) + "\n")
            for row in book.to_pylist():
                f.write("\t".join("" if v is None else str(v) for v in row.values()) + "\n")
    elif fmt == "bin":
        Path(out).write_bytes(b"".join(polyglot_entries(book)))
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


def merge(books: Iterable[str | Path], out: str | Path, batch_rows: int = 65_536) -> int:
    """Merges Parquet books (each sorted by key, uci, as `build` writes them) into one at `out`, summing the
    counts of a row present in several: one pass, a batch of each input in memory. Returns the rows."""
    streams = [_rows(path, batch_rows) for path in books]
    written = 0
    with pq.ParquetWriter(out, BOOK_SCHEMA, compression="zstd") as writer:
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
