"""The optional position index against python-chess: a lake loaded in two parts, the index built between
them (so it covers the first part only and the second is found by the replay scan), searched by FEN;
then rebuilt over both; then compacted (the compacted files are new: the index covers none of them).
Every answer must be python-chess's replay's, with the index or without.

The inputs: the bundled lichess sample cut in two halves (the first part; the second half lands in the
same partitions, so a compaction merges files), and the TCEC Chess960 file when the corpora are there
(second part). The games' python-chess replays and the probe positions are position_oracle's.
"""

from __future__ import annotations

from pathlib import Path

import chess
import chess.polyglot
import pytest
import support
from position_oracle import CHESS960, Replayed, paired_games, probe_fens, reaching, signed
from s3_server import S3Server

import warehouse
from warehouse.lake.location import Lake
from warehouse.lake.records import IndexRecord, Records
from warehouse.positions import search
from warehouse.positions.explorer import explore
from warehouse.positions.index import INDEX_DIR, PositionIndex, bucket_bits


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("inputs")
    sample = support.sample_games()
    halves = [folder / "first.pgn", folder / "second.pgn"]
    halves[0].write_text("".join(sample[: len(sample) // 2]), encoding="utf-8")
    halves[1].write_text("".join(sample[len(sample) // 2 :]), encoding="utf-8")
    return [*halves, *([CHESS960] if CHESS960.exists() else [])]


@pytest.fixture(scope="module")
def lake(inputs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first input loaded, the index built, then the others loaded."""
    lake = support.loaded(inputs[:1], tmp_path_factory.mktemp("index") / "lake")
    built = support.run_module("loaders.position_index", ["--lake", lake])
    assert built.returncode == 0, built.stderr
    return support.loaded(inputs[1:], lake)


@pytest.fixture(scope="module")
def games(lake: Path, inputs: list[Path]) -> list[tuple[dict, Replayed]]:
    return paired_games(lake, inputs)


def index_of(lake: Path) -> PositionIndex:
    index = PositionIndex.open(Lake.open(lake))
    assert index is not None
    return index


def answers(lake: Path, games: list[tuple[dict, Replayed]]) -> None:
    """Every probe's search, deep and shallow, equals python-chess's replay of every game, with the index
    and without."""
    con = warehouse.connect(lake)
    chess960 = {row["start_fen"].split()[0] for row, _ in games if row["variant"] == "Chess960"}
    for fen in probe_fens(games):
        key = signed(chess.polyglot.zobrist_hash(chess.Board(fen, chess960=True)))
        as_960 = fen.split()[0] in chess960
        for index in (True, False):
            for deep, max_ply in ((True, None), (False, 10)):
                found = search(fen, lake, chess960=as_960, deep=deep, index=index, con=con)
                got = dict(zip(found["game_id"], found["ply"], strict=True))
                assert got == reaching(games, key, max_ply), (fen, index, deep)


def test_index_covers_the_first_load_and_the_replay_the_second(
    lake: Path, games: list[tuple[dict, Replayed]]
) -> None:
    index = index_of(lake)
    records = Records.read(Lake.open(lake))
    first, *later = (load.file_rows for load in records.loads)
    assert index.record.covers == first and index.covered == set(first)
    assert set(records.live_files()) == set(first).union(*later) and later
    # The index answers by itself for the first load's games, deep positions included.
    standard = [(row, g) for row, g in games if row["variant"] == "Standard" and len(g.keys) > 60]
    for row, game in standard[:5]:
        hits = index.lookup(game.keys[40])
        assert (row["game_key"], reaching(games, game.keys[40])[row["game_id"]]) in zip(
            hits["game_key"].to_pylist(), hits["ply"].to_pylist(), strict=True
        )
    answers(lake, games)


def test_rebuilt_index_covers_both_and_replaces_the_first(
    lake: Path, games: list[tuple[dict, Replayed]]
) -> None:
    before = index_of(lake).record
    built = support.run_module("loaders.position_index", ["--lake", lake])
    assert built.returncode == 0, built.stderr
    after = index_of(lake)
    live = Records.read(Lake.open(lake)).live_files()
    assert after.covered == set(live) and after.record.covers == live
    assert after.record.removes == before.files_of_index() and before.covers_file in before.files_of_index()
    assert not (lake / INDEX_DIR / before.load_id).exists()
    assert all((lake / rel).exists() for rel in after.record.files_of_index())
    assert after.record.positions == sum(len(g.keys) for _, g in games)  # every position, final included
    answers(lake, games)
    assert isinstance(after.record, IndexRecord)
    checked = support.run_module("loaders.check", ["--lake", lake])
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_bucket_bits_keep_buckets_small() -> None:
    assert bucket_bits(0) == 0 and bucket_bits(4_000_000) == 0
    assert bucket_bits(4_000_001) == 1 and bucket_bits(66_000_000) == 5
    assert bucket_bits(1 << 60) == 16


def test_index_command_on_no_lake(tmp_path: Path) -> None:
    run = support.run_module("loaders.position_index", ["--lake", tmp_path / "nowhere"])
    support.one_line_error(run, "nowhere")


def test_compaction_leaves_files_the_index_does_not_cover(
    lake: Path, games: list[tuple[dict, Replayed]]
) -> None:
    """Runs after the rebuild: the index covers every file until the compaction rewrites some."""
    compacted = support.run_module("warehouse.maintenance.compact", ["--lake", lake])
    assert compacted.returncode == 0, compacted.stderr
    index = index_of(lake)
    live = set(Records.read(Lake.open(lake)).live_files())
    assert index.covered < set(index.record.covers) and live - index.covered
    answers(lake, games)


def test_index_on_s3(s3_server: S3Server, inputs: list[Path], games: list[tuple[dict, Replayed]]) -> None:
    """Built and searched on S3 (moto): the first input alone, deep probes."""
    url = s3_server.bucket("position-index") + "/lake"
    loaded = support.load(inputs[:1], url)
    assert loaded.returncode == 0, loaded.stderr
    built = support.run_module("loaders.position_index", ["--lake", url])
    assert built.returncode == 0, built.stderr
    first = [(row, game) for row, game in games if row["source_file"] == str(inputs[0])]
    index = PositionIndex.open(Lake.open(url))
    assert index is not None and index.covered == set(index.record.covers)
    con = warehouse.connect(url)
    for fen in probe_fens(first):
        key = signed(chess.polyglot.zobrist_hash(chess.Board(fen)))
        found = search(fen, url, con=con)
        want = reaching(first, key)
        assert dict(zip(found["game_id"], found["ply"], strict=True)) == want, fen
        # The explorer reads the moves there by row number, and SQL the index through its covers table.
        plays = sum(1 for row, _ in first if row["game_id"] in want and want[row["game_id"]] < row["n_plies"])
        assert explore(fen, url, con=con)["games"].sum() == plays, fen
        in_sql = con.sql("select count(*) from games_at($fen)", params={"fen": fen}).fetchall()
        assert in_sql == [(len(want),)], fen


def test_damaged_file_stops_the_build_in_one_line(inputs: list[Path], tmp_path: Path) -> None:
    """A plies file cut short: the build names it, commits nothing and leaves no staged file."""
    lake = support.loaded(inputs[:1], tmp_path / "lake")
    records = sorted((lake / "_loads").iterdir())
    damaged = next((lake / "plies").rglob("*.parquet"))
    damaged.write_bytes(damaged.read_bytes()[:1000])
    run = support.run_module("loaders.position_index", ["--lake", lake])
    support.one_line_error(run, damaged.name)
    assert sorted((lake / "_loads").iterdir()) == records
    assert not list((lake / "_staging").rglob("*")) and not (lake / INDEX_DIR).exists()


# The build in a small budget (`BUCKET_POSITIONS`), without the explorer's pre-aggregate (DuckDB's own
# limit, `aggregate.MEMORY_LIMIT`): its peak over its start, in MB, on stdout. clear_refs' 5 resets the
# peak (VmHWM) to the RSS of then: the build's, not the imports'.
BUILD_PEAK = """
import sys
from pathlib import Path
from warehouse.lake.location import Lake
from warehouse.positions import index

def status(field):
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(field + ":"))
    return int(line.split()[1]) / 1024

index.BUCKET_POSITIONS = 100_000
lake = Lake.open_existing(sys.argv[1])
Path("/proc/self/clear_refs").write_text("5")
start = status("VmRSS")
index.build(lake, frequent_games=1 << 62)
print(status("VmHWM") - start)
"""
# Its bound on a lake of 24,000 games (1.6 M positions) in twelve monthly files: the build holds a file's
# positions and a bucket's at a time, ~80 MB over its start here (~35 MB of it the libraries' first use and
# the allocator's); one holding the lake's positions at once (all in one bucket), ~190 MB.
BUILD_PEAK_MB = 120


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc peak RSS")
def test_index_build_holds_a_bucket_not_the_lake(tmp_path: Path) -> None:
    months = [
        support.write_zst(tmp_path / f"{month}.pgn.zst", support.make_games(month * 2000, 2000, month=month))
        for month in range(1, 13)
    ]
    lake = support.loaded(months, tmp_path / "lake")
    run = support.run_command(support.python("-c", BUILD_PEAK, lake))
    assert run.returncode == 0, run.stderr
    assert float(run.stdout) < BUILD_PEAK_MB, f"the build's peak: {float(run.stdout):.0f} MB over its start"
