"""A book's files: its rows (`warehouse.positions.book.count`) written as Parquet, Ormulogun's TSV or
PolyGlot `.bin`, a batch at a time; and the streaming merge of Parquet books built apart.

- Parquet: the rows (`BOOK_SCHEMA`), sorted by key then UCI.
- TSV, as Ormulogun's opening book (its `book.tsv` as its board view and `gen-book-graph` read it): for each
  position a row `white wins, draws, black wins, FEN, ` (an empty last field: the position's totals), then a
  row per move `white wins, draws, black wins, FEN, UCI`; tab-separated, no header; the FEN without move
  counters (its first four fields).
- `.bin`: PolyGlot entries (key, move, weight, learn = 0) sorted by key (unsigned) then weight descending;
  weight = 2 x wins + draws of the side to move, capped at 65535; moves of weight 0 are left out, as
  PolyGlot's own books leave them. Castling is written king-takes-rook, as PolyGlot wants.
"""

from __future__ import annotations

import heapq
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from warehouse.errors import InputError, OutputError
from warehouse.positions.book import BOOK_SCHEMA

FORMATS = ("parquet", "tsv", "bin")
# PolyGlot's promotion pieces, by the UCI letter.
POLYGLOT_PROMOTION = {"": 0, "n": 1, "b": 2, "r": 3, "q": 4}
# PolyGlot writes castling as the king taking its rook.
POLYGLOT_CASTLING = {"e1g1": "e1h1", "e1c1": "e1a1", "e8g8": "e8h8", "e8c8": "e8a8"}
MAX_WEIGHT = 0xFFFF
POLYGLOT_ENTRY = np.dtype([("key", ">u8"), ("move", ">u2"), ("weight", ">u2"), ("learn", ">u4")])


class BookWriter(Protocol):
    def add(self, batch: pa.RecordBatch) -> None: ...
    def close(self) -> None: ...


def write(batches: Iterable[pa.RecordBatch], out: str | Path, fmt: str, work: Path) -> int:
    """Writes the book's rows `batches` (whole positions each, sorted) to `out` as `fmt`, through a file in
    `work` (a folder on `out`'s filesystem) renamed into place at the end: a failure leaves no `out`.
    Returns the rows (moves) written.

    :raises OutputError: when `out` exists (a book is written to a new file)."""
    out = Path(out)
    if fmt not in FORMATS:
        raise InputError(f"unknown book format {fmt!r}: one of {', '.join(FORMATS)}")
    written = work / f"book.{fmt}"
    writers: dict[str, Callable[[Path], BookWriter]] = {
        "parquet": ParquetBook,
        "tsv": TsvBook,
        "bin": PolyglotBook,
    }
    writer = writers[fmt](written)
    rows = 0
    try:
        for batch in batches:
            writer.add(batch)
            rows += batch.num_rows
    finally:
        writer.close()
    publish(written, out)
    return rows


def publish(written: Path, out: Path) -> None:
    """Renames the book `written` (on `out`'s filesystem) to `out`, which must not exist."""
    refuse_existing(out)
    os.replace(written, out)


def refuse_existing(out: Path) -> None:
    """:raises OutputError: when `out` exists (a book is written to a new file)."""
    if out.exists():
        raise OutputError(f"{out}: exists; a book is written to a new file")


class ParquetBook:
    def __init__(self, path: Path):
        self.writer = pq.ParquetWriter(path, BOOK_SCHEMA, compression="zstd")

    def add(self, batch: pa.RecordBatch) -> None:
        self.writer.write_batch(batch.select(BOOK_SCHEMA.names).cast(BOOK_SCHEMA))

    def close(self) -> None:
        self.writer.close()


class TsvBook:
    def __init__(self, path: Path):
        self.out = path.open("wb")
        self.options = pcsv.WriteOptions(include_header=False, quoting_style="none")

    def add(self, batch: pa.RecordBatch) -> None:
        pcsv.write_csv(pa.table({"line": tsv_lines(batch)}), self.out, self.options)

    def close(self) -> None:
        self.out.close()


def tsv_lines(batch: pa.RecordBatch) -> pa.Array:
    """The TSV lines of `batch`'s positions: each position's line (its totals, an empty move), then its
    moves' lines."""
    n = batch.num_rows
    keys = batch.column("key").to_numpy()
    first = np.ones(n, bool)
    first[1:] = keys[1:] != keys[:-1]

    def line(*names: str) -> pa.Array:
        fields = [batch.column(name).cast(pa.string()) for name in names]
        return pc.binary_join_element_wise(*fields, "\t")

    moves = line("white_wins", "draws", "black_wins", "fen", "uci")
    positions = pc.binary_join_element_wise(
        line("position_white_wins", "position_draws", "position_black_wins", "fen"), "", "\t"
    ).filter(pa.array(first))
    # Each move's line goes after its row's position lines so far; each position's line just before its
    # first move's.
    before = np.cumsum(first)
    order = np.empty(n + len(positions), np.int64)
    order[np.arange(n) + before] = np.arange(n)
    order[np.flatnonzero(first) + before[first] - 1] = n + np.arange(len(positions))
    return pa.concat_arrays([moves, positions]).take(pa.array(order))


class PolyglotBook:
    """PolyGlot's entries by unsigned key: the rows come by signed key, so the entries of negative keys
    (the upper half, unsigned) wait in a file beside, appended at the end."""

    def __init__(self, path: Path):
        self.path = path
        self.out = path.open("wb")
        self.upper: BinaryIO = path.with_suffix(".upper").open("w+b")

    def add(self, batch: pa.RecordBatch) -> None:
        entries = polyglot_entries(batch)
        upper = entries["key"] >= np.uint64(1 << 63)
        self.out.write(entries[~upper].tobytes())
        self.upper.write(entries[upper].tobytes())

    def close(self) -> None:
        self.upper.seek(0)
        shutil.copyfileobj(self.upper, self.out)
        self.upper.close()
        self.out.close()


def polyglot_entries(batch: pa.RecordBatch) -> np.ndarray:
    """PolyGlot's entries of `batch`'s rows, by key (unsigned) then weight descending; moves that never
    scored for their side (weight 0) are left out."""
    side = pc.list_element(pc.split_pattern(batch.column("fen"), " ", max_splits=2), 1)
    white = pc.equal(side, "w").to_numpy(zero_copy_only=False)
    wins = np.where(white, batch.column("white_wins").to_numpy(), batch.column("black_wins").to_numpy())
    weight = np.minimum(2 * wins + batch.column("draws").to_numpy(), MAX_WEIGHT)
    moves = batch.column("uci").dictionary_encode()
    codes = np.array([polyglot_move(uci) for uci in moves.dictionary.to_pylist()], np.uint16)
    keys = batch.column("key").to_numpy().view(np.uint64)
    kept = np.flatnonzero(weight > 0)
    kept = kept[np.lexsort((-weight[kept], keys[kept]))]
    entries = np.zeros(len(kept), POLYGLOT_ENTRY)
    entries["key"] = keys[kept]
    entries["move"] = codes[moves.indices.to_numpy()[kept]] if len(codes) else 0
    entries["weight"] = weight[kept]
    return entries


def polyglot_move(uci: str) -> int:
    """A UCI move in PolyGlot's 16 bits: to file, to row, from file, from row, promotion (3 bits each)."""
    uci = POLYGLOT_CASTLING.get(uci, uci)
    squares = [(ord(uci[i]) - ord("a"), int(uci[i + 1]) - 1) for i in (0, 2)]
    (from_file, from_row), (to_file, to_row) = squares
    promotion = POLYGLOT_PROMOTION[uci[4:]]
    return to_file | to_row << 3 | from_file << 6 | from_row << 9 | promotion << 12


def merge(books: Iterable[str | Path], out: str | Path, batch_rows: int = 65_536) -> int:
    """Merges Parquet books (each sorted by key, uci, as `write` writes them) into one at `out`, summing the
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
