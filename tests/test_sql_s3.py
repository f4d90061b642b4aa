"""The SQL library over a lake on S3 (a real S3-compatible server: moto, on 127.0.0.1): every question,
through `warehouse.query` and through the duckdb CLI (`CHESS_LAKE=s3://… duckdb < sql/<file>.sql`), answers
what it answers over a local lake of the same sample.

Python reads S3 through the lake's pyarrow filesystem (registered in DuckDB). The CLI reads it with DuckDB's
httpfs extension, which `make setup` installs; where it could not be installed, the CLI tests are skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from s3_server import S3Server
from support import needs_httpfs, run_command

from warehouse.queries.sql import SQL_DIR, connect, query, questions


@pytest.fixture(scope="module")
def s3_lake(s3_server: S3Server, sample_lake: Path) -> str:
    """The sample lake copied to s3://sql-bucket/lake."""
    return s3_server.lake_copy(str(sample_lake), "sql-bucket")


def run_cli(name: str, lake: str | Path) -> list[dict]:
    """`duckdb -json < sql/<name>.sql` from the project's root, with CHESS_LAKE=lake; os.environ holds the
    server's AWS_* settings while the fixture runs."""
    done = run_command(
        ["duckdb", "-json"],
        stdin=(SQL_DIR / f"{name}.sql").read_bytes(),
        env={**os.environ, "CHESS_LAKE": str(lake)},
        timeout=300,
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    return json.loads(done.stdout or "[]")


@pytest.mark.parametrize("name", questions())
def test_python_api_answers_the_same_over_s3(name: str, s3_lake: str, sample_lake: Path) -> None:
    remote = query(name, s3_lake)
    assert remote.height > 0
    assert remote.equals(query(name, sample_lake))


@pytest.mark.parametrize("name", ["blunders", "openings", "clock_pace"])
def test_duckdb_cli_answers_the_same_over_s3(name: str, s3_lake: str, sample_lake: Path) -> None:
    needs_httpfs(["duckdb"])
    remote = run_cli(name, s3_lake)
    assert remote
    assert remote == run_cli(name, sample_lake)


def test_games_read_from_s3_are_the_lake_files(s3_lake: str, sample_lake: Path) -> None:
    """Every Parquet file of the lake is read once, under its S3 name."""
    names = connect(s3_lake).sql("select distinct filename from games").fetchall()
    local = sorted(p.relative_to(sample_lake).as_posix() for p in sample_lake.glob("games/**/*.parquet"))
    assert sorted(name.split("?")[0].removeprefix(f"{s3_lake}/") for (name,) in names) == local
