"""One reading of a FEN for every path: the SQL macro `fen_key` (sql/views/schema.sql; `games_at`,
sql/explorer.sql, the duckdb CLI), the Rust core's `_core.fen_key` (the Python paths: `explore`, `search`,
`python -m loaders.positions`) and python-chess (tests/fen_oracle.py), over the positions of real games in
every spelling python-chess writes (X-FEN, Shredder-FEN; Chess960 games from the corpora) and the FENs near
them or none: each FEN is refused by both paths, or read by both to python-chess's key."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import duckdb
import pytest
import support
from fen_oracle import GARBAGE, near_misses, python_chess_key, python_chess_only, real_fens
from support import CORPORA

from warehouse import _core
from warehouse.queries.sql import VIEWS_DIR, sql_string

# Every how many games of a file of the corpora have all their positions checked (every Chess960 game
# has, and every game of tests/data): all games took 5 minutes, python-chess's reading of them most of it
# (one run compared all 1.66 M FENs).
EVERY = 60
# Of how many real FENs the near misses are made.
NEAR = 1500
MAX_REPORTED = 10
START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


@pytest.fixture(scope="module")
def views() -> duckdb.DuckDBPyConnection:
    """A connection with the SQL library's views and macros; no lake (the FEN macros read none)."""
    con = duckdb.connect()
    con.execute("set variable chess_lake = '/nonexistent'")
    con.execute("create temp macro getenv(name) as ''")  # the CLI's function, as warehouse.connect does
    con.execute(f"import database {sql_string(VIEWS_DIR)}")
    return con


@pytest.fixture(scope="module")
def real() -> list[str]:
    fens = sorted(real_fens(EVERY))
    chess960 = [f for f in fens if f.split()[2].strip("KQkq-")]  # rights by file letter: Shredder/X-FEN
    assert len(fens) > 20_000 and (chess960 or not CORPORA.exists())
    return fens


def sql_keys(con: duckdb.DuckDBPyConnection, fens: list[str]) -> dict[str, int | None]:
    """The SQL key of each FEN, None where fen_key raises: fen_problem, the reason it raises, is read for
    all at once (a raise would end the query), then fen_key for those it reads."""
    rows = con.execute(
        "select fen, fen_problem(fen_fields(fen)) from (select unnest($fens) as fen)", {"fens": fens}
    ).fetchall()
    keys: dict[str, int | None] = {fen: None for fen, problem in rows if problem is not None}
    read = [fen for fen, problem in rows if problem is None]
    keys |= dict(
        con.execute("select fen, fen_key(fen) from (select unnest($fens) as fen)", {"fens": read}).fetchall()
    )
    return keys


def rust_key(fen: str) -> int | None:
    try:
        return _core.fen_key(fen)
    except ValueError:
        return None


def disagreements(con: duckdb.DuckDBPyConnection, fens: list[str]) -> list[str]:
    """Where SQL and Rust disagree (one refuses, or their keys differ), or differ from python-chess (but
    where python-chess reads what the project refuses on purpose, `python_chess_only`)."""
    sql = sql_keys(con, fens)
    found = []
    for fen in fens:
        rust, theirs = rust_key(fen), python_chess_key(fen)
        if sql[fen] != rust:
            found.append(f"{fen!r}: SQL {sql[fen]}, Rust {rust}")
        elif rust != theirs and not (rust is None and python_chess_only(fen)):
            found.append(f"{fen!r}: ours {rust}, python-chess {theirs}")
    return found


def report(found: list[str], checked: int) -> None:
    if found:
        shown = "\n".join(found[:MAX_REPORTED])
        pytest.fail(f"{len(found)} of {checked} FENs read otherwise:\n{shown}", pytrace=False)


def test_real_positions_in_every_spelling(views: duckdb.DuckDBPyConnection, real: list[str]) -> None:
    report(disagreements(views, real), len(real))


def test_near_misses_and_garbage(views: duckdb.DuckDBPyConnection, real: list[str]) -> None:
    rng = random.Random(26)
    fens = GARBAGE + [near for fen in rng.sample(real, NEAR) for near in near_misses(fen, rng)]
    fens = sorted(set(fens))
    refused = sum(rust_key(fen) is None for fen in fens)
    assert 0.2 * len(fens) < refused < 0.8 * len(fens)  # both kinds, in numbers
    report(disagreements(views, fens), len(fens))


def test_sql_refuses_in_one_line(views: duckdb.DuckDBPyConnection, real: list[str]) -> None:
    """fen_key itself raises, one line naming the FEN and why, for each kind of FEN it refuses."""
    rng = random.Random(27)
    refused = [fen for fen in GARBAGE + list(near_misses(rng.choice(real), rng)) if rust_key(fen) is None]
    for fen in refused:
        with pytest.raises(duckdb.InvalidInputException) as raised:
            views.execute("select fen_key($fen)", {"fen": fen}).fetchall()
        message = str(raised.value)
        assert message.startswith("Invalid Input Error: invalid FEN") and "\n" not in message, message
    assert views.execute("select fen_key(null)").fetchone() == (None,)


@pytest.mark.parametrize(
    "query",
    [
        "select count(*) from games_at('{fen}');",
        "set variable explorer_fen = '{fen}';\n.read sql/explorer.sql",
    ],
)
@pytest.mark.parametrize("fen", ["hello", "k7/8/8/8/8/8/8/6K w - - 0 1", START.replace(" w ", " x ")])
def test_duckdb_cli_refuses_in_one_line(sample_lake: Path, query: str, fen: str) -> None:
    run = support.run_command(
        ["duckdb"],
        stdin=f"import database 'sql/views';\n{query.format(fen=fen)}\n".encode(),
        env={"PATH": str(Path(shutil.which("duckdb") or "duckdb").parent), "CHESS_LAKE": str(sample_lake)},
    )
    assert run.returncode != 0 and not run.stdout.strip(), run.stdout
    assert run.stderr.count("\n") == 1 and "invalid FEN" in run.stderr, run.stderr
