"""DuckDB over one Arrow batch of games at a time: the vectorised half of the exports.

The exports turn nested move lists into text. Doing that per move in Python costs ~1 µs a field; DuckDB's
list lambdas build the same strings in C++ on all cores. The macros here are the one definition of how an
eval and a clock are written, shared by the JSON and PGN exports:

- eval: as lichess writes it in PGN, pawns from White's side with one or two decimals (`0.17`, `-1.5`,
  `0.0`), or `#n` / `#-n` for a mate;
- clock: `h:mm:ss`, with the tenth when it is not zero (`0:00:09.5`).
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

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
