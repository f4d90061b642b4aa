"""DuckDB over one Arrow batch of games at a time: the vectorised half of the study export.

The study export turns nested move lists into text. Doing that per move in Python costs ~1 µs a field;
DuckDB's list lambdas build the same strings in C++. The SQL lives in sql/exports/: text.sql writes an eval
and a clock as lichess does (the PGN and BGN JSON exports write the same in Rust: crates/bgn-core/src/
export_pgn.rs), study.sql the study's table macros over a batch. Python nests a game's variations:
`branches` and `unfold` are that walk.

The lake stores a move's `san` only where the source wrote something else than the SAN the position gives;
`with_san` fills the others back (the Rust core replays the batch) before an export's SQL reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pyarrow as pa

from warehouse import _core
from warehouse.errors import LakeError
from warehouse.lake.layout import Partition

Line = dict[str, Any]
Nested = TypeVar("Nested")

# sql/exports, through the symlink the wheel carries (see warehouse/sql.py's SQL_DIR).
EXPORTS_DIR = (Path(__file__).parent / "library" / "sql" / "exports").resolve()


def connect(export: str) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the macros of sql/exports/text.sql and sql/exports/<export>.sql,
    timestamps shown in UTC."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    for name in ("text", export):
        con.execute((EXPORTS_DIR / f"{name}.sql").read_text(encoding="utf-8"))
    return con


Batches = Iterator[tuple[Partition, pa.RecordBatch]]


def with_san(batches: Batches) -> Batches:
    """`batches` of games with every null `san` (mainline and variations) set to the SAN the position gives
    (`_core.fill_san`); the batches hold `moves`, `variations`, `start_fen`, `variant` and, for its errors,
    `game_id`.

    :raises LakeError: when a move is not legal where it stands (a damaged file the lake wrote without page
        checksums, `warehouse.lake.parquet.READ_OPTIONS`), naming the game and ply.
    """
    for partition, batch in batches:
        try:
            filled = _core.fill_san(batch)
        except ValueError as e:
            raise LakeError(f"{e}; `python -m warehouse.check --full` names its file") from None
        yield partition, pa.record_batch(filled)


def run(con: duckdb.DuckDBPyConnection, games: pa.Table, macro: str) -> pa.Table:
    """The rows of the table macro `macro` over `games`."""
    con.register("games", games)
    try:
        return con.sql(f"select * from {macro}('games')").to_arrow_table()
    finally:
        con.unregister("games")


def branches(variations: list[Line]) -> dict[tuple[int, int], list[Line]]:
    """A game's lines by where they branch off: (the id of their parent line, the index of the move they
    replace in it), in source order (the lake sorts `variations` by id)."""
    children: dict[tuple[int, int], list[Line]] = {}
    for line in variations:
        children.setdefault((line["parent"], line["ply"]), []).append(line)
    return children


def unfold(root: Nested, expand: Callable[[Nested], list[str | Nested]]) -> list[str]:
    """The text pieces of `root`: `expand` gives a line's pieces, text and the lines nested in it, in
    order; nested lines are expanded in their place.

    With an explicit stack, not recursion: the lake keeps variations nested 100,000 deep, far past
    Python's recursion limit.
    """
    pieces: list[str] = []
    stack: list[str | Nested] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            pieces.append(item)
        else:
            stack.extend(reversed(expand(item)))
    return pieces
