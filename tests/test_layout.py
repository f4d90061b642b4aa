"""Lake layout versions: a lake of layout 1 (tests/data/lake_v1, written by the loader before `plies/`), 2
(tests/data/lake_v2, before `plies.think` and `plies.mates`), 3 (tests/data/lake_v3, before
`plies.analysed`) or 4 (tests/data/lake_v4, before the material columns) is refused by every command in
one line naming the upgrade; the upgrade rewrites it in place, crash-safe, into a lake that `check --full`
passes, holding the same games with their keys and plies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import support
from game_keys import expected_key
from support import assert_row_groups_by_kind

import warehouse
from warehouse.errors import LakeError, NotPublished
from warehouse.lake import commit as commit_module
from warehouse.lake.layout import LAYOUT
from warehouse.lake.location import Lake
from warehouse.lake.parquet import plain_schema
from warehouse.lake.positions import GAME_COLUMNS, derive
from warehouse.maintenance import upgrade as upgrade_module

LAKE_V1 = support.DATA / "lake_v1"
V1_GAMES = 51
LAKE_V2 = support.DATA / "lake_v2"
V2_GAMES = 58
LAKE_V3 = support.DATA / "lake_v3"
V3_GAMES = 58
LAKE_V4 = support.DATA / "lake_v4"
# The columns layout 5 adds (`crates/bgn-core/src/material.rs`; plies.result, its game's).
MATERIAL_GAME_COLUMNS = list(GAME_COLUMNS[4:])
MATERIAL_PLY_COLUMNS = ["result", "material", "phase"]


def copy_lake(fixture: Path, tmp_path: Path) -> Path:
    lake = tmp_path / "lake"
    shutil.copytree(fixture, lake, ignore=shutil.ignore_patterns("README.md"))
    return lake


@pytest.fixture
def old_lake(tmp_path: Path) -> Path:
    return copy_lake(LAKE_V1, tmp_path)


@pytest.fixture(params=[1, 2, 3, 4], ids=["layout1", "layout2", "layout3", "layout4"])
def any_old_lake(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[int, Path]:
    """A copy of the fixture of each older layout, with its layout number."""
    return request.param, copy_lake({1: LAKE_V1, 2: LAKE_V2, 3: LAKE_V3, 4: LAKE_V4}[request.param], tmp_path)


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def games_table(lake: Path) -> pa.Table:
    table = ds.dataset(lake / "games", format="parquet", partitioning="hive").to_table()
    return table.sort_by("game_id")


def upgrade(lake: Path) -> support.Run:
    return support.run_module("loaders.upgrade", ["--lake", lake])


def test_every_command_refuses_an_old_lake_in_one_line(
    any_old_lake: tuple[int, Path], tmp_path: Path
) -> None:
    layout, old_lake = any_old_lake
    before = tree(old_lake)
    upgrade_hint = f"python -m loaders.upgrade --lake {old_lake}"
    commands = [
        ("loaders.pgn2parquet", [support.DATA / "edge" / "promotion.pgn", "--lake", old_lake]),
        ("warehouse.maintenance.check", ["--lake", old_lake]),
        ("warehouse.maintenance.compact", ["--lake", old_lake]),
        ("loaders.parquet2json", ["--lake", old_lake, tmp_path / "out.json"]),
        ("loaders.parquet2pgn", ["--lake", old_lake, tmp_path / "out.pgn"]),
    ]
    for name, args in commands:
        run = support.run_module(name, args)
        assert run.returncode == 2, (name, run.stderr)
        support.one_line_error(run, f"layout {layout}", upgrade_hint)
    with pytest.raises(LakeError, match="upgrade it in place"):
        warehouse.connect(old_lake)
    assert tree(old_lake) == before


def test_upgrade_in_place(old_lake: Path) -> None:
    old = games_table(old_lake)
    run = upgrade(old_lake)
    assert run.returncode == 0, run.stderr
    assert f"upgraded to layout {LAYOUT}: 7 files rewritten ({V1_GAMES} games" in run.stdout
    assert json.loads((old_lake / "_layout.json").read_text()) == {"layout": LAYOUT}
    check = support.run_module("warehouse.maintenance.check", ["--lake", old_lake, "--full"])
    assert check.returncode == 0, check.stdout + check.stderr
    new = games_table(old_lake)
    # The same games, each move with layout 2's `blast`, null (no atomic game in layout 1); the position
    # columns derived as by a load (tests/test_positions.py checks them with python-chess).
    new_games = new.drop_columns(["game_key", *GAME_COLUMNS]).to_pylist()
    for game in new_games:
        for move in [*game["moves"], *(m for line in game["variations"] for m in line["moves"])]:
            assert move.pop("blast") is None
    assert new_games == old.to_pylist()
    assert new["game_key"].to_pylist() == [expected_key(i) for i in new["game_id"].to_pylist()]
    plies = ds.dataset(old_lake / "plies", format="parquet", partitioning="hive").to_table()
    expected = pa.Table.from_batches([derive(b)[1] for b in new.to_batches()])
    plain = plain_schema(expected.schema)
    got = (
        plies.drop_columns(["type", "year", "month"])
        .cast(plain)
        .sort_by([("game_key", "ascending"), ("ply", "ascending")])
    )
    assert got.equals(expected.cast(plain).sort_by([("game_key", "ascending"), ("ply", "ascending")]))
    assert plies.num_rows == sum(new["n_plies"].to_pylist()) > 1000

    again = upgrade(old_lake)
    assert again.returncode == 0 and f"already of layout {LAYOUT}, nothing to do" in again.stdout
    # The upgraded lake takes loads, deduplicated against its games, and answers queries.
    loaded = support.load([support.SAMPLE], old_lake)
    assert loaded.returncode == 0, loaded.stderr
    assert f"{support.SAMPLE_GAMES} games seen = {support.SAMPLE_GAMES - 40} written" in loaded.stdout
    con = warehouse.connect(old_lake)
    assert con.sql("select count(*) from games").fetchall() == [(V1_GAMES + support.SAMPLE_GAMES - 40,)]
    # The upgraded files and the new load's share one schema per table.
    check = support.run_module("warehouse.maintenance.check", ["--lake", old_lake, "--full"])
    assert check.returncode == 0, check.stdout + check.stderr


def test_upgrade_interrupted_before_its_commit_changes_nothing(
    any_old_lake: tuple[int, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, old_lake = any_old_lake
    before = tree(old_lake)
    calls = 0
    real = upgrade_module.upgrade_file

    def failing(*args: object) -> tuple[int, int]:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(upgrade_module, "upgrade_file", failing)
    with pytest.raises(KeyboardInterrupt):
        upgrade_module.upgrade(Lake.open(old_lake, any_layout=True))
    assert tree(old_lake) == before


def test_upgrade_interrupted_after_its_commit_is_finished_by_the_next_run(
    old_lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def lost(*_: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(commit_module, "publish", lost)
    with pytest.raises(NotPublished):
        upgrade_module.upgrade(Lake.open(old_lake, any_layout=True))
    monkeypatch.undo()
    # Committed, not published: still layout 1 to every reader, until a writer finishes the upgrade.
    assert not (old_lake / "_layout.json").exists()
    run = upgrade(old_lake)
    assert run.returncode == 0, run.stderr
    assert (old_lake / "_layout.json").exists()
    check = support.run_module("warehouse.maintenance.check", ["--lake", old_lake, "--full"])
    assert check.returncode == 0, check.stdout + check.stderr
    assert games_table(old_lake).num_rows == V1_GAMES


def plies_table(lake: Path) -> pa.Table:
    table = ds.dataset(lake / "plies", format="parquet", partitioning="hive").to_table()
    return table.sort_by([("game_key", "ascending"), ("ply", "ascending")])


def test_upgrade_from_layout_2(tmp_path: Path) -> None:
    """A lake of layout 2 (the sample's first 40 games, edge games, one random game of each variant; 4
    rejects): the upgrade rewrites both tables; the games are the same, values and keys; the plies are the
    old ones with `think` and `mates` beside them (tests/test_plies.py checks those with python-chess);
    the old twins are gone; the lake takes loads and answers the questions that read the new columns."""
    lake = copy_lake(LAKE_V2, tmp_path)
    # The sample's blitz file in row groups of 5 games, as big lakes are: the upgrade reads a row group at a
    # time (a read across two fails on nested columns in pyarrow).
    blitz = next((lake / "games" / "type=blitz").rglob("*.parquet"))
    pq.write_table(pq.read_table(blitz, partitioning=None), blitz, row_group_size=5)
    assert pq.ParquetFile(blitz).num_row_groups > 2
    old_games, old_plies = games_table(lake), plies_table(lake)
    run = upgrade(lake)
    assert run.returncode == 0, run.stderr
    assert f"upgraded to layout {LAYOUT}: " in run.stdout and f"({V2_GAMES} games" in run.stdout
    assert json.loads((lake / "_layout.json").read_text()) == {"layout": LAYOUT}
    check = support.run_module("warehouse.maintenance.check", ["--lake", lake, "--full"])
    assert check.returncode == 0, check.stdout + check.stderr
    new_games, new_plies = games_table(lake), plies_table(lake)
    plain = plain_schema(old_games.schema)
    assert (
        new_games.cast(plain_schema(new_games.schema))
        .select(plain.names)
        .cast(plain)
        .equals(old_games.cast(plain))
    )
    assert new_games.num_rows == V2_GAMES
    old_plain = plain_schema(old_plies.schema)
    assert new_plies.select(old_plain.names).cast(old_plain).equals(old_plies.cast(old_plain))
    assert {"think", "mates"} <= set(new_plies.column_names)
    assert new_plies["think"].null_count < new_plies.num_rows  # the sample's games have clocks
    assert sum(new_plies["mates"].to_pylist()) > 0
    # Every plies/ file is the twin of a live games/ file: the old twins went with their games files.
    games_files = {p.relative_to(lake / "games") for p in (lake / "games").rglob("*.parquet")}
    assert {p.relative_to(lake / "plies") for p in (lake / "plies").rglob("*.parquet")} == games_files
    loaded = support.load([support.SAMPLE], lake)
    assert loaded.returncode == 0, loaded.stderr
    assert f"{support.SAMPLE_GAMES} games seen = {support.SAMPLE_GAMES - 40} written" in loaded.stdout
    assert not warehouse.query("clock_pace", lake).is_empty()


def test_upgrade_from_layout_3(tmp_path: Path) -> None:
    """A lake of layout 3 (the same games as tests/data/lake_v2's, two of the sample's analysed): the
    upgrade adds `plies.analysed` (each game's `has_eval`) and parts analysed games into row groups of their
    own in both tables; the games and their other plies' columns are the same; the lake takes loads."""
    lake = copy_lake(LAKE_V3, tmp_path)
    old_games, old_plies = games_table(lake), plies_table(lake)
    run = upgrade(lake)
    assert run.returncode == 0, run.stderr
    assert f"upgraded to layout {LAYOUT}: " in run.stdout and f"({V3_GAMES} games" in run.stdout
    check = support.run_module("warehouse.maintenance.check", ["--lake", lake, "--full"])
    assert check.returncode == 0, check.stdout + check.stderr
    new_games, new_plies = games_table(lake), plies_table(lake)
    assert new_games.drop_columns(MATERIAL_GAME_COLUMNS).equals(old_games)
    assert new_plies.drop_columns(["analysed", *MATERIAL_PLY_COLUMNS]).equals(old_plies)
    keys, flags = new_games["game_key"].to_pylist(), new_games["has_eval"].to_pylist()
    analysed = {k for k, e in zip(keys, flags, strict=True) if e}
    assert len(analysed) == 2
    assert new_plies["analysed"].to_pylist() == [k in analysed for k in new_plies["game_key"].to_pylist()]
    assert assert_row_groups_by_kind(lake) == (2, 0)
    loaded = support.load([support.SAMPLE], lake)
    assert loaded.returncode == 0, loaded.stderr
    assert not warehouse.query("time_trouble", lake).is_empty()


def test_upgrade_from_layout_4(tmp_path: Path) -> None:
    """A lake of layout 4: the upgrade adds the material columns to both tables, equal to those a load of
    the same games writes (which tests/test_oracle_corpora.py compares with python-chess), and changes
    nothing else."""
    lake = copy_lake(LAKE_V4, tmp_path)
    old_games, old_plies = games_table(lake), plies_table(lake)
    run = upgrade(lake)
    assert run.returncode == 0, run.stderr
    check = support.run_module("warehouse.maintenance.check", ["--lake", lake, "--full"])
    assert check.returncode == 0, check.stdout + check.stderr
    new_games, new_plies = games_table(lake), plies_table(lake)
    assert new_games.drop_columns(MATERIAL_GAME_COLUMNS).equals(old_games)
    assert new_plies.drop_columns(MATERIAL_PLY_COLUMNS).equals(old_plies)
    fresh = tmp_path / "fresh"
    loaded = support.load([support.SAMPLE], fresh)
    assert loaded.returncode == 0, loaded.stderr
    keys = ["game_key"]
    by_key = (
        games_table(fresh)
        .select(keys + MATERIAL_GAME_COLUMNS)
        .join(
            new_games.select(keys + MATERIAL_GAME_COLUMNS), keys, join_type="inner", right_suffix="_upgraded"
        )
    )
    assert by_key.num_rows == 40  # the sample's games of the fixture
    for name in MATERIAL_GAME_COLUMNS:
        assert by_key[name].equals(by_key[f"{name}_upgraded"]), name
    assert new_games["final_material"].null_count < new_games.num_rows
    plies = plies_table(fresh).select(["game_key", "ply", *MATERIAL_PLY_COLUMNS])
    upgraded = new_plies.select(["game_key", "ply", *MATERIAL_PLY_COLUMNS])
    joined = plies.join(upgraded, ["game_key", "ply"], join_type="inner", right_suffix="_upgraded")
    sample_games = new_games.filter(pc.is_in(new_games["game_key"], by_key["game_key"]))
    assert joined.num_rows == pc.sum(sample_games["n_plies"]).as_py() > 0
    for name in MATERIAL_PLY_COLUMNS:
        assert joined[name].equals(joined[f"{name}_upgraded"]), name
