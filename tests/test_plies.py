"""The `plies` table against python-chess: every mainline ply of real games, field by field, with the game
key computed here from `game_id` by the documented rule; and `plies_of` on sliced and empty batches."""

from __future__ import annotations

import io
import shutil
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import support
from game_keys import expected_key
from oracle import expected_games
from pychess_counts import Game, think_time
from support import assert_row_groups_by_kind

from warehouse import _core
from warehouse.lake.parquet import ONE_ROW_GROUP_GAMES
from warehouse.lake.plies import MOVE_FIELDS, PLIES
from warehouse.lake.positions import GAME_COLUMNS, derive, reader_openings

CORPORA = support.CORPORA
INPUTS = [
    support.SAMPLE,
    CORPORA / "tournament" / "twic1599_sample.pgn",
    *sorted((CORPORA / "engine").glob("*.pgn"))[:4],  # TCEC: Chess960 starts, long comments
    support.DATA / "edge" / "promotion.pgn",
    support.DATA / "edge" / "en_passant.pgn",
    support.DATA / "edge" / "fen_start.pgn",
    *(
        CORPORA / "edge" / "pychess" / "testing" / "gamefiles" / f for f in ("zh.pgn", "atomic.pgn")
    ),  # drops, blasts
]


def read_table(lake: Path, table: str) -> list[dict[str, Any]]:
    return ds.dataset(lake / table, format="parquet", partitioning="hive").to_table().to_pylist()


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    inputs = support.present(*INPUTS)  # the thresholds below count the corpora's games too
    return support.loaded(inputs, tmp_path_factory.mktemp("plies") / "lake", "--allow-duplicates")


def test_plies_match_python_chess(lake: Path) -> None:
    games = read_table(lake, "games")
    plies: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in read_table(lake, "plies"):
        plies[row["game_key"]].append(row)
    by_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for game in games:
        by_source[game["source_file"]].append(game)
    compared = thinks = mates = analysed = materials = 0
    for source, stored in by_source.items():
        stored.sort(key=lambda g: g["source_offset"])
        expected = [e.row for e in expected_games(Path(source)) if not e.rejected]
        assert len(expected) == len(stored), source
        for want, game in zip(expected, stored, strict=True):
            assert game["game_key"] == expected_key(game["game_id"])
            rows = plies[game["game_key"]]
            assert [r["ply"] for r in rows] == list(range(len(want["moves"]))), game["game_id"]
            oracle_game = Game(want, [], [], [], [], 0, [])
            for row, move in zip(rows, want["moves"], strict=True):
                assert {f: row[f] for f in MOVE_FIELDS} == {f: move[f] for f in MOVE_FIELDS}, (
                    f"{game['game_id']} ply {row['ply']}"
                )
                assert row["think"] == think_time(oracle_game, row["ply"]), (
                    f"{game['game_id']} ply {row['ply']}"
                )
                assert row["mates"] == (want["mate"] and row["ply"] == len(want["moves"]) - 1)
                assert row["analysed"] == want["has_eval"]
                assert (row["material"], row["phase"]) == (
                    want["ply_material"][row["ply"]],
                    want["ply_phase"][row["ply"]],
                ), f"{game['game_id']} ply {row['ply']}"
                materials += row["material"] is not None
                analysed += row["analysed"]
                mates += row["mates"]
                thinks += row["think"] is not None
                assert (row["type"], row["year"], row["month"], row["variant"], row["result"]) == (
                    game["type"],
                    game["year"],
                    game["month"],
                    want["variant"],
                    want["result"],
                )
            compared += len(rows)
    assert len(plies) == len(games), "every game, and no other, has its plies"
    assert compared == sum(len(rows) for rows in plies.values()) > 100_000
    assert thinks > 10_000, "think times of timed games compared"
    assert mates > 10, "mating moves compared"
    assert 1000 < analysed < compared, "plies of analysed games and of others compared"
    assert materials > 100_000, "material and phase compared"


def test_plies_of_sliced_and_empty_batches() -> None:
    """Sliced batches keep each game's plies, variant, result, think times (nulls included) and analysis its
    own."""
    clocks = {
        (g, i): None if (g, i) == (4, 1) else Decimal(100 * g - 3 * i) / 10
        for g in range(6)
        for i in range(g)
    }
    move = pa.struct([(f, pa.decimal128(9, 1) if f == "clk" else pa.string()) for f in MOVE_FIELDS])
    moves = pa.array(
        [
            [{f: clocks[g, i] if f == "clk" else f"{f}{g}{i}" for f in MOVE_FIELDS} for i in range(g)]
            for g in range(6)
        ],
        pa.list_(move),
    )
    keys = pa.array(range(100, 106), pa.int64())
    variants = pa.array([f"variant {g}" for g in range(6)])
    results = pa.array(["WBD*WB"[g] for g in range(6)])
    base = pa.array([None if g == 3 else 10 * g for g in range(6)], pa.int32())
    inc = pa.array([None if g == 3 else g for g in range(6)], pa.int32())
    mate = pa.array([g % 2 == 1 for g in range(6)])
    analysed = pa.array([g % 3 == 0 for g in range(6)])
    games = pa.record_batch(
        [keys, moves, variants, results, base, inc, mate, analysed],
        names=["game_key", "moves", "variant", "result", "tc_base", "tc_inc", "mate", "has_eval"],
    )

    def keyless(batch: pa.RecordBatch) -> pa.RecordBatch:
        """The plies of moves that are no real moves: of variants without position keys, not replayed."""
        return derive(batch.append_column("start_fen", pa.nulls(batch.num_rows, pa.string())))[1]

    def think(g: int, i: int) -> Decimal | None:
        before = base[g].as_py() if i < 2 else clocks[g, i - 2]
        after, increment = clocks[g, i], inc[g].as_py()
        return None if None in (before, after, increment) else before - after + increment

    sliced = keyless(games.slice(2, 3)).to_pylist()
    got = [
        (r["game_key"], r["ply"], r["p"], r["variant"], r["result"], r["think"], r["mates"], r["analysed"])
        for r in sliced
    ]
    assert got == [
        (
            g,
            i,
            f"p{g - 100}{i}",
            f"variant {g - 100}",
            "WBD*WB"[g - 100],
            think(g - 100, i),
            g % 2 == 1 and i == g - 101,
            g == 103,
        )
        for g in (102, 103, 104)
        for i in range(g - 100)
    ]
    assert sum(r["think"] is None for r in sliced) == 3 + 2  # game 3 has no time control; 4's ply 1 no clock
    assert keyless(games.slice(0, 1)).num_rows == 0
    assert keyless(games.slice(6, 0)).num_rows == 0


def test_every_operation_keeps_plies_with_their_games(tmp_path: Path) -> None:
    """Loads with duplicates, a `--force` reload and a compaction: after each, `check --full` finds every
    games/ file with its plies/ twin holding exactly its games' plies, and no other plies file."""
    lake = tmp_path / "lake"
    first = tmp_path / "first.pgn"
    first.write_text(support.make_games(0, 30))
    second = tmp_path / "second.pgn"
    second.write_text(support.make_games(20, 30))  # 10 games already in the lake
    for args in ([first], [second], [first, "--force"]):
        run = support.load(args, lake)
        assert run.returncode == 0, run.stderr
        check_full(lake)
    assert "20 written" in support.load([second, "--force"], lake).stdout
    compacted = support.run_module(
        "warehouse.maintenance.compact", ["--lake", lake, "--target-games", "1000"]
    )
    assert compacted.returncode == 0 and "merged" in compacted.stdout, compacted.stderr
    check_full(lake)
    games = read_table(lake, "games")
    assert len(games) == 50
    assert len(read_table(lake, "plies")) == sum(g["n_plies"] for g in games)
    files = {
        t: sorted(str(p.relative_to(lake / t)) for p in (lake / t).rglob("*.parquet"))
        for t in ("games", "plies")
    }
    assert files["games"] == files["plies"]
    assert len({f.rsplit("/", 1)[0] for f in files["games"]}) == len(files["games"]), "one file a partition"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_analysed_games_have_row_groups_of_their_own(jobs: str, tmp_path: Path) -> None:
    """Loads (one job or two), then a compaction of their small files: analysed games and the others share
    a row group only as the one row group of a file of fewer than `ONE_ROW_GROUP_GAMES` games (the others
    first), in both tables alike; a bigger file, written by a load or by the compaction, holds them in row
    groups of one kind; no game is lost."""
    lake = tmp_path / "lake"
    games = [g for g in support.make_games(0, 11_000).split("[Event") if g.strip()]
    expected = sum("%eval" in game for game in games)
    # The first load's blitz partition takes more games than ONE_ROW_GROUP_GAMES, its others fewer; the
    # second load's files are all small, and the compaction merges each partition's two.
    for n, (start, end) in enumerate([(0, 10_500), (10_500, len(games))]):
        part = tmp_path / f"part{n}.pgn"
        part.write_text("".join("[Event" + g for g in games[start:end]))
        support.loaded([part], lake, "--jobs", jobs)
    assert_small_files_in_one_row_group(lake, expected, big_files=1)
    compacted = support.run_module(
        "warehouse.maintenance.compact", ["--lake", lake, "--target-games", "20000"]
    )
    assert compacted.returncode == 0 and "merged" in compacted.stdout, compacted.stderr
    check_full(lake)
    assert_small_files_in_one_row_group(lake, expected, big_files=1)
    assert len(read_table(lake, "games")) == len(games)


def assert_small_files_in_one_row_group(lake: Path, analysed: int, big_files: int) -> None:
    """Row groups by kind (`assert_row_groups_by_kind`), `analysed` games in all, every file of fewer
    than `ONE_ROW_GROUP_GAMES` games in one row group, and `big_files` other files, of both kinds."""
    seen, mixed = assert_row_groups_by_kind(lake)
    assert seen == analysed
    files = [pq.ParquetFile(p).metadata for p in (lake / "games").rglob("*.parquet")]
    small = [meta for meta in files if meta.num_rows < ONE_ROW_GROUP_GAMES]
    assert {meta.num_row_groups for meta in small} == {1}
    assert len(files) - len(small) == big_files
    assert all(meta.num_row_groups == 2 for meta in files if meta.num_rows >= ONE_ROW_GROUP_GAMES)
    assert mixed >= 3, "the small bullet, rapid and ultrabullet files hold both kinds"


def check_full(lake: Path) -> None:
    run = support.run_module("warehouse.maintenance.check", ["--lake", lake, "--full"])
    assert run.returncode == 0, run.stdout + run.stderr


def test_check_reports_plies_missing_or_disagreeing(sample_lake: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    shutil.copytree(sample_lake, lake)
    blitz, bullet = (next((lake / "plies" / f"type={t}").rglob("*.parquet")) for t in ("blitz", "bullet"))
    swapped = blitz.read_bytes()
    blitz.write_bytes(bullet.read_bytes())  # the bullet games' plies, where the blitz games' belong
    run = support.run_module("warehouse.maintenance.check", ["--lake", lake])
    assert run.returncode == 1
    assert f"{blitz.relative_to(lake)}: " in run.stdout and "plies, the games of" in run.stdout

    # Same games, a field changed: only --full reads it.
    table = pq.read_table(io.BytesIO(swapped))
    changed = table.set_column(
        table.schema.get_field_index("clk"), "clk", pa.nulls(len(table), table["clk"].type)
    )
    pq.write_table(changed, blitz)
    assert support.run_module("warehouse.maintenance.check", ["--lake", lake]).returncode == 0
    full = support.run_module("warehouse.maintenance.check", ["--lake", lake, "--full"])
    assert full.returncode == 1 and "its plies differ from the moves of the games of" in full.stdout

    blitz.unlink()
    missing = support.run_module("warehouse.maintenance.check", ["--lake", lake])
    assert missing.returncode == 1
    assert f"its plies file {blitz.relative_to(lake)} is missing" in missing.stdout
    assert f"{blitz.relative_to(lake)}: listed by a committed record but missing" in missing.stdout


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_readers_plies_are_those_stored_games_give(jobs: int) -> None:
    """One derivation, two feeds: the plies and position columns the reader derives from its replay
    (`PgnReader(openings=)`, a load's path) equal those `derive` gives the same games read back without
    them (the upgrade's, compaction's and `check --full`'s path), on real games of every kind of start."""
    games = 0
    for path in INPUTS:
        if not path.exists():
            continue
        for partition, batch, _ in _core.PgnReader(str(path), jobs=jobs, openings=reader_openings()):
            if partition is None:
                continue
            read = pa.table(batch).combine_chunks().to_batches()[0]
            stored = read.drop_columns([PLIES, *GAME_COLUMNS])
            assert PLIES not in stored.schema.names
            for start in (0, 1):  # a batch as read, and a slice of it
                got_games, got_plies = derive(read.slice(start))
                want_games, want_plies = derive(stored.slice(start))
                assert got_games.equals(want_games), path
                assert got_plies.equals(want_plies), path
            games += read.num_rows
    assert games > 400
