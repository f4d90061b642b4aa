"""Loads on Spark (`loaders.spark_pgn2parquet`, `ingest.spark_load`) in real PySpark local mode: the lake
equals, as values, the one a local load writes from the same inputs (games with their source_file and
source_offset, plies, rejects line by line, each load's counts), with a task per input or per zstd frame
(frames cut anywhere in games), and passes `warehouse.maintenance.check`; a task that fails
once leaves exactly one copy of every game; a driver killed mid-job leaves the lake as it was, and a rerun
completes it; inputs on S3 (moto) given by a glob load as the same files would."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import zstandard
from support import (
    CORPORA,
    SAMPLE,
    cut_frames,
    damaged,
    lake_counts,
    lake_table,
    load_summary,
    make_games,
    module,
    read_records,
    run_module,
    start,
    write_zst,
)

from warehouse.ingest.load import load_input
from warehouse.lake.layout import STAGING
from warehouse.lake.location import Lake
from warehouse.lake.records import Records
from warehouse.lake.storage import filesystem, output_stream

pytest.importorskip("pyspark")
from warehouse.ingest.spark_load import FAIL_FIRST_ATTEMPT_ENV, spark_load

LICHESS = CORPORA / "lichess" / "lichess_2025-05_sample.pgn"
WITH_REJECTS = CORPORA / "edge" / "pychess" / "testing" / "gamefiles" / "schess.pgn"
GAME_KEYS = ["type", "year", "month", "source_file", "source_offset"]
PLY_KEYS = ["type", "year", "month", "game_key", "ply"]


def inputs(tmp_path: Path) -> list[Path]:
    """The bundled sample (two zstd frames), the lichess corpus (the same games again: all duplicates), a
    file with rejects, and two generated files sharing 100 games (duplicates within the job), the first
    in frames cut anywhere in its games (`cut_frames`)."""
    if not LICHESS.is_file() or not WITH_REJECTS.is_file():
        pytest.skip("needs ../shared/corpora")
    first = cut_frames(tmp_path / "gen-a.pgn.zst", make_games(0, 300))
    second = write_zst(tmp_path / "gen-b.pgn.zst", make_games(200, 300))
    return [SAMPLE, LICHESS, WITH_REJECTS, first, second, damaged(tmp_path / "gen-c.pgn.zst")]


def local_lake(paths: list[Path], lake: Path) -> list[dict[str, Any]]:
    opened = Lake.open(str(lake))
    return [load_summary(load_input(str(p), opened, jobs=1).record, lake) for p in paths]


def assert_same_as_local(lake: Path, loads: list[Any], local: Path, local_loads: list[Any]) -> None:
    assert loads == local_loads
    games = lake_table(lake, "games", GAME_KEYS)
    assert games.num_rows == sum(r["games_written"] for r in local_loads)
    assert games.equals(lake_table(local, "games", GAME_KEYS))
    assert lake_table(lake, "plies", PLY_KEYS).equals(lake_table(local, "plies", PLY_KEYS))
    for r in loads:
        assert r["games_seen"] == r["games_written"] + r["games_rejected"] + r["games_duplicate"]
    checked = run_module("warehouse.maintenance.check", ["--lake", str(lake), "--full"])
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path, list[dict[str, Any]]]:
    """The inputs and the lake a local load writes from them, with its loads' summaries."""
    folder = tmp_path_factory.mktemp("spark-load")
    paths = inputs(folder)
    lake = folder / "local"
    return paths, lake, local_lake(paths, lake)


def test_same_lake_as_a_local_load(spark: Any, local: Any, tmp_path: Path) -> None:
    paths, local_path, local_loads = local
    lake = tmp_path / "lake"
    # A task per zstd frame: the sample's two, gen-a's six.
    done = spark_load(spark, [str(p) for p in paths], Lake.open(str(lake)), unit_bytes=1)
    assert not done.errors
    labels = {re.sub(r".*-u\d+(\w+)-\d+\.parquet", r"\1", f) for f in done.results[3].record.files}
    assert labels == {"a0", "d"}, "a part's wrong guess of its first game should be read again"
    loads = [load_summary(r.record, lake) for r in done.results]
    assert [r["games_duplicate"] for r in loads] == [0, 438, 0, 0, 100, 0]
    assert loads[5]["damage"] and loads[5]["games_written"] < 300
    assert loads[2]["rejects"][0], "the edge file should have rejects"
    assert_same_as_local(lake, loads, local_path, local_loads)
    again = spark_load(spark, [str(p) for p in paths], Lake.open(str(lake)))
    assert all(r.already_loaded is not None for r in again.results)


def test_a_task_failing_once(spark: Any, local: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Input 4's first attempt stages all its files, then fails: the retry's files alone are committed."""
    paths, local_path, local_loads = local
    monkeypatch.setenv(FAIL_FIRST_ATTEMPT_ENV, "4")
    lake = tmp_path / "lake"
    done = spark_load(spark, [str(p) for p in paths], Lake.open(str(lake)))
    record = done.results[4].record
    assert record.files and all("-u4a1-" in f for f in record.files), record.files
    assert not (lake / STAGING).exists() or not any((lake / STAGING).iterdir())
    games, ids = lake_counts(lake)
    assert games == ids == sum(r.record.games_written for r in done.results)
    loads = [load_summary(r.record, lake) for r in done.results]
    assert_same_as_local(lake, loads, local_path, local_loads)


def test_driver_killed_mid_job(local: Any, tmp_path: Path) -> None:
    """SIGKILL of the driver while its task stages files: the lake is as before the job (the next writer
    drops the staging); a rerun completes it, equal to a local load."""
    lake = tmp_path / "lake"
    before = run_module("loaders.pgn2parquet", [str(SAMPLE), "--lake", str(lake)])
    assert before.returncode == 0, before.stderr
    records, games = read_records(lake), lake_table(lake, "games", GAME_KEYS)
    big = write_zst(tmp_path / "big.pgn.zst", make_games(5000, 8000))
    args = [str(SAMPLE), str(big), "--lake", str(lake), "--master", "local[1]"]
    job = start(module("loaders.spark_pgn2parquet", *args), new_session=True)
    deadline = time.monotonic() + 120
    while not any((lake / STAGING).glob("*/games/**/*.parquet")):
        assert job.running() and time.monotonic() < deadline, job.finish().stderr
        time.sleep(0.05)
    job.stop(signal.SIGKILL)
    _wait_gone(job.proc.pid)
    assert read_records(lake) == records
    assert lake_table(lake, "games", GAME_KEYS).equals(games)
    checked = run_module("warehouse.maintenance.check", ["--lake", str(lake)])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    rerun = run_module("loaders.spark_pgn2parquet", args, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert "dropped the staged files" in rerun.stderr and "already loaded" in rerun.stdout
    assert not any((lake / STAGING).glob("**/*.parquet"))
    expected = tmp_path / "expected"
    local_loads = local_lake([SAMPLE, big], expected)
    committed = sorted(Records.read(Lake.open(str(lake))).loads, key=lambda r: r.input == str(big))
    loads = [load_summary(r, lake) for r in committed]
    assert_same_as_local(lake, loads, expected, local_loads)


def _wait_gone(session: int) -> None:
    """The killed driver's JVM and Python workers (its process group) end once it is gone."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.killpg(session, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.killpg(session, signal.SIGKILL)
    pytest.fail("the killed driver's JVM outlived it by 60 s")


def test_s3_inputs_by_prefix_glob(s3_server: Any, tmp_path: Path) -> None:
    """Inputs on S3 (the moto server), named by a glob: each object read by a task (streamed to its
    reader), the lake equal to a local load of the same files but for `source_file`, which is the
    object's URL; a rerun finds them already loaded (fingerprints and checksums read from S3)."""
    if not WITH_REJECTS.is_file():
        pytest.skip("needs ../shared/corpora")
    fs, root = filesystem(s3_server.bucket("pgn"))
    urls = {}
    for path in (SAMPLE, WITH_REJECTS):
        with output_stream(fs, f"{root}/months/{path.name}") as out:
            out.write(path.read_bytes())
        urls[str(path)] = f"s3://pgn/months/{path.name}"
    lake = tmp_path / "lake"
    args = ["s3://pgn/months/*.pgn*", "--lake", str(lake), "--master", "local[1]"]
    run = run_module("loaders.spark_pgn2parquet", args, timeout=300)
    assert run.returncode == 0, run.stderr
    local = tmp_path / "local"
    local_loads = local_lake([SAMPLE, WITH_REJECTS], local)
    committed = sorted(Records.read(Lake.open(str(lake))).loads, key=lambda r: r.input)
    assert [r.input for r in committed] == sorted(urls.values())
    loads = [load_summary(r, lake) for r in committed]
    for mine, theirs in zip(loads, local_loads, strict=True):
        # The rejects name the input as given: the URL here, the path there.
        rejects = [line.replace(theirs["input"], urls[theirs["input"]]) for line in theirs["rejects"]]
        assert mine == {**theirs, "input": urls[theirs["input"]], "rejects": rejects}
    games = lake_table(lake, "games", GAME_KEYS)
    expected = lake_table(local, "games", GAME_KEYS)
    named = pa.array([urls[name] for name in expected["source_file"].to_pylist()])
    expected = expected.set_column(expected.schema.get_field_index("source_file"), "source_file", named)
    assert games.num_rows > 0 and games.equals(expected.cast(games.schema))
    assert lake_table(lake, "plies", PLY_KEYS).equals(lake_table(local, "plies", PLY_KEYS))
    again = run_module("loaders.spark_pgn2parquet", args, timeout=300)
    assert again.returncode == 0 and again.stdout.count("already loaded") == 2, again.stdout + again.stderr


def test_a_task_whose_s3_copy_is_cut_fails(
    s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task reading an S3 object whose copy the network cuts fails (Spark runs it again) instead of
    reporting the object read whole to where the copy stopped."""
    from s3_server import cut_copies

    from warehouse.errors import InputError
    from warehouse.ingest.spark_task import Unit, convert

    url = s3_server.bucket("cut-task") + "/sample.pgn"
    fs, key = filesystem(url)
    text = zstandard.ZstdDecompressor().stream_reader(SAMPLE.read_bytes(), read_across_frames=True).read()
    with output_stream(fs, key) as out:
        out.write(text)
    lake = Lake.open(str(tmp_path / "lake"), creating=True)
    unit = Unit(0, url, "20261130T000000-cut", lake.location, batch_games=100)
    whole = convert(unit, "a0")
    assert (whole.error, whole.games_seen, whole.input_size) == (None, 438, len(text))
    cut_copies(monkeypatch, len(text) // 3)
    with pytest.raises(InputError, match="connection reset"):
        convert(unit, "a1")


def test_a_clock_beyond_its_column_and_pzstd_frames(spark: Any, tmp_path: Path) -> None:
    """Issue 26: a game's `[%clk 100000:00:00]` failed the whole Spark load (its Parquet cast); it is a
    reject, its neighbours kept, each frame a task, a skippable frame (pzstd's) before each."""
    bad = '[Site "https://lichess.org/abcd9999"]\n\n1. e4 { [%clk 100000:00:00] } e5 *\n\n'
    texts = [make_games(0, 30), bad + make_games(30, 30)]
    path = tmp_path / "frames.pgn.zst"
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"pzst"
    path.write_bytes(b"".join(skippable + zstandard.ZstdCompressor().compress(t.encode()) for t in texts))
    done = spark_load(spark, [str(path)], Lake.open(str(tmp_path / "lake")), unit_bytes=1)
    assert not done.errors, done.errors
    (result,) = done.results
    record = result.record
    assert (record.games_seen, record.games_written, record.games_rejected) == (61, 60, 1)
    assert record.rejects_by_kind == {"out_of_range": 1}
    assert {re.sub(r".*-u(\d+)a\d+-\d+\.parquet", r"\1", f) for f in record.files} == {"0", "1"}, record.files
