"""The SQL library over a lake on S3 (a real S3-compatible server: moto, on 127.0.0.1): every question,
through `warehouse.query` and through the duckdb CLI (`CHESS_LAKE=s3://… duckdb < sql/<file>.sql`), answers
what it answers over a local lake of the same sample.

Python reads S3 through the lake's pyarrow filesystem (registered in DuckDB). The CLI reads it with DuckDB's
httpfs extension, which `make setup` installs; where it could not be installed, the CLI tests are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyarrow.fs as pafs
import pytest
import s3_server as s3
from lake_io import REPO, run_loader
from s3_server import S3Server

from warehouse.lake import Lake
from warehouse.sql import SQL_DIR, connect, query, questions

SAMPLE = REPO / "tests" / "data" / "lichess_2025-05_sample.pgn.zst"

s3_server = s3.s3_server  # the module-scoped fixture: a moto server while this module runs


def httpfs_error(command: list[str]) -> str | None:
    """Why httpfs cannot be loaded by the duckdb CLI `command`, else None."""
    done = subprocess.run(
        [*command, "-c", "install httpfs; load httpfs"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stderr.strip().splitlines()[0] if done.returncode or done.stderr else None


def needs_httpfs(command: list[str]) -> None:
    if (error := httpfs_error(command)) is not None:
        pytest.skip(f"DuckDB's httpfs extension is not available: {error}")


@pytest.fixture(scope="module")
def local_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lake = tmp_path_factory.mktemp("sql-s3") / "lake"
    loaded = run_loader([SAMPLE], lake)
    assert loaded.returncode == 0, loaded.stderr
    return lake


@pytest.fixture(scope="module")
def s3_lake(s3_server: S3Server, local_lake: Path) -> str:
    """The sample lake copied to s3://sql-bucket/lake."""
    url = s3_server.bucket("sql-bucket") + "/lake"
    lake = Lake.open(url)
    pafs.copy_files(str(local_lake), lake.root, destination_filesystem=lake.fs)
    return url


def run_cli(name: str, lake: str | Path) -> list[dict]:
    """`duckdb -json < sql/<name>.sql` from the project's root, with CHESS_LAKE=lake; os.environ holds the
    server's AWS_* settings while the fixture runs."""
    done = subprocess.run(
        ["duckdb", "-json"],
        input=(SQL_DIR / f"{name}.sql").read_text(encoding="utf-8"),
        cwd=REPO,
        env={**os.environ, "CHESS_LAKE": str(lake)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    return json.loads(done.stdout or "[]")


@pytest.mark.parametrize("name", questions())
def test_python_api_answers_the_same_over_s3(name: str, s3_lake: str, local_lake: Path) -> None:
    remote = query(name, s3_lake)
    assert remote.height > 0
    assert remote.equals(query(name, local_lake))


@pytest.mark.parametrize("name", ["blunders", "openings", "clock_pace"])
def test_duckdb_cli_answers_the_same_over_s3(name: str, s3_lake: str, local_lake: Path) -> None:
    needs_httpfs(["duckdb"])
    remote = run_cli(name, s3_lake)
    assert remote
    assert remote == run_cli(name, local_lake)


def test_games_read_from_s3_are_the_lake_files(s3_lake: str, local_lake: Path) -> None:
    """Every Parquet file of the lake is read once, under its S3 name."""
    names = connect(s3_lake).sql("select distinct filename from games").fetchall()
    local = sorted(p.relative_to(local_lake).as_posix() for p in local_lake.glob("games/**/*.parquet"))
    assert sorted(name.split("?")[0].removeprefix(f"{s3_lake}/") for (name,) in names) == local
