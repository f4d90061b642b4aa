"""Compaction and the lake check, through their CLIs; and the loader, compaction and check on S3 (moto).

Compaction's own verification (counts and content hash) is not trusted here: the rows are compared, as
Python values, with what the lake held before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from s3_server import S3Server
from support import lake_counts, load, make_games, run_module, without_source, write_zst

from warehouse.lake.storage import filesystem


def rows(lake: str | Path) -> list[dict]:
    fs, root = filesystem(str(lake))
    table = ds.dataset(f"{root}/games", filesystem=fs, format="parquet", partitioning="hive").to_table()
    return sorted(table.to_pylist(), key=lambda g: g["game_id"])


def parquet_files(lake: Path) -> list[Path]:
    return sorted((lake / "games").glob("**/*.parquet"))


@pytest.fixture
def small_loads(tmp_path: Path) -> Path:
    """Ten loads of 60 games each, two months: many small files per partition."""
    lake = tmp_path / "lake"
    sources = [
        write_zst(tmp_path / f"own-{i}.pgn.zst", make_games(i * 60, 60, month=5 + i % 2)) for i in range(10)
    ]
    assert load(sources, lake).returncode == 0
    return lake


def test_compaction_keeps_the_rows(small_loads: Path) -> None:
    lake = small_loads
    before, files_before = rows(lake), parquet_files(lake)
    run = run_module("warehouse.maintenance.compact", ["--lake", str(lake)])
    assert run.returncode == 0, run.stderr
    assert "same rows and content hash" in run.stdout
    after = parquet_files(lake)
    assert len(after) < len(files_before)
    # Partition by partition the games are the same rows, every field equal.
    assert rows(lake) == before
    assert run_module("warehouse.maintenance.check", ["--lake", str(lake), "--full"]).returncode == 0
    again = run_module("warehouse.maintenance.compact", ["--lake", str(lake)])
    assert "nothing to compact" in again.stdout
    # A later load of a known input is still recognised; dedup still sees the compacted games.
    assert "already loaded" in load([next(lake.parent.glob("own-0.pgn.zst"))], lake).stdout
    overlap = lake.parent / "overlap.pgn"  # own-0's games, other bytes
    overlap.write_text(make_games(0, 60, month=5).replace("\n", "\r\n"))
    assert "60 games seen = 0 written + 0 rejected + 60 duplicates" in load([overlap], lake).stdout


def test_check_reports_each_problem(small_loads: Path) -> None:
    lake = small_loads
    ok = run_module("warehouse.maintenance.check", ["--lake", str(lake)])
    assert ok.returncode == 0 and ok.stdout.strip().endswith(": ok"), ok.stdout
    first, second, third, *_ = parquet_files(lake)
    first.write_bytes(first.read_bytes()[:-100])  # a damaged file
    second.unlink()  # a lost file
    stray = third.with_name("stray.parquet")  # a file no load wrote
    pq.write_table(pq.read_table(third).drop_columns(["comment"]), stray)
    run = run_module("warehouse.maintenance.check", ["--lake", str(lake)])
    assert run.returncode == 1
    report = run.stdout
    assert f"{first.relative_to(lake)}: unreadable" in report
    assert f"{second.relative_to(lake)}: listed by a committed record but missing" in report
    assert f"{stray.relative_to(lake)}: in games/ but in no committed record" in report
    assert "schema differs" in report
    assert "its live loads wrote" in report
    assert report.strip().endswith("problems")


def test_check_reconciles_records(small_loads: Path) -> None:
    record_path = sorted((small_loads / "_loads").glob("*.json"))[0]
    record = json.loads(record_path.read_text())
    record["games_rejected"] += 1
    record_path.write_text(json.dumps(record))
    run = run_module("warehouse.maintenance.check", ["--lake", str(small_loads)])
    assert run.returncode == 1
    assert f"load {record['load_id']}: seen" in run.stdout


def test_check_of_a_missing_lake_is_one_line(tmp_path: Path) -> None:
    run = run_module("warehouse.maintenance.check", ["--lake", str(tmp_path / "nowhere")])
    assert run.returncode == 2 and "no such lake" in run.stderr and "Traceback" not in run.stderr


def test_s3_lake_round_trip(s3_server: S3Server, tmp_path: Path) -> None:
    """Load into s3://…, load again (nothing written), an overlapping input (deduplicated), compact,
    check, and read back every game equal to a local load of the same inputs."""
    url = s3_server.bucket("lake-test") + "/lakes/one"
    may = write_zst(tmp_path / "may.pgn.zst", make_games(0, 200, month=5))
    overlap = write_zst(tmp_path / "overlap.pgn.zst", make_games(150, 100, month=5))
    assert os.environ["AWS_ENDPOINT_URL"].startswith("http://127.0.0.1")
    first = load([may], url)
    assert first.returncode == 0, first.stderr
    assert "already loaded" in load([may], url).stdout
    assert "+ 50 duplicates" in load([overlap], url).stdout
    compacted = run_module("warehouse.maintenance.compact", ["--lake", url])
    assert compacted.returncode == 0, compacted.stderr
    checked = run_module("warehouse.maintenance.check", ["--lake", url, "--full"])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    local = tmp_path / "local"
    assert load([may, overlap], local).returncode == 0
    assert list(map(without_source, rows(url))) == list(map(without_source, rows(local)))
    assert lake_counts(local) == (250, 250)
    fs, root = filesystem(url)
    staging = fs.get_file_info(pafs.FileSelector(f"{root}/_staging", recursive=True, allow_not_found=True))
    assert [i.path for i in staging if i.type == pafs.FileType.File] == []
