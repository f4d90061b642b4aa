"""Opening books from the lake: each position of the stored plies, the moves played from it and how they
scored, as Parquet, TSV or PolyGlot `.bin`; and the streaming merge of books built apart.

A book row is one (position, move): `key` (PolyGlot, signed), `fen`, `uci`, `san`, `white_wins`, `draws`,
`black_wins`, `games` (results unknown included), `rated` (games with both Elos) and `mean_rating` (their
mean Elo), `first_date`, `last_date`; sorted by `key`, then `uci`. The positions are those of the stored
keys (`plies.key`: the first `KEYED_PLIES` plies of standard games), so a book is a `group by` of the plies
with their games: no replay but one game per row, for its FEN and SAN.
"""

from __future__ import annotations

import datetime as dt
import heapq
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
from warehouse.errors import InputError
from warehouse.lake.plies import KEYED_PLIES
from warehouse.positions.replay import MOVE_FIELDS, moves_list

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
    """The book of the lake `con` reads (`warehouse.connect`), for the games `filters` keeps."""
    where, params = filters.where()
    rows = con.sql(
        f"""
        select
            plies.key,
            plies.f || plies.t || coalesce(lower(plies.promote), '') as uci,
            count(*) filter (where games.result = 'W') as white_wins,
            count(*) filter (where games.result = 'D') as draws,
            count(*) filter (where games.result = 'B') as black_wins,
            count(*) as games,
            count(games.mean_elo) as rated,
            avg(games.mean_elo) as mean_rating,
            min(games.datetime) as first_date,
            max(games.datetime) as last_date,
            min(plies.game_key) as sample_game,
            arg_min(plies.ply, plies.game_key) as sample_ply
        from plies
        join games on games.game_key = plies.game_key
        where plies.key is not null and games.variant = 'Standard' and {where}
        group by all
        having count(*) >= $min_games
        order by plies.key, uci
        """,
        params={**params, "min_games": filters.min_games},
    ).to_arrow_table()
    fens, sans = describe(con, rows)
    return pa.table(
        {
            "key": rows["key"],
            "fen": pa.array(fens, pa.string()),
            "uci": rows["uci"],
            "san": pa.array(sans, pa.string()),
            **{name: rows[name] for name in BOOK_SCHEMA.names[4:]},
        }
    ).cast(BOOK_SCHEMA)


def describe(con: duckdb.DuckDBPyConnection, rows: pa.Table) -> tuple[list[str], list[str]]:
    """The FEN and SAN of each book row, from one game that played it (`sample_game`, `sample_ply`), replayed
    from its stored plies (a scan of the few move columns of `plies`, not of `games.moves`)."""
    if rows.num_rows == 0:
        return [], []
    con.register("book_samples", rows.select(["sample_game"]))
    try:
        plies = con.sql(
            f"select game_key, {', '.join(MOVE_FIELDS)} from plies where ply < {KEYED_PLIES} "
            "and game_key in (select sample_game from book_samples) order by game_key, ply"
        ).to_arrow_table()
        games = con.sql(
            "select game_key, start_fen, variant from games "
            "where game_key in (select sample_game from book_samples) order by game_key"
        ).to_arrow_table()
    finally:
        con.unregister("book_samples")
    keys = games["game_key"].to_numpy()
    counts = np.bincount(keys.searchsorted(plies["game_key"].to_numpy()), minlength=len(keys))
    columns = [
        moves_list(plies, counts),
        games["start_fen"].combine_chunks(),
        games["variant"].combine_chunks(),
    ]
    batch = pa.record_batch(columns, names=["moves", "start_fen", "variant"])
    samples = batch.take(pa.array(keys.searchsorted(rows["sample_game"].to_numpy())))
    fens, sans, _ = _core.moves_at(samples, rows["sample_ply"].to_pylist())
    return fens, sans


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
