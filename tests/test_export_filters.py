"""Exports of the games a filter keeps (`--min-rating`, `--max-rating`, `--since`, `--until`, `--player`)
against python-chess: the games of the source PGN whose headers pass the same filter, as the SQL views
define it (the mean of both Elos, both known; the UTC date; either player's name), each once.

Games: the bundled lichess sample, and the TWIC sample (real OTB games of many dates and ratings) when
../shared/corpora is there.
"""

from __future__ import annotations

import bz2
import io
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import chess.pgn
import pytest
import support
from oracle import game_row, read_games, rejection
from pychess_counts import passes_filters
from support import CORPORA, SAMPLE

TWIC = CORPORA / "tournament" / "twic1599_sample.pgn"
Identity = tuple[str | None, str | None, tuple[str, ...]]


def identity(headers: Any, moves: list[chess.Move]) -> Identity:
    """A game as both sides of the comparison see it: its players and its mainline."""
    return headers.get("White"), headers.get("Black"), tuple(m.uci() for m in moves)


@pytest.fixture(scope="module")
def inputs() -> list[Path]:
    return [SAMPLE, *[path for path in (TWIC,) if path.exists()]]


@pytest.fixture(scope="module")
def lake(inputs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return support.loaded(inputs, tmp_path_factory.mktemp("export-filters") / "lake")


@pytest.fixture(scope="module")
def source(inputs: list[Path]) -> list[tuple[Identity, dict[str, Any]]]:
    """Every game the lake keeps, as python-chess reads it from the source: its identity and its row."""
    return [
        (identity(game.headers, list(game.mainline_moves())), game_row(game))
        for path in inputs
        for game in read_games(path)
        if rejection(game) is None
    ]


def exported_pgn(lake: Path, out: Path, options: list[str], **run: Any) -> Counter[Identity]:
    done = support.run_module("loaders.parquet2pgn", [out, "--lake", lake, *options], **run)
    assert done.returncode == 0, done.stderr
    found: Counter[Identity] = Counter()
    with out.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            found[identity(game.headers, list(game.mainline_moves()))] += 1
    return found


def choices(source: list[tuple[Identity, dict[str, Any]]]) -> list[tuple[list[str], dict[str, Any]]]:
    """Filters that keep some games and leave others, from the games' own values."""
    means = sorted(
        (row["players"][0]["elo"] + row["players"][1]["elo"]) / 2
        for _, row in source
        if row["players"][0]["elo"] is not None and row["players"][1]["elo"] is not None
    )
    names = Counter(p["name"] for _, row in source for p in row["players"] if p["name"])
    player = max(names, key=lambda name: (names[name], name))
    low, high = int(means[len(means) // 4]), int(means[3 * len(means) // 4])
    chosen = [
        (["--min-rating", str(high)], {"min_rating": high}),
        (["--min-rating", str(low), "--max-rating", str(high)], {"min_rating": low, "max_rating": high}),
        (["--player", player], {"player": player}),
    ]
    days = sorted({row["datetime"].date() for _, row in source if row["datetime"] is not None})
    if len(days) > 2:
        first, last = days[len(days) // 3], days[2 * len(days) // 3]
        chosen.append(
            (["--since", str(first), "--until", str(last), "--max-rating", str(high)],
             {"since": first, "until": last, "max_rating": high})
        )  # fmt: skip
    return chosen


def test_pgn_export_keeps_what_python_chess_keeps(
    lake: Path, source: list[tuple[Identity, dict[str, Any]]], tmp_path: Path
) -> None:
    for n, (options, values) in enumerate(choices(source)):
        want = Counter(game for game, row in source if passes_filters(row, **values))
        assert 0 < sum(want.values()) < len(source), options  # a filter that keeps all or none proves little
        assert exported_pgn(lake, tmp_path / f"{n}.pgn", options) == want, options


@pytest.mark.parametrize("zone", ["America/New_York", "Pacific/Kiritimati"])
def test_dates_are_utc_dates_in_any_time_zone(
    zone: str, lake: Path, source: list[tuple[Identity, dict[str, Any]]], tmp_path: Path
) -> None:
    """A date bound is the game's UTC date whatever the machine's zone (DuckDB compares a time with a date
    in its session's zone: the views set it to UTC). The sample's games start at midnight UTC, hours away
    from either zone's midnight."""
    first = min(row["datetime"] for _, row in source if row["datetime"] is not None).date()
    options, values = ["--since", str(first), "--until", str(first)], {"since": first, "until": first}
    want = Counter(game for game, row in source if passes_filters(row, **values))
    assert want
    env = {**os.environ, "TZ": zone}
    assert exported_pgn(lake, tmp_path / "day.pgn", options, env=env) == want


def test_json_and_study_exports_keep_the_same_games(
    lake: Path, source: list[tuple[Identity, dict[str, Any]]], tmp_path: Path
) -> None:
    """The filter is the scan's: the BGN JSON and study exports keep the games the PGN export keeps."""
    options, values = choices(source)[0]
    want = sum(1 for _, row in source if passes_filters(row, **values))
    done = support.run_module("loaders.parquet2json", [tmp_path / "bgn", "--lake", lake, *options])
    assert done.returncode == 0, done.stderr
    lines = []
    for path in (tmp_path / "bgn").rglob("*.bz2"):
        with bz2.open(path, "rt") as handle:
            lines += handle.readlines()
    study = tmp_path / "study.jsonl"
    done = support.run_module(
        "loaders.parquet2json", ["--format", "study", "--lines", study, "--lake", lake, *options]
    )
    assert done.returncode == 0, done.stderr
    documents = study.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(documents) == want
    white = {json.loads(line)["players"][0]["handle"]["value"] for line in lines}
    assert white == {game[0] for game, row in source if passes_filters(row, **values)}


def test_a_filter_that_keeps_no_game_is_one_line(lake: Path, tmp_path: Path) -> None:
    """Refused before any output is made: nothing is written."""
    out = tmp_path / "none.pgn"
    for options, needle in (
        (["--player", "nobody-plays-here"], "no game matches --player nobody-plays-here"),
        (["--min-rating", "3000", "--max-rating", "2000"], "is beyond max_rating"),
        (["--since", "2025-13-01"], "is not a date"),
    ):
        support.one_line_error(
            support.run_module("loaders.parquet2pgn", [out, "--lake", lake, *options]), needle
        )
        assert not out.exists()


def test_python_api_filters_games(lake: Path, source: list[tuple[Identity, dict[str, Any]]]) -> None:
    from warehouse.exports.lake_scan import Selection
    from warehouse.exports.pgn import pgn_games
    from warehouse.lake import Lake
    from warehouse.queries.filters import GameFilters

    options, values = choices(source)[2]  # the player's
    texts = [text for _, _, text in pgn_games(Lake.open(lake), Selection(games=GameFilters(**values)))]
    games = [chess.pgn.read_game(io.StringIO(text)) for text in texts]
    found = Counter(identity(g.headers, list(g.mainline_moves())) for g in games if g is not None)
    assert found == Counter(game for game, row in source if passes_filters(row, **values)), options


def test_the_scan_filters_each_batch_of_any_size(
    lake: Path, source: list[tuple[Identity, dict[str, Any]]]
) -> None:
    """The filter is evaluated on each batch as it is read (memory holds a batch, not a partition's kept
    games): with batches of 5 games, every filter keeps python-chess's games, each once."""
    from warehouse.exports.lake_scan import Selection, scan
    from warehouse.lake import Lake
    from warehouse.queries.filters import GameFilters

    def seen(players: list[dict[str, Any]], datetime: Any) -> tuple[Any, ...]:
        return players[0]["name"], players[1]["name"], players[0]["elo"], players[1]["elo"], datetime

    for options, values in choices(source):
        batches = list(
            scan(Lake.open(lake), ["players", "datetime"], Selection(games=GameFilters(**values)), 5)
        )
        assert len(batches) > 2, options
        found = Counter(seen(*row.values()) for _, batch in batches for row in batch.to_pylist())
        want = Counter(
            seen(row["players"], row["datetime"]) for _, row in source if passes_filters(row, **values)
        )
        assert found == want, options


def test_row_groups_that_keep_no_game_are_not_read(tmp_path: Path) -> None:
    """Two loads into the same partitions and a player of the first alone: the second's row groups keep no
    game, so only their filter columns are read, and the export is still python-chess's games, each once."""
    from warehouse.exports import lake_scan

    paths = [tmp_path / "first.pgn", tmp_path / "second.pgn"]
    paths[0].write_text(support.make_games(0, 100))
    paths[1].write_text(support.make_games(200, 100))
    lake = tmp_path / "lake"
    for path in paths:
        assert support.load([path], lake).returncode == 0
    source = [
        (identity(game.headers, list(game.mainline_moves())), game_row(game))
        for path in paths
        for game in read_games(path)
        if rejection(game) is None
    ]
    names = [
        Counter(p["name"] for _, row in source[n * 100 : n * 100 + 100] for p in row["players"])
        for n in (0, 1)
    ]
    player = max((name for name in names[0] if name not in names[1]), key=lambda name: (names[0][name], name))
    want = Counter(game for game, row in source if passes_filters(row, player=player))
    assert len(source) == 200 and sum(want.values()) >= 1
    assert exported_pgn(lake, tmp_path / "mine.pgn", ["--player", player]) == want
    kept: list[int] = []
    mask = lake_scan.GameMask.row_group

    def counted(self: lake_scan.GameMask, *args: Any) -> Any:
        kept.append((found := mask(self, *args)).true_count)
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lake_scan.GameMask, "row_group", counted)
        from warehouse.exports.pgn import pgn_games
        from warehouse.lake import Lake
        from warehouse.queries.filters import GameFilters

        texts = list(pgn_games(Lake.open(lake), lake_scan.Selection(games=GameFilters(player=player))))
    assert len(texts) == sum(want.values()) and 0 in kept and sum(kept) == len(texts), kept


def test_progress_counts_the_games_to_read(
    lake: Path, source: list[tuple[Identity, dict[str, Any]]], tmp_path: Path
) -> None:
    """An export's progress (`--progress`, and `progress=` in Python): the lake's games read of those to read,
    growing to all of the chosen partitions' games, those a filter leaves out included; the bar goes to
    stderr and leaves the output as it is without it."""
    from warehouse.exports.bgn_json import export_json
    from warehouse.exports.lake_scan import Selection
    from warehouse.exports.pgn import export_pgn
    from warehouse.exports.study import export_study
    from warehouse.lake import Lake
    from warehouse.queries.filters import GameFilters

    calls: list[tuple[int, int]] = []

    def record(read: int, to_read: int) -> None:
        calls.append((read, to_read))

    options, values = choices(source)[0]
    for n, selection in enumerate([Selection(), Selection(games=GameFilters(**values))]):
        for kind in ("pgn", "json", "study"):
            calls.clear()
            if kind == "pgn":
                export_pgn(Lake.open(lake), tmp_path / f"{n}.pgn", selection, record)
            elif kind == "json":
                export_json(Lake.open(lake), tmp_path / f"json-{n}", 100, selection, "zst", record)
            else:
                export_study(Lake.open(lake), tmp_path / f"study-{n}", False, selection, False, record)
            assert len(calls) > 1 and calls == sorted(calls), (kind, calls)
            assert calls[-1] == (len(source), len(source)), (kind, calls)
    plain, shown = tmp_path / "plain.pgn", tmp_path / "shown.pgn"
    for out, extra in ((plain, []), (shown, ["--progress", "always"])):
        done = support.run_module("loaders.parquet2pgn", [out, "--lake", lake, *options, *extra])
        assert done.returncode == 0, done.stderr
    assert f"of {len(source):,} games read" in done.stderr
    assert plain.read_bytes() == shown.read_bytes()
