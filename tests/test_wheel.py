"""The package as a user installs it (issue 17): a wheel, outside the checkout, and a demo without Java.

One wheel is built per run (`maturin build --release`, reusing cargo's cache in target/). `make demo`
installs it into a new virtual environment, with `java` hidden from the PATH and nothing but the wheel and
its runtime dependencies installed. Then, from a folder outside the checkout and through that environment
only: the sample is loaded, every question is asked through `warehouse.query` and answered as the
checkout answers it, the exports write every game, and the duckdb CLI runs a question file found through
`python -m warehouse.queries.sql --path`.
"""

from __future__ import annotations

import bz2
import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.polyglot
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from loaders.cli import STARTING_FEN
from warehouse.positions.explorer import explore
from warehouse.queries.sql import query, questions

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "lichess_2025-05_sample.pgn.zst"
SAMPLE_GAMES = 438

# The build and the installation from PyPI take minutes: once per run, for the whole module.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


@dataclass(frozen=True)
class Installed:
    """A virtual environment holding the wheel, a user's PATH for it, and a folder outside the checkout."""

    venv: Path
    env: dict[str, str]
    work: Path
    demo: str

    def run(self, *command: str | Path, cwd: Path | None = None) -> str:
        """The standard output of `command` in this environment (in `work` unless `cwd`); fails on error."""
        done = subprocess.run(
            [str(part) for part in command],
            cwd=cwd or self.work,
            env=self.env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def python(self, *args: str | Path, cwd: Path | None = None) -> str:
        return self.run(self.venv / "bin" / "python", *args, cwd=cwd)


def hide(program: str, path: str, shadows: Path) -> str:
    """`path` without `program`: each folder holding it becomes a folder of links to everything else in it,
    so that the rest of /usr/bin (make, sh…) stays reachable."""
    folders = []
    for n, folder in enumerate(path.split(os.pathsep)):
        if not (Path(folder) / program).exists():
            folders.append(folder)
            continue
        shadow = shadows / str(n)
        shadow.mkdir(parents=True)
        for entry in Path(folder).iterdir():
            if entry.name != program:
                (shadow / entry.name).symlink_to(entry)
        folders.append(str(shadow))
    return os.pathsep.join(folders)


def build_wheel(out: Path) -> Path:
    """The wheel of this checkout, built as a release would be."""
    build = ["maturin", "build", "--release", "--interpreter", sys.executable, "--out", str(out)]
    subprocess.run([sys.executable, "-m", *build], cwd=ROOT, check=True, capture_output=True)
    (wheel,) = out.glob("bgn_warehouse-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """`make demo` with the built wheel, into a new virtual environment, java out of the PATH."""
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(tmp / "dist")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # The environment a user has after activating the venv. Variables of an enclosing make (make test)
    # stay out: they would override the demo's own; so does a PYTHONPATH (a checkout on it would be
    # imported instead of the wheel).
    outside = ("MAKE", "MFLAGS", "VIRTUAL_ENV", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(outside)}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{hide('java', env['PATH'], tmp / 'path')}"
    assert shutil.which("java", path=env["PATH"]) is None
    demo = [
        "make",
        "--no-print-directory",
        "demo",
        f"PYTHON={venv / 'bin' / 'python'}",
        f"INSTALL='{wheel}[cli]'",
        f"LAKE={tmp / 'demo-lake'}",
    ]
    done = subprocess.run(demo, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"make demo exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    work = tmp / "elsewhere"
    work.mkdir()
    return Installed(venv=venv, env=env, work=work, demo=done.stdout)


@pytest.fixture(scope="module")
def wheel_lake(installed: Installed) -> Path:
    """The sample loaded by the installed loader, from outside the checkout, into `wl` (the issue's line)."""
    installed.python("-m", "loaders.pgn2parquet", SAMPLE, "--lake", "wl", "--progress", "never")
    return installed.work / "wl"


@pytest.fixture(scope="module")
def checkout_lake(sample_lake: Path) -> Path:
    """The sample loaded by the checkout's loader: the run's lake of it (conftest.py), read only."""
    return sample_lake


def same_rows(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """Equal as sets of rows (floats to DuckDB's last bits: the venv may hold a newer DuckDB)."""
    assert_frame_equal(got.sort(got.columns), want.sort(want.columns), check_exact=False)


def test_demo_needs_neither_java_nor_test_packages(installed: Installed) -> None:
    assert f"{SAMPLE_GAMES} written" in installed.demo or "already in" in installed.demo
    # sql/summary.sql's table, as the README shows it: the blitz row holds 219 games.
    assert re.search(r"│\s*blitz\s*│\s*219\s*│", installed.demo)
    test_only = ("pytest", "pyspark", "moto", "chess")
    found = f"import importlib.util as u; print([m for m in {test_only!r} if u.find_spec(m)])"
    assert installed.python("-c", found).strip() == "[]"


def test_the_issue_lines_print_the_blunders_table(installed: Installed, wheel_lake: Path) -> None:
    printed = installed.python("-c", "from warehouse import query; print(query('blunders', lake='wl'))")
    assert "per_1000" in printed
    where = installed.python("-c", "import warehouse.queries.sql as s; print(s.SQL_DIR)").strip()
    assert Path(where).is_relative_to(installed.venv), "the SQL library must come from the wheel"


def test_the_explorer_page_assets_travel_in_the_wheel(installed: Installed) -> None:
    """The CSS and script `python -m loaders.serve` serves, in the installed package (python-chess, which
    the page needs, is not installed here: the folder is listed, not the server's module imported)."""
    code = (
        "import pathlib, warehouse.explorer_page as page; "
        "print(sorted(p.name for p in (pathlib.Path(page.__file__).parent / 'assets').iterdir()))"
    )
    listed = installed.python("-c", code, cwd=installed.work)
    assert listed.strip() == str(sorted(p.name for p in (ROOT / "warehouse/explorer_page/assets").iterdir()))


def test_every_question_answers_as_in_the_checkout(
    installed: Installed, wheel_lake: Path, checkout_lake: Path
) -> None:
    answers = installed.work / "answers"
    answers.mkdir()
    ask_all = (
        "from warehouse import query\n"
        "from warehouse.queries.sql import questions\n"
        "for name in questions():\n"
        "    query(name, lake='wl').write_parquet(f'answers/{name}.parquet')\n"
    )
    installed.python("-c", ask_all)
    assert sorted(path.stem for path in answers.glob("*.parquet")) == questions()
    for name in questions():
        same_rows(pl.read_parquet(answers / f"{name}.parquet"), query(name, lake=checkout_lake))


def test_exports_write_every_game(installed: Installed, wheel_lake: Path) -> None:
    installed.run("bgn", "export", "json", "bgn", "--lake", "wl")
    files = sorted((installed.work / "bgn").glob("*/*/*/G.*.json.bz2"))
    assert files
    assert sum(len(bz2.decompress(path.read_bytes()).splitlines()) for path in files) == SAMPLE_GAMES
    installed.run("bgn", "export", "pgn", "games.pgn", "--lake", "wl")
    pgn = (installed.work / "games.pgn").read_text(encoding="utf-8")
    assert pgn.count("\n[Event ") + pgn.startswith("[Event ") == SAMPLE_GAMES
    # The positions of --fen come from the Rust core: no python-chess in this install.
    installed.run("bgn", "export", "study", "study.jsonl", "--lines", "--fen", "--lake", "wl")
    documents = (installed.work / "study.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(documents) == SAMPLE_GAMES and all(m["fen"] for m in json.loads(documents[0])["moves"])


def test_duckdb_runs_a_question_file_of_the_wheel(installed: Installed, wheel_lake: Path) -> None:
    sql_dir = Path(installed.python("-m", "warehouse.queries.sql", "--path").strip())
    assert sql_dir.is_relative_to(installed.venv)
    assert installed.python("-m", "warehouse.queries.sql").split() == questions()
    env = installed.env | {"CHESS_LAKE": str(wheel_lake)}
    with (sql_dir / "blunders.sql").open("rb") as question:
        done = subprocess.run(
            ["duckdb", "-csv"], stdin=question, cwd=sql_dir.parent, env=env, capture_output=True, check=True
        )
    same_rows(pl.read_csv(io.BytesIO(done.stdout)), query("blunders", lake=wheel_lake))


def test_the_bgn_command_from_outside_the_checkout(installed: Installed, checkout_lake: Path) -> None:
    """The issue's lines (28), with the installed `bgn` only: load a real .pgn.zst, list the questions, ask
    one (equal to the duckdb CLI running the checkout's file), explore, build a book."""
    mine = installed.work / "bgn-lake"
    loaded = installed.run("bgn", "load", SAMPLE, "--lake", mine, "--progress", "never")
    assert f"{SAMPLE_GAMES:,} games seen = {SAMPLE_GAMES:,} written" in loaded
    assert [line.split()[0] for line in installed.run("bgn", "list").splitlines()] == questions()
    asked = installed.run("bgn", "query", "blunders", "--lake", mine, "--format", "csv")
    env = {**os.environ, "CHESS_LAKE": str(mine)}
    with (ROOT / "sql" / "blunders.sql").open("rb") as question:
        cli = subprocess.run(["duckdb", "-csv"], stdin=question, cwd=ROOT, env=env, capture_output=True)
    assert cli.returncode == 0, cli.stderr
    assert_frame_equal(pl.read_csv(io.StringIO(asked)), pl.read_csv(io.BytesIO(cli.stdout)))
    start = explore(STARTING_FEN, lake=checkout_lake)
    explored = installed.run("bgn", "explore", "--lake", mine)
    assert explored.endswith(f"\n{len(start)} moves, {start['games'].sum():,} games\n"), explored
    installed.run("bgn", "book", "--lake", mine, "book.bin", "--max-ply", "8")
    with chess.polyglot.open_reader(installed.work / "book.bin") as book:
        first_moves = {entry.move.uci(): entry.weight for entry in book.find_all(chess.Board())}
    # PolyGlot's weight: 2 x wins + draws of the side to move (White), the moves weighing 0 left out.
    weights = zip(start["uci"], 2 * start["white_wins"] + start["draws"], strict=True)
    assert first_moves == {uci: weight for uci, weight in weights if weight > 0}


@pytest.mark.parametrize(
    ("command", "output"),
    [
        (["graph", "tree.dot"], "tree.dot"),
        (["openings", "tables"], "tables"),
        (["serve"], None),
        # A position given as moves is read by python-chess; given as a FEN, by the core (above).
        (["explore", "--line", "1. e4 c5"], None),
        (["search", "--line", "1. e4 c5"], None),
    ],
)
def test_a_command_of_the_chess_extra_names_it_when_missing(
    installed: Installed, checkout_lake: Path, command: list[str], output: str | None
) -> None:
    """The wheel's `[cli]` install has no python-chess: a command that needs it is one line naming the extra,
    exit 2, nothing written (it was a traceback for `graph` and `openings`)."""
    assert installed.python("-c", "import importlib.util as u; print(u.find_spec('chess'))") == "None\n"
    lake = [] if command[0] == "openings" else ["--lake", str(checkout_lake)]
    done = subprocess.run(
        ["bgn", *command, *lake], cwd=installed.work, env=installed.env, capture_output=True, text=True
    )
    assert (done.returncode, done.stderr) == (
        2,
        f"error: bgn {command[0]} needs python-chess: pip install 'bgn-warehouse[chess]'\n",
    )
    assert output is None or not (installed.work / output).exists()
