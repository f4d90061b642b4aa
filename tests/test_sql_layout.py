"""The SQL library's layout guard: over a lake of layout 1 (games/ only, no _layout.json: tests/data/lake_v1,
copied, never written to), `duckdb < sql/<file>.sql` fails in one line naming the command that upgrades the
lake, locally and on S3 (httpfs); so does `warehouse.query`; so does a lake of layout 2 or 3
(tests/data/lake_v2, lake_v3).
A directory that holds no lake fails in one line too. Over a lake of this layout the guard costs one small
read (the other SQL tests run through it).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pyarrow.fs as pafs
import pytest
from s3_server import S3Server
from support import DATA, load, needs_httpfs, one_line_error, run_command, run_module

from warehouse.errors import LakeError
from warehouse.lake import Lake
from warehouse.lake.layout import LAYOUT
from warehouse.queries.sql import SQL_DIR, query, questions

LAKE_V1 = DATA / "lake_v1"
UPGRADE = "python -m loaders.upgrade --lake"


@pytest.fixture(scope="module")
def lake_v1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the layout-1 fixture."""
    lake = tmp_path_factory.mktemp("v1") / "lake"
    shutil.copytree(LAKE_V1, lake)
    assert (lake / "games").is_dir()
    assert not (lake / "_layout.json").exists() and not (lake / "plies").exists()
    return lake


def run_cli(name: str, lake: str | Path) -> tuple[int, str, str]:
    """`duckdb < sql/<name>.sql` from the project's root with CHESS_LAKE=lake: exit code, stdout, stderr."""
    done = run_command(
        ["duckdb"],
        stdin=(SQL_DIR / f"{name}.sql").read_bytes(),
        env={**os.environ, "CHESS_LAKE": str(lake)},
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


def assert_one_line(code: int, stdout: str, stderr: str, *parts: str) -> None:
    assert code != 0 and stdout == "", (code, stdout, stderr)
    assert len(stderr.strip().splitlines()) == 1, stderr
    for part in parts:
        assert part in stderr, stderr


@pytest.mark.parametrize("name", questions())
def test_duckdb_cli_refuses_a_layout_1_lake_in_one_line(name: str, lake_v1: Path) -> None:
    assert_one_line(*run_cli(name, lake_v1), "layout 1", f"`{UPGRADE} {lake_v1}`")


def test_duckdb_cli_refuses_a_layout_1_lake_on_s3(s3_server: S3Server, lake_v1: Path) -> None:
    needs_httpfs(["duckdb"])
    url = s3_server.bucket("layout-v1") + "/lake"
    lake = Lake.open(url)
    pafs.copy_files(str(lake_v1), lake.root, destination_filesystem=lake.fs)
    assert_one_line(*run_cli("blunders", url), "layout 1", f"`{UPGRADE} {url}`")


def test_python_api_refuses_a_layout_1_lake(lake_v1: Path) -> None:
    with pytest.raises(LakeError, match=re.escape(f"`{UPGRADE} {lake_v1}`")) as raised:
        query("summary", lake_v1)
    assert "\n" not in str(raised.value)


def test_duckdb_cli_says_when_there_is_no_lake(tmp_path: Path) -> None:
    assert_one_line(*run_cli("summary", tmp_path / "nowhere"), "no lake here")


def test_python_commands_say_when_there_is_no_lake(tmp_path: Path) -> None:
    """A mistyped --lake is one line and exit 2 for `bgn query` (it was DuckDB's traceback), and a
    `LakeError` for the Python API; nothing is created there."""
    nowhere = tmp_path / "nowhere"
    one_line_error(run_module("loaders.query", ["summary", "--lake", nowhere]), "no such lake")
    with pytest.raises(LakeError, match="no such lake"):
        query("summary", nowhere)
    assert not nowhere.exists()


def test_the_guard_reads_a_lake_of_this_layout(sample_lake: Path) -> None:
    code, stdout, stderr = run_cli("summary", sample_lake)
    assert code == 0 and stderr == "" and "blitz" in stdout, stderr
    assert Lake.open(sample_lake).layout() == LAYOUT


@pytest.mark.parametrize("layout", [2, 3])
def test_duckdb_cli_refuses_a_layout_2_or_3_lake_in_one_line(layout: int, tmp_path: Path) -> None:
    """A lake of layout 2 (tests/data/lake_v2: no plies.think, no plies.mates) or 3 (tests/data/lake_v3: no
    plies.analysed) names the upgrade too."""
    lake = tmp_path / "lake"
    shutil.copytree(DATA / f"lake_v{layout}", lake)
    for name in ("summary", "clock_pace"):
        assert_one_line(*run_cli(name, lake), f"layout {layout}", f"`{UPGRADE} {lake}`")


def test_a_lake_whose_every_game_was_rejected_is_one_line(tmp_path: Path) -> None:
    """Loads ran, every game was rejected: no games/ to read. The duckdb CLI and Python's commands say so
    in one line."""
    source = tmp_path / "bad.pgn"
    source.write_text('[Event "x"]\n[Result "*"]\n\n1. e4 e4 *\n')
    lake = tmp_path / "lake"
    loaded = load([source], lake)
    assert loaded.returncode == 0 and "1 rejected" in loaded.stdout, loaded.stdout + loaded.stderr
    assert_one_line(*run_cli("summary", lake), "holds no games yet")
    with pytest.raises(LakeError, match="holds no games yet"):
        query("summary", lake)
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    for name, args in [
        ("loaders.positions", [fen, "--lake", lake]),
        ("loaders.book", ["--lake", lake, tmp_path / "b.parquet"]),
    ]:
        one_line_error(run_module(name, args), "holds no games yet")


@pytest.mark.parametrize(
    "content", [b'{"lay', b"", b'{"layout": 4.0}', b'{"layout": 0}', b"[4]", b'{"layout": "4"}', b"\xff\xfe4"]
)
def test_a_damaged_layout_file_is_called_damaged(content: bytes, sample_lake: Path, tmp_path: Path) -> None:
    """A `_layout.json` that holds no layout (cut short, empty, not a whole number from 1, not JSON, not
    UTF-8): the duckdb CLI, `warehouse.query` and the upgrade say in one line that it is damaged, rather
    than call the lake one of layout 1 that the upgrade then refuses."""
    lake = tmp_path / "lake"
    shutil.copytree(sample_lake, lake)
    (lake / "_layout.json").write_bytes(content)
    damaged = f'{lake}/_layout.json: damaged: expected {{"layout": {LAYOUT}}}'
    assert_one_line(*run_cli("summary", lake), damaged)
    with pytest.raises(LakeError, match=re.escape(damaged)):
        query("summary", lake)
    one_line_error(run_module("loaders.upgrade", ["--lake", lake]), damaged)
