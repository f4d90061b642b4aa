"""The front door (issue 28): one `bgn` command, questions asked from any folder, which lake is read never a
guess, SQL files that fail first in one line, a broken pipe that ends quietly, a graph without Graphviz, a
multi-input load's total, and a `make demo` that does its install once."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import tomllib
from polars.testing import assert_frame_equal
from support import DATA, REPO, SAMPLE, module, one_line_error, run_command, run_module

from loaders.bgn import COMMANDS
from warehouse.queries.sql import SQL_DIR, query, questions

EDGE = sorted((DATA / "edge").glob("*.pgn"))
Completed = subprocess.CompletedProcess[str]


def without_chess_lake() -> dict[str, str]:
    """This environment, CHESS_LAKE out: a user who named no lake."""
    return {k: v for k, v in os.environ.items() if k != "CHESS_LAKE"}


def bgn(*args: str | Path, cwd: Path = REPO, env: dict[str, str] | None = None) -> Completed:
    """`bgn ARGS` (as `python -m loaders.bgn`, the installed script's target) in `cwd`."""
    done = run_command(module("loaders.bgn", *args), cwd=cwd, env=env or without_chess_lake(), timeout=120)
    return Completed(args, done.returncode, done.stdout, done.stderr)


def cli_answer(name: str, lake: Path, cwd: Path = REPO) -> subprocess.CompletedProcess[bytes]:
    """`duckdb -csv < sql/<name>.sql` in `cwd` with CHESS_LAKE=lake: the design card's way."""
    with (SQL_DIR / f"{name}.sql").open("rb") as question:
        return subprocess.run(
            ["duckdb", "-csv"],
            stdin=question,
            cwd=cwd,
            env={**os.environ, "CHESS_LAKE": str(lake)},
            capture_output=True,
            timeout=120,
        )


# --- one command ---


@pytest.mark.parametrize("name", list(COMMANDS))
def test_help_names_the_command_typed(name: str) -> None:
    done = bgn(*name.split(), "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: bgn {name} "), done.stdout


def test_module_help_names_the_module() -> None:
    done = run_module("loaders.pgn2parquet", ["--help"])
    assert done.stdout.startswith("usage: python -m loaders.pgn2parquet "), done.stdout


def test_unknown_command_is_a_usage_error() -> None:
    done = bgn("lod", "x.pgn")
    assert done.returncode == 2 and done.stderr.startswith("error: unknown command 'lod x.pgn'"), done.stderr
    assert "Traceback" not in done.stderr


def test_list_names_every_question_with_its_header_line() -> None:
    printed = bgn("list").stdout.splitlines()
    want = {}
    for path in sorted(Path(REPO / "sql").glob("*.sql")):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        want[path.stem] = re.fullmatch(r"-- Question: (.+)", first).group(1)  # type: ignore[union-attr]
    assert {line.split(maxsplit=1)[0]: line.split(maxsplit=1)[1] for line in printed} == want


def test_query_from_any_folder_answers_as_the_duckdb_cli(sample_lake: Path, tmp_path: Path) -> None:
    done = bgn("query", "blunders", "--lake", sample_lake, "--format", "csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"lake: {sample_lake}\n"
    cli = cli_answer("blunders", sample_lake)
    assert cli.returncode == 0, cli.stderr
    assert_frame_equal(pl.read_csv(io.StringIO(done.stdout)), pl.read_csv(io.BytesIO(cli.stdout)))


def test_query_prints_the_whole_answer(sample_lake: Path) -> None:
    """Every row, on a table too (the CLI's table showed 40 of hundreds)."""
    name = max(questions(), key=lambda name: len(query(name, sample_lake)))
    rows = len(query(name, sample_lake))
    assert rows > 40
    for format, lines in (("csv", rows + 1), ("json", rows)):
        printed = bgn("query", name, "--lake", sample_lake, "--format", format).stdout
        assert len(printed.splitlines()) == lines
    table = bgn("query", name, "--lake", sample_lake, "--format", "table").stdout
    assert table.endswith(f"\n{rows:,} rows\n") and "…" not in table


def test_query_variables_and_output_file(sample_lake: Path, tmp_path: Path) -> None:
    after_e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    out = tmp_path / "replies.parquet"
    asked = ["--var", f"explorer_fen={after_e4}", "--format", "parquet", "-o", out]
    done = bgn("query", "explorer", "--lake", sample_lake, *asked)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    with (SQL_DIR / "explorer.sql").open("rb") as question:
        cli = subprocess.run(
            ["duckdb", "-csv", "-cmd", f"set variable explorer_fen = '{after_e4}'"],
            stdin=question,
            cwd=REPO,
            env={**os.environ, "CHESS_LAKE": str(sample_lake)},
            capture_output=True,
            check=True,
        )
    want = pl.read_csv(io.BytesIO(cli.stdout))
    got = pl.read_parquet(out)
    assert got["uci"].to_list() == want["uci"].to_list() and got["games"].to_list() == want["games"].to_list()
    assert set(got["uci"]) >= {"e7e5", "c7c5"}


# --- which lake ---


def test_no_lake_named_and_no_lake_here_is_one_line(tmp_path: Path) -> None:
    done = run_module("loaders.explore", [], cwd=tmp_path, env=without_chess_lake())
    one_line_error(done, "--lake", "CHESS_LAKE")
    assert list(tmp_path.iterdir()) == []


def test_lake_here_is_read_and_said(sample_lake: Path, tmp_path: Path) -> None:
    (tmp_path / "lake").symlink_to(sample_lake)
    done = bgn("query", "summary", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("lake: ./lake (no --lake, no CHESS_LAKE)"), done.stderr
    named = bgn(
        "query", "summary", cwd=tmp_path, env={**without_chess_lake(), "CHESS_LAKE": str(sample_lake)}
    )
    assert named.stderr == f"lake: {sample_lake} (CHESS_LAKE)\n" and named.stdout == done.stdout


# --- the SQL files ---


def test_sql_file_out_of_the_checkout_fails_first_in_one_line(sample_lake: Path, tmp_path: Path) -> None:
    done = cli_answer("blunders", sample_lake, cwd=tmp_path)
    assert done.returncode != 0 and done.stdout == b""
    (line,) = done.stderr.decode().splitlines()
    assert "sql/views not found here" in line and "python -m warehouse.queries.sql --path" in line


def test_s3_lake_without_httpfs_says_how_to_install_it(tmp_path: Path) -> None:
    # A HOME without ~/.duckdb/extensions: a duckdb CLI that never installed httpfs.
    env = {**os.environ, "CHESS_LAKE": "s3://bucket/lake", "HOME": str(tmp_path)}
    with (SQL_DIR / "summary.sql").open("rb") as question:
        done = subprocess.run(["duckdb"], stdin=question, cwd=REPO, env=env, capture_output=True, timeout=60)
    assert done.returncode != 0 and done.stdout == b""
    (line,) = done.stderr.decode().splitlines()
    assert "httpfs" in line and "python -m warehouse.queries.extensions" in line


def test_extensions_fail_with_a_nonzero_exit(tmp_path: Path) -> None:
    done = run_command([sys.executable, "-m", "warehouse.queries.extensions"], env={"PATH": str(tmp_path)})
    assert done.returncode == 1 and done.stderr.startswith("error: httpfs not installed"), done.stderr


# --- papercuts ---


@pytest.mark.parametrize(
    "args", [["export", "pgn", "-"], ["query", "square_heat", "--format", "csv"]], ids=["export", "query"]
)
def test_broken_pipe_ends_quietly(args: list[str], sample_lake: Path) -> None:
    """`bgn … | head`: the reader is gone before the first write."""
    command = [*module("loaders.bgn", *args, "--lake", str(sample_lake))]
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err.decode()) == (0, f"lake: {sample_lake}\n" if "query" in args else "")


def test_graph_without_graphviz_writes_the_dot(sample_lake: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bin"  # a PATH without Graphviz's dot
    bare.mkdir()
    out = tmp_path / "tree.dot"
    graph = module("loaders.opening_graph", "--lake", sample_lake, out, "--min-share", "0.05")
    done = run_command(graph, env={**os.environ, "PATH": str(bare)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("digraph") and not out.with_suffix(".svg").exists()
    (line,) = done.stderr.splitlines()
    assert f"dot -Tsvg {out} -o {out.with_suffix('.svg')}" in line


def test_a_load_of_several_inputs_ends_with_their_total(tmp_path: Path) -> None:
    inputs = [SAMPLE, *EDGE[:3]]
    done = run_module("loaders.pgn2parquet", [*map(str, inputs), "--lake", str(tmp_path / "lake")])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    each = [
        re.search(r": ([\d,]+) games seen = ([\d,]+) written \+ ([\d,]+) rejected", line) for line in lines
    ]
    counts = [[int(n.replace(",", "")) for n in found.groups()] for found in each if found]
    assert len(counts) == len(inputs) + 1
    seen, written, rejected = (sum(column) for column in zip(*counts[:-1], strict=True))
    assert lines[-1].startswith(f"total of {len(inputs)} inputs ({len(inputs)} loaded): {seen:,} games seen")
    assert counts[-1] == [seen, written, rejected]


def test_demo_installs_once(tmp_path: Path) -> None:
    """`make demo` shows the build (pip -v, not -q) and, done once, installs nothing again."""
    stamp = tmp_path / "stamp"
    make = ["make", "--no-print-directory", "-n", "setup", f"PYTHON={sys.executable}", f"STAMP={stamp}"]
    first = run_command(make)
    assert re.search(r"pip install .*-v ", first.stdout) and " -q " not in first.stdout, first.stdout
    stamp.touch()
    second = run_command(make)
    assert second.returncode == 0 and "pip install" not in second.stdout, second.stdout


def test_extras_by_use() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {extra: {re.split(r"[<>=\[]", dep)[0] for dep in deps} for extra, deps in extras.items()}
    assert {"jupyter", "matplotlib"} <= names["notebooks"] and "pyspark" not in names["notebooks"]
    assert names["spark"] == {"pyspark"}
    assert "bgn-warehouse[cli,notebooks,spark]" in extras["test"]
    assert shutil.which("make")


@pytest.mark.parametrize(
    ("env", "expected"),
    [({}, "1 jemalloc"), ({"OPENBLAS_NUM_THREADS": "3", "ARROW_DEFAULT_MEMORY_POOL": "system"}, "3 system")],
)
def test_commands_set_blas_threads_and_arrow_pool_unless_set(env: dict[str, str], expected: str) -> None:
    """Every command (`loaders.cli`, imported first) runs numpy's OpenBLAS on one thread and pyarrow's pool
    on jemalloc; a user's own `OPENBLAS_NUM_THREADS` or `ARROW_DEFAULT_MEMORY_POOL` stands."""
    chosen = ("OPENBLAS_NUM_THREADS", "ARROW_DEFAULT_MEMORY_POOL")
    base = {k: v for k, v in os.environ.items() if k not in chosen}
    code = (
        "import os; import loaders.cli; import numpy, pyarrow as pa; "
        "print(os.environ['OPENBLAS_NUM_THREADS'], pa.default_memory_pool().backend_name)"
    )
    done = run_command([sys.executable, "-c", code], env=base | env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected
