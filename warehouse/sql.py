"""DuckDB over the lake: a connection with the SQL library's views, and the library's questions by name.

The files of `sql/` are plain SQL for the duckdb CLI, each starting with `import database 'sql/views';`
(a path relative to the project's root). `connect()` runs that import by its absolute path, with the lake
set in the `chess_lake` variable, so the same file text runs from any working directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import polars as pl

from warehouse.lake import default_lake

ROOT = Path(__file__).resolve().parents[1]
SQL_DIR = ROOT / "sql"
VIEWS_DIR = SQL_DIR / "views"
# The statement by which every question file reaches the shared views from the project's root.
VIEWS_IMPORT = "import database 'sql/views';"


def resolve_lake(lake: str | os.PathLike[str] | None = None) -> Path:
    """The lake's absolute path: `lake`, else $CHESS_LAKE (when not empty), else ./lake."""
    return Path(lake or default_lake()).resolve()


def connect(lake: str | os.PathLike[str] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection over the lake, with the views and macros of sql/views/schema.sql:
    `games` (one row per game), `plies` (one row per move), `timed_plies` (plies with think times),
    `white_points`, `rating_band`, `phase`, `piece_value` and their sort keys."""
    con = duckdb.connect()
    if not con.sql("select 1 from duckdb_functions() where function_name = 'getenv'").fetchall():
        # getenv belongs to the duckdb CLI; the views' fallback to $CHESS_LAKE calls it, but never reaches
        # it here, because chess_lake is set below. Same value as the CLI's for an unset variable.
        con.execute("create temp macro getenv(name) as ''")
    con.execute("set variable chess_lake = $lake", {"lake": str(resolve_lake(lake))})
    con.execute(f"import database {sql_string(VIEWS_DIR)}")
    return con


def questions() -> list[str]:
    """The names of the library's questions: the files of sql/, without `.sql`."""
    return sorted(path.stem for path in SQL_DIR.glob("*.sql"))


def question_text(name: str) -> str:
    """The query of `sql/<name>.sql` without its views import, which `connect()` has done."""
    text = (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")
    if text.count(VIEWS_IMPORT) != 1:
        raise ValueError(f"sql/{name}.sql must hold `{VIEWS_IMPORT}` once")
    return text.replace(VIEWS_IMPORT, "")


def query(
    name: str,
    lake: str | os.PathLike[str] | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> pl.DataFrame:
    """The answer of `sql/<name>.sql` over the lake (see `resolve_lake`), or over `con` from `connect()`."""
    if name not in questions():
        raise ValueError(f"no question {name!r} in {SQL_DIR}; there are: {', '.join(questions())}")
    return (con or connect(lake)).sql(question_text(name)).pl()


def sql_string(path: Path) -> str:
    """`path` as a SQL string literal."""
    return "'" + str(path).replace("'", "''") + "'"
