"""DuckDB over one Arrow batch of games at a time: the vectorised half of the exports.

The exports turn nested move lists into text. Doing that per move in Python costs ~1 µs a field; DuckDB's
list lambdas build the same strings in C++ on all cores. The macros here are the one definition of how an
eval and a clock are written, shared by the JSON and PGN exports:

- eval: as lichess writes it in PGN, pawns from White's side with one or two decimals (`0.17`, `-1.5`,
  `0.0`), or `#n` / `#-n` for a mate;
- clock: `h:mm:ss`, with the tenth when it is not zero (`0:00:09.5`).

Both exports then nest a game's variations in Python: `branches` and `unfold` are that walk, shared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import duckdb
import pyarrow as pa

Line = dict[str, Any]
Nested = TypeVar("Nested")

MACROS = r"""
create macro eval_text(cp, mate) as case
    when mate is not null then '#' || mate
    when cp is not null then
        if(cp < 0, '-', '') || (abs(cp) // 100) || '.'
        || if(abs(cp) % 10 = 0, ((abs(cp) % 100) // 10)::varchar, lpad((abs(cp) % 100)::varchar, 2, '0'))
end;

create macro clock_text(t) as
    (t // 36000) || ':' || lpad((t // 600 % 60)::varchar, 2, '0') || ':'
    || lpad((t // 10 % 60)::varchar, 2, '0') || if(t % 10 = 0, '', '.' || (t % 10));

-- clk: decimal(9, 1) seconds; clock_text takes whole tenths.
create macro clk_text(clk) as clock_text((clk * 10)::bigint);
"""


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the macros, timestamps shown in UTC."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    con.execute(MACROS)
    return con


def run(con: duckdb.DuckDBPyConnection, games: pa.Table, query: str) -> pa.Table:
    """`query` over `games`, which it reads as the table `games`."""
    con.register("games", games)
    try:
        return con.sql(query).to_arrow_table()
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
