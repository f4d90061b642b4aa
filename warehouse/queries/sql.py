"""DuckDB over the lake: a connection with the SQL library's views, and the library's questions by name.

The files of `sql/` are plain SQL for the duckdb CLI, each starting with `import database 'sql/views';`
(a path relative to the project's root). `connect()` runs that import by its absolute path, with the lake
set in the `chess_lake` variable, so the same file text runs from any working directory. A lake on S3 is
read through the lake's own pyarrow filesystem, registered in DuckDB as an fsspec filesystem: the same
AWS_* environment, endpoint, timeouts and retries as loads and exports (the duckdb CLI uses its httpfs
extension instead, see sql/views/schema.sql).
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import duckdb
import polars as pl
from fsspec.implementations.arrow import ArrowFSWrapper

from warehouse.errors import DamagedFile, LakeError
from warehouse.lake import Lake
from warehouse.lake.layout import GAMES
from warehouse.scratch import new_folder_path

# The SQL library: the checkout's sql/, reached through the symlink warehouse/library/sql so that the wheel
# can carry it inside the package (pyproject.toml: [tool.maturin] include). From its parent folder,
# `duckdb < sql/<question>.sql` runs as from the project's root.
SQL_DIR = (Path(__file__).parents[1] / "library" / "sql").resolve()
VIEWS_DIR = SQL_DIR / "views"
# The statement by which every question file reaches the shared views from the project's root.
VIEWS_IMPORT = "import database 'sql/views';"
# How every question file starts, for the duckdb CLI: stop at the first error (so the line saying what to do
# is the only one), fail first where sql/views cannot be found from the working directory, import the views.
# connect() has imported them: `question_text` drops these lines.
PREAMBLE = (
    ".bail on\n"
    "set variable chess_sql_found = if(exists(from glob('sql/views/schema.sql')), true, error('sql/views not "
    'found here: run from the folder holding sql/ (a checkout; installed: cd "$(python -m '
    "warehouse.queries.sql --path)/..\"), or ask `bgn query NAME`'));\n" + VIEWS_IMPORT
)
# The environment variables the views read with getenv.
VIEWS_ENV = re.compile(r"getenv\('(\w+)'\)")
# How DuckDB names a data file it cannot read (an InvalidInputException): cut short ("No magic bytes found
# at end of file '<path>'"), or a page that does not decompress or decode ("Failed to read file "<path>":
# ZSTD Decompression failure").
DAMAGED_FILE = re.compile(r"""(?: at end of file |Failed to read file )['"](.+?\.parquet)['"]:? ?""")


def resolve_lake(lake: Lake) -> str:
    """The lake as the views read it: a local lake by its absolute path, an S3 one as ``s3://bucket/prefix``."""
    return lake.root if lake.local else f"s3://{lake.root}"


def connect(
    lake: str | os.PathLike[str] | None = None, variant: str | None = None, spill: str | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection over the lake (a directory or s3://bucket/prefix, see `resolve_lake`),
    with the views and macros of sql/views/schema.sql: `games` (one row per game), `rated_games` (both Elos
    and a result known), `plies` (one row per move, the lake's plies/ table), `game_plies` (plies with their
    game's columns), `timed_plies` (those with clocks before the move and think times), `mover`,
    `white_points`, `rating_band`, `phase`, `piece_value`, `material_swing` and their sort keys.

    The views count standard chess (Chess960 included) unless `variant` names another (`Atomic`,
    `Crazyhouse`…; `all`: every game): it sets the views' variable `variant` (see sql/views/schema.sql),
    which `set variable variant = …` changes later.

    Past its memory DuckDB spills to the folder `spill` (its `temp_directory`), by default a new one in this
    process's scratch folder (`warehouse.scratch.process_folder`): never DuckDB's own default, `.tmp` in
    the working directory, where a query killed while spilling left it.

    :raises LakeError: for no lake, a lake that holds no games yet, or one of another layout (see
        `Lake.open_existing`); the duckdb CLI refuses these through the views, in one line too."""
    con = duckdb.connect()
    con.execute(f"set temp_directory = {sql_string(spill or new_folder_path('duckdb'))}")
    if not con.sql("select 1 from duckdb_functions() where function_name = 'getenv'").fetchall():
        # getenv belongs to the duckdb CLI: the same answers here, for the variables the views read. A macro
        # of constants, not a Python function: registering one makes duckdb 2.0 print leak warnings at exit.
        con.execute(getenv_macro((VIEWS_DIR / "schema.sql").read_text(encoding="utf-8")))
    opened = Lake.open_existing(lake)
    if opened.layout() is not None and not opened.exists(GAMES):
        # Loads ran but wrote no game (all rejected): the views have no table to read.
        raise LakeError(f"{opened.location}: the lake holds no games yet (its loads' rejects: rejects/)")
    if not opened.local:
        # S3 through the lake's own pyarrow filesystem (the loader's credentials, endpoint, timeouts and
        # retries), which DuckDB then uses for s3:// paths: no httpfs extension to install or configure.
        con.register_filesystem(ArrowFSWrapper(opened.fs))
        con.execute("set variable chess_lake_query = ''")
    con.execute("set variable chess_lake = $lake", {"lake": resolve_lake(opened)})
    if variant is not None:
        con.execute("set variable variant = $variant", {"variant": variant})
    con.execute(f"import database {sql_string(VIEWS_DIR)}")
    return con


def connected(
    lake: str | os.PathLike[str] | None, con: duckdb.DuckDBPyConnection | None
) -> tuple[Lake, duckdb.DuckDBPyConnection]:
    """The lake and the connection of a function given either or both: `con` (from `connect()`) reads
    its own lake (the `chess_lake` it was opened with) when `lake` is None, never the default one; without
    `con`, a new connection to `lake`."""
    if con is None:
        return Lake.open(lake), connect(lake)
    if lake is None:
        ((lake,),) = con.sql("select getvariable('chess_lake')").fetchall()
    return Lake.open(lake), con


def damaged_file(error: BaseException) -> DamagedFile | None:
    """The `DamagedFile` a DuckDB error over the lake stands for when it names a data file it could not
    read (`DAMAGED_FILE`), else None."""
    if not isinstance(error, duckdb.InvalidInputException):
        return None
    text = str(error).splitlines()[0].removeprefix("Invalid Input Error: ")
    found = DAMAGED_FILE.search(text)
    if found is None:
        return None
    return DamagedFile(found.group(1), (text[: found.start()] + text[found.end() :]).strip() or text)


def questions() -> list[str]:
    """The names of the library's questions: the files of sql/, without `.sql`."""
    return sorted(path.stem for path in SQL_DIR.glob("*.sql"))


def question_text(name: str) -> str:
    """The query of `sql/<name>.sql` without its `PREAMBLE`: `connect()` has imported the views."""
    text = (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")
    if text.count(PREAMBLE) != 1:
        raise ValueError(f"sql/{name}.sql must hold its PREAMBLE (warehouse.queries.sql) once")
    return text.replace(PREAMBLE, "")


def question_asked(name: str) -> str:
    """The question `sql/<name>.sql` answers, as its first line says (`-- Question: …`)."""
    first = (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8").split("\n", 1)[0]
    return first.removeprefix("-- Question: ")


def query(
    name: str,
    lake: str | os.PathLike[str] | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
    variant: str | None = None,
) -> pl.DataFrame:
    """The answer of `sql/<name>.sql` over the lake (see `resolve_lake`) counting the games of `variant`
    (see `connect`), or over `con` from `connect()`."""
    if name not in questions():
        raise ValueError(f"no question {name!r} in {SQL_DIR}; there are: {', '.join(questions())}")
    return (con or connect(lake, variant)).sql(question_text(name)).pl()


def getenv_macro(views: str) -> str:
    """A `getenv(name)` macro giving this process's value of each variable `views` reads, '' for others
    and unset ones, as the CLI's getenv does."""
    names = sorted(set(VIEWS_ENV.findall(views)))
    cases = " ".join(f"when {sql_string(n)} then {sql_string(os.environ.get(n, ''))}" for n in names)
    return f"create temp macro getenv(name) as case name {cases} else '' end"


def sql_string(text: str | Path) -> str:
    """`text` as a SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


def main(argv: list[str] | None = None) -> None:
    """`python -m warehouse.queries.sql`: the questions' names, or with --path the folder of their files."""
    parser = argparse.ArgumentParser(
        prog="python -m warehouse.queries.sql",
        description="The SQL library: its questions' names, one a line, or where its files are.",
    )
    parser.add_argument(
        "--path",
        action="store_true",
        help="print the folder of the question files; `duckdb < sql/<question>.sql` runs from its parent",
    )
    args = parser.parse_args(argv)
    print(SQL_DIR if args.path else "\n".join(questions()))


if __name__ == "__main__":
    main()
