"""Incremental, idempotent loads and dedup, through the real CLI; expected counts come from the generator
(`make_games`: games numbered n carry the lichess id of n), never from the loader."""

from __future__ import annotations

from pathlib import Path

from support import check_lake, lake_counts, load, make_games, read_games, read_records, run_module, write_zst


def data_files(lake: Path) -> dict[str, float]:
    return {str(p.relative_to(lake)): p.stat().st_mtime_ns for p in (lake / "games").glob("**/*.parquet")}


def test_same_input_twice_writes_nothing(tmp_path: Path) -> None:
    source = write_zst(tmp_path / "may.pgn.zst", make_games(0, 300))
    lake = tmp_path / "lake"
    first = load([source], lake)
    assert first.returncode == 0, first.stderr
    before = data_files(lake)
    again = load([source], lake)
    assert again.returncode == 0, again.stderr
    assert "already loaded" in again.stdout and "nothing written" in again.stdout
    assert data_files(lake) == before
    assert len(read_records(lake)) == 1
    assert lake_counts(lake) == (300, 300)
    # The same bytes under another name, and through standard input, are the same input.
    copy = tmp_path / "copy.pgn.zst"
    copy.write_bytes(source.read_bytes())
    assert "already loaded" in load([copy], lake).stdout
    assert "already loaded" in load(["-"], lake, stdin=source.read_bytes()).stdout
    assert data_files(lake) == before and len(read_records(lake)) == 1
    check_lake(lake)


def test_force_replaces_the_inputs_files(tmp_path: Path) -> None:
    source = write_zst(tmp_path / "may.pgn.zst", make_games(0, 300))
    lake = tmp_path / "lake"
    assert load([source], lake).returncode == 0
    old = set(data_files(lake))
    forced = load([source], lake, "--force")
    assert forced.returncode == 0, forced.stderr
    assert "replaced load" in forced.stdout
    new = set(data_files(lake))
    assert not old & new, "the earlier load's files are gone"
    assert lake_counts(lake) == (300, 300)
    first, second = sorted(read_records(lake), key=lambda r: r["finished"])
    assert second["replaces"] == [first["load_id"]]
    assert second["games_written"] == 300 and second["games_duplicate"] == 0
    check_lake(lake)


def test_new_month_adds_only_its_partitions(tmp_path: Path) -> None:
    may = write_zst(tmp_path / "may.pgn.zst", make_games(0, 400, month=5))
    june = write_zst(tmp_path / "june.pgn.zst", make_games(400, 400, month=6))
    lake = tmp_path / "lake"
    assert load([may], lake).returncode == 0
    before = data_files(lake)
    assert load([june], lake).returncode == 0
    after = data_files(lake)
    assert {k: v for k, v in after.items() if k in before} == before, "May's files untouched"
    assert all("/month=6/" in f for f in set(after) - set(before))
    assert lake_counts(lake) == (800, 800)
    check_lake(lake)


def test_overlapping_inputs_are_deduplicated(tmp_path: Path) -> None:
    """A player's own export (games 250-349) overlaps the monthly dump (games 0-299) by 50 games."""
    dump = write_zst(tmp_path / "dump.pgn.zst", make_games(0, 300))
    own = tmp_path / "own.pgn"
    own.write_text(make_games(250, 100).replace("\n", "\r\n"))  # other bytes, same games
    lake = tmp_path / "lake"
    assert load([dump], lake).returncode == 0
    run = load([own], lake)
    assert run.returncode == 0, run.stderr
    assert "100 games seen = 50 written + 0 rejected + 50 duplicates" in run.stdout
    rec = next(r for r in read_records(lake) if r["input"] == str(own))
    assert (rec["games_seen"], rec["games_written"], rec["games_duplicate"]) == (100, 50, 50)
    assert lake_counts(lake) == (350, 350)
    check_lake(lake)


def test_games_without_lichess_id_dedup_by_content(tmp_path: Path) -> None:
    """No lichess URL: the id is a hash of tags and moves, so the same game with other whitespace and
    line endings is a duplicate; within one input too."""
    games = make_games(0, 40)
    games = games.replace("https://lichess.org/", "local:")
    first = tmp_path / "a.pgn"
    first.write_text(games + games[: games.index("[Event", 10)])  # the first game twice
    second = tmp_path / "b.pgn"
    second.write_text(games.replace("\n", "\r\n").replace(" 1. ", "  1.  "))
    lake = tmp_path / "lake"
    run = load([first, second], lake)
    assert run.returncode == 0, run.stderr
    assert "41 games seen = 40 written + 0 rejected + 1 duplicates" in run.stdout
    assert "40 games seen = 0 written + 0 rejected + 40 duplicates" in run.stdout
    ids = [game["game_id"] for game in read_games(lake, ["game_id"])]
    assert len(ids) == 40 and all(len(i) == 16 for i in ids)
    check_lake(lake)


def test_allow_duplicates_writes_them_and_check_says_so(tmp_path: Path) -> None:
    a = write_zst(tmp_path / "a.pgn.zst", make_games(0, 100))
    b = write_zst(tmp_path / "b.pgn.zst", make_games(50, 100))
    lake = tmp_path / "lake"
    assert load([a, b], lake, "--allow-duplicates").returncode == 0
    assert lake_counts(lake) == (200, 150)
    run = run_module("warehouse.maintenance.check", ["--lake", str(lake)])
    assert run.returncode == 1
    assert "50 game_id values appear more than once" in run.stdout
