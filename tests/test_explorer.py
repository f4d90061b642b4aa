"""The explorer at any position against python-chess: Python's `explore`, the `loaders.explore` command and
`sql/explorer.sql` through the duckdb CLI, each row (move UCI and SAN, games, results, mean Elo, eval, think
time, first date) equal to the count `pychess_counts.explorer_rows` makes from a python-chess replay of
the same PGN files (positions by `chess.polyglot.zobrist_hash`; a game counts once, by the first ply it
stands at the position).

The games: the bundled lichess sample three times over under other ids and months (so that each position
of its games is reached by three games at least, as in a month of lichess), and when the corpora are
there the TWIC sample (real OTB games, whose openings transpose) and the chess.com files. Two lakes:
`full`, the position index built over every file; `partial`, the index built after the first file only
(the others are replayed). The probes: positions at plies 12 to 40 reached by 3 games or more, those
some games reach inside the stored plies and others past them, and the start position.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess
import chess.polyglot
import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import support
from pychess_counts import Game, Row, assert_rows_match, explorer_rows, passes_filters, replay, standard
from support import CORPORA

import warehouse
from warehouse.errors import InputError
from warehouse.explorer_page.answers import Answers
from warehouse.explorer_page.view import View
from warehouse.lake.location import Lake
from warehouse.positions import aggregate
from warehouse.positions.explorer import explore
from warehouse.positions.index import COVERS, INDEX_DIR, PositionIndex, build
from warehouse.positions.search import position_key, search
from warehouse.queries.filters import GameFilters
from warehouse.queries.sql import SQL_DIR, VIEWS_IMPORT, query

CORPUS_FILES = [CORPORA / "tournament" / "twic1599_sample.pgn", *sorted((CORPORA / "chesscom").glob("*.pgn"))]
COPIES = 3  # of the sample, each with its own ids and month
PROBES_PER_PLY = 1
UNREACHED = "4k3/8/8/8/8/8/8/4K3 w - - 0 1"  # legal; no game reaches it


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("explorer-inputs")
    games = len(support.sample_games())
    copies = []
    for n in range(COPIES):
        path = folder / f"copy{n}.pgn"
        path.write_text(support.make_games(n * games, games, month=5 + n), encoding="utf-8")
        copies.append(path)
    return copies + [path for path in CORPUS_FILES if path.exists()]


@pytest.fixture(scope="module")
def games(inputs: list[Path]) -> list[Game]:
    """Every game the views count (standard chess), as python-chess replays it."""
    return [game for path in inputs for game in standard(replay(path))]


def built(lake: Path) -> Path:
    done = support.run_module("loaders.position_index", ["--lake", lake])
    assert done.returncode == 0, done.stderr
    return lake


@pytest.fixture(scope="module")
def full(inputs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every input loaded, then the position index built: it covers the lake."""
    return built(support.loaded(inputs, tmp_path_factory.mktemp("explorer-full") / "lake"))


@pytest.fixture(scope="module")
def partial(inputs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first input loaded, the position index built, then the others loaded: it covers a part."""
    lake = built(support.loaded(inputs[:1], tmp_path_factory.mktemp("explorer-partial") / "lake"))
    return support.loaded(inputs[1:], lake)


def fen_at(game: Game, ply: int) -> str:
    """The FEN of the game's position before its move `ply`, by python-chess from its SANs."""
    board = chess.Board(game.row["start_fen"] or chess.STARTING_FEN)
    for san in game.sans[:ply]:
        board.push_san(san)
    return board.fen()


@pytest.fixture(scope="module")
def probes(games: list[Game]) -> list[str]:
    """Positions at plies 12-40 reached by 3 games or more (`PROBES_PER_PLY` per ply, the most reached
    first), those some games reach before ply 10 and others from ply 10 on, and the start position."""
    plies: defaultdict[int, set[int]] = defaultdict(set)  # key → the first plies games stand there
    reached: defaultdict[int, int] = defaultdict(int)
    for game in games:
        first: dict[int, int] = {}
        for ply, key in enumerate(game.keys):
            first.setdefault(key, ply)
        for key, ply in first.items():
            plies[key].add(ply)
            reached[key] += 1
    chosen = []
    for ply in range(12, 41):
        at = [k for k, p in plies.items() if min(p) == ply and reached[k] >= 3]
        chosen += sorted(at, key=lambda k: -reached[k])[:PROBES_PER_PLY]
    across = [k for k, p in plies.items() if min(p) < 10 <= max(p)]
    chosen += sorted(across, key=lambda k: -reached[k])[:5]
    assert len(chosen) >= 20, "too few positions to probe"
    where = {}  # key → a game and the ply it stands there
    for game in games:
        for ply, key in enumerate(game.keys):
            where.setdefault(key, (game, ply))
    return [chess.STARTING_FEN] + [fen_at(*where[key]) for key in chosen]


def oracle(games: list[Game], fen: str, **keep: Any) -> list[Row]:
    return explorer_rows(games, chess.polyglot.zobrist_hash(chess.Board(fen)), keep=kept(**keep))


def kept(**keep: Any) -> Callable[[Game], bool]:
    """Whether a game passes the explorer's filters (sql/explorer.sql's definitions)."""
    return lambda game: passes_filters(game.row, **keep)


def test_python_explore_equals_python_chess(
    full: Path, partial: Path, games: list[Game], probes: list[str]
) -> None:
    """With the index covering the lake, without it (stored keys and the replay scan), and with an index
    covering a part (the index and the replay scan)."""
    cons = {lake: warehouse.connect(lake) for lake in (full, partial)}
    for fen in probes:
        want = oracle(games, fen)
        for lake, index in ((full, True), (full, False), (partial, True)):
            got = explore(fen, lake, con=cons[lake], index=index).rows(named=True)
            assert_rows_match(got, want, f"{fen} in {lake.parent.name}, index={index}")


def test_python_explore_filters(full: Path, games: list[Game], probes: list[str]) -> None:
    """Filters on the games' speed and mean Elo, and on their date (the sample's second and third copies
    are of June and July), at the first probes where some games pass them."""
    con = warehouse.connect(full)
    for filters in ({"type": "blitz", "min_rating": 1500}, {"since": dt.date(2025, 6, 1)}):
        for fen in kept_at(games, probes, filters)[:3]:
            for index in (True, False):
                got = explore(fen, full, con=con, index=index, **filters).rows(named=True)
                assert_rows_match(got, oracle(games, fen, **filters), f"{fen}, {filters}, index={index}")


def kept_at(games: list[Game], probes: list[str], filters: dict[str, Any]) -> list[str]:
    """The deep probes where some games pass `filters`."""
    fens = [fen for fen in probes[1:] if oracle(games, fen, **filters)]
    assert fens, filters
    return fens


def run_duckdb(lake: Path, statements: str) -> support.Run:
    """`duckdb -json` from the project's root with CHESS_LAKE=lake, reading `statements`."""
    return support.run_command(
        ["duckdb", "-json"],
        stdin=statements.encode(),
        env={"PATH": str(Path(shutil.which("duckdb") or "duckdb").parent), "CHESS_LAKE": str(lake)},
        timeout=600,
    )


def explorer_statements(fen: str, before: str = "") -> str:
    """sql/explorer.sql at `fen`, after the views import (run once before)."""
    text = (SQL_DIR / "explorer.sql").read_text(encoding="utf-8").replace(VIEWS_IMPORT, "")
    return f"set variable explorer_fen = {sql_string(fen)};\n{before}{text}\n"


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def json_results(text: str) -> list[list[Row]]:
    """The results the duckdb CLI printed in JSON, one array each, in order."""
    decoder, results, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        result, at = decoder.raw_decode(text, at)
        results.append(result)
    return results


def test_duckdb_cli_explorer_equals_python_chess_with_the_index(
    full: Path, games: list[Game], probes: list[str]
) -> None:
    statements = VIEWS_IMPORT + "\n" + "".join(explorer_statements(fen) for fen in probes)
    filtered = "set variable explorer_speed = 'blitz'; set variable explorer_min_rating = 1500;\n"
    blitz = kept_at(games, probes, {"type": "blitz", "min_rating": 1500})[0]
    statements += explorer_statements(blitz, filtered)
    done = run_duckdb(full, statements)
    assert done.returncode == 0 and not done.stderr, done.stderr
    results = json_results(done.stdout)
    assert len(results) == len(probes) + 1
    for fen, got in zip(probes, results, strict=False):
        assert_rows_match(got, oracle(games, fen), fen)
    assert_rows_match(
        results[-1], oracle(games, blitz, type="blitz", min_rating=1500), f"{blitz}, blitz 1500+"
    )


def test_duckdb_cli_games_at_a_deep_position(full: Path, games: list[Game], probes: list[str]) -> None:
    for fen in probes[1:4]:
        done = run_duckdb(full, f"{VIEWS_IMPORT}\nselect count(*) as n from games_at({sql_string(fen)});\n")
        assert done.returncode == 0 and not done.stderr, done.stderr
        key = chess.polyglot.zobrist_hash(chess.Board(fen))
        want = sum(1 for game in games if key in game.keys or key == game.final_key)
        assert json_results(done.stdout) == [[{"n": want}]] and want >= 3, fen


def test_sql_says_why_it_cannot_answer(full: Path, partial: Path, probes: list[str], tmp_path: Path) -> None:
    """A deep position without an index covering the lake: one line naming the index's build and Python's
    explorer. An index that covers a part; none; one built before covers.parquet (removed here)."""
    deep = probes[1]
    no_index = support.loaded([support.SAMPLE], tmp_path / "lake")
    old = tmp_path / "old"
    shutil.copytree(full, old)
    for covers in old.glob(f"{INDEX_DIR}/*/{COVERS}"):
        covers.unlink()
    for lake, why in (
        (partial, "the position index does not cover"),
        (no_index, "the lake has no position index"),
        (old, "built by an earlier version"),
    ):
        for statements in (
            VIEWS_IMPORT + "\n" + explorer_statements(deep),
            f"{VIEWS_IMPORT}\nselect count(*) from games_at({sql_string(deep)});\n",
        ):
            done = run_duckdb(lake, statements)
            assert done.returncode == 1, done.stderr
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr
            for needle in (why, "python -m loaders.position_index", "python -m loaders.explore"):
                assert needle in done.stderr, (needle, done.stderr)
        # The stored keys still answer the positions of the first plies.
        done = run_duckdb(lake, VIEWS_IMPORT + "\n" + explorer_statements(chess.STARTING_FEN))
        assert done.returncode == 0 and json_results(done.stdout)[0], done.stderr


def test_explore_command(full: Path, games: list[Game], probes: list[str]) -> None:
    fen = probes[3]
    assert_explored(support.run_module("loaders.explore", ["--lake", full, fen]), oracle(games, fen))


def test_explore_command_after_a_line(full: Path, games: list[Game]) -> None:
    """`--line`: moves in SAN from the start (numbered, as PGN writes them), or from a FEN (bare), against
    python-chess's position after the same game's moves."""
    game = next(g for g in games if g.row["start_fen"] is None and len(g.sans) >= 24)
    numbered = " ".join(f"{i // 2 + 1}. {san}" if i % 2 == 0 else san for i, san in enumerate(game.sans[:24]))
    done = support.run_module("loaders.explore", ["--lake", full, "--line", numbered])
    assert_explored(done, oracle(games, fen_at(game, 24)))
    bare = " ".join(game.sans[10:24])
    done = support.run_module("loaders.explore", ["--lake", full, fen_at(game, 10), "--line", bare])
    assert_explored(done, oracle(games, fen_at(game, 24)))
    for line in (f"{numbered} e4", f"{game.sans[1]} {game.sans[0]}"):
        bad = support.run_module("loaders.explore", ["--lake", full, "--line", line])
        support.one_line_error(bad, "is not a move sequence from this position")


def assert_explored(done: subprocess.CompletedProcess[str], rows: list[Row]) -> None:
    """The explore command's table and count line are the oracle's `rows`."""
    assert done.returncode == 0, done.stderr
    assert rows, "a position no game plays from proves nothing"
    cells = [
        [c.strip() for c in line.strip("│ ").split("┆")] for line in done.stdout.splitlines() if "┆" in line
    ]
    printed = [row[:6] for row in cells[3:]]  # after the names, dashes and types
    columns = ("uci", "san", "games", "white_wins", "draws", "black_wins")
    assert printed == [[str(row[c]) for c in columns] for row in rows]
    assert done.stdout.splitlines()[-1] == f"{len(rows):,} moves, {sum(r['games'] for r in rows):,} games"


def test_explore_command_bad_input(full: Path, probes: list[str]) -> None:
    for args, needle in (
        (["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1"], "invalid FEN"),
        (["rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"], "invalid FEN"),
        (["8/8/8/8/8/8/8/8 w - - 0 1"], "invalid FEN"),
        ([UNREACHED], "no game plays a move from this position"),
        ([probes[1], "--type", "correspondence"], "no game the filters keep plays a move"),
        ([probes[1], "--shallow"], "no game reaches this position in its first 10 plies"),
    ):
        support.one_line_error(support.run_module("loaders.explore", ["--lake", full, *args]), needle)


def test_python_explore_no_game_and_shallow(full: Path, probes: list[str]) -> None:
    con = warehouse.connect(full)
    assert explore(UNREACHED, full, con=con).is_empty()
    with pytest.raises(InputError, match="first 10 plies"):
        explore(probes[1], full, con=con, deep=False)
    with pytest.raises(InputError, match="invalid FEN"):
        explore("not a fen", full, con=con)


# Positions where a rival piece is pinned, or several pieces reach one square (python-chess decides the SAN).
SAN_POSITIONS = (
    "4k3/8/8/8/1b6/8/3N4/4K1N1 w - - 0 1",  # the knight of d2 is pinned: Nf3 is g1's
    "4k3/4r3/8/8/8/8/4R3/R3K3 w - - 0 1",  # the rook of e2 is pinned on the e-file
    "k7/8/8/8/8/Q7/8/Q1Q4K w - - 0 1",  # three queens reach b2: Qa1b2
    "1k6/8/8/3q4/8/1B3B2/8/1K1R3R w - - 0 1",  # bishops and rooks side by side
    "r3k2r/pPp2ppp/8/3pP3/8/8/P4PPP/R3K2R w KQkq d6 0 1",  # castling, en passant, promotions
)


SAN_GAMES = 100


def san_cases(games: list[Game]) -> list[tuple[str, str, dict[str, Any]]]:
    """(FEN, python-chess's SAN, the move's plies fields) of every legal move of `SAN_POSITIONS`, and of
    the positions of the first `SAN_GAMES` games, those a SAN disambiguates and one in 40 of the others."""
    boards = [chess.Board(fen) for fen in SAN_POSITIONS]
    for game in games[:SAN_GAMES]:
        board = chess.Board()
        for san in game.sans:
            boards.append(board.copy(stack=False))
            board.push_san(san)
    cases, seen = [], 0
    for number, board in enumerate(boards):
        for move in board.legal_moves:
            san, seen = board.san(move), seen + 1
            bare = san.rstrip("+#").replace("x", "")
            if number < len(SAN_POSITIONS) or (san[0] in "NBRQ" and len(bare) > 3) or seen % 40 == 0:
                cases.append((board.fen(), san, move_fields(board, move)))
    return cases


def move_fields(board: chess.Board, move: chess.Move) -> dict[str, Any]:
    """The move's fields as the lake's plies hold them (docs/schema.md)."""
    piece = board.piece_at(move.from_square)
    assert piece is not None
    taken = board.piece_at(move.to_square)
    if board.is_en_passant(move):
        taken = chess.Piece(chess.PAWN, not board.turn)
    castle = None
    if board.is_castling(move):
        castle = "K" if board.is_kingside_castling(move) else "Q"
        castle = castle if board.turn == chess.WHITE else castle.lower()
    after = board.copy(stack=False)
    after.push(move)
    promote = chess.Piece(move.promotion, board.turn).symbol() if move.promotion else None
    return {
        "p": piece.symbol(),
        "f": chess.square_name(move.from_square),
        "t": chess.square_name(move.to_square),
        "x": taken.symbol() if taken and castle is None else None,
        "castle": castle,
        "promote": promote,
        "c": 1 if after.is_check() and not after.is_checkmate() else None,
        "mates": after.is_checkmate(),
    }


def test_sql_san_equals_python_chess(full: Path, games: list[Game]) -> None:
    cases = san_cases(games)
    assert len(cases) > 1000
    con = warehouse.connect(full)
    table = pa.Table.from_pylist([{"fen": fen, **fields} for fen, _, fields in cases])
    con.register("cases", table)
    got = con.sql(
        "select move_san(fen_board(fen), p, f, t, x, castle, promote, c, mates) as san from cases"
    ).fetchall()
    assert [(fen, san) for (san,), (fen, _, _) in zip(got, cases, strict=True)] == [
        (fen, san) for fen, san, _ in cases
    ]


def test_a_connection_kept_open_reads_the_rebuilt_index(
    partial: Path, games: list[Game], probes: list[str], tmp_path: Path
) -> None:
    """The index covering a part, then rebuilt over every file (its first files retired) while a
    connection stays open: that connection's SQL and Python explorers read the new index."""
    lake = tmp_path / "lake"
    shutil.copytree(partial, lake)
    con = warehouse.connect(lake)
    deep = probes[1]
    con.execute("set variable explorer_fen = $fen", {"fen": deep})
    with pytest.raises(duckdb.InvalidInputException, match="does not cover"):
        query("explorer", con=con)
    built(lake)
    assert_rows_match(query("explorer", con=con).rows(named=True), oracle(games, deep), "SQL")
    assert_rows_match(explore(deep, lake, con=con).rows(named=True), oracle(games, deep), "Python")


# Filters whose bounds are the pre-aggregate's cells (a speed, whole hundreds of rating, whole months), and
# filters whose bounds are not (answered by the games' moves).
ALIGNED: list[dict[str, Any]] = [
    {},
    {"type": "blitz", "min_rating": 1500},
    {"max_rating": 1700},
    {"min_rating": 1600, "max_rating": 1600},
    {"since": dt.date(2025, 6, 1), "until": dt.date(2025, 6, 30)},
]
UNALIGNED: list[dict[str, Any]] = [
    {"min_rating": 1550},
    {"max_rating": 1699},
    {"since": dt.date(2025, 6, 2)},
    {"until": dt.date(2025, 6, 29)},
]


def aggregated_index(lake: Path, frequent_games: int) -> Path:
    """`lake` with the position index built, its pre-aggregate holding the positions `frequent_games`
    games reach (the build's default is far above this small lake's counts)."""
    build(Lake.open(lake), frequent_games=frequent_games)
    return lake


@pytest.fixture(scope="module")
def aggregated(inputs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every input loaded, the index built with a pre-aggregate of every position."""
    lake = support.loaded(inputs, tmp_path_factory.mktemp("explorer-aggregated") / "lake")
    return aggregated_index(lake, 1)


def pre_aggregate_at(lake: Path, con: duckdb.DuckDBPyConnection, fen: str, **filters: Any) -> bool:
    """Whether the explorer answers `fen` under `filters` from the index's pre-aggregate."""
    opened = Lake.open(lake)
    cells = aggregate.at(PositionIndex.open(opened), con, position_key(fen), GameFilters(**filters))
    return cells is not None


def test_pre_aggregate_equals_python_chess_and_the_row_path(
    aggregated: Path, games: list[Game], probes: list[str]
) -> None:
    """At every probe and under filters of the aggregate's cells: the
    answer comes from the pre-aggregate, equals python-chess's count and the games' moves (the row path)
    exactly, column for column."""
    con = warehouse.connect(aggregated)
    answered = 0
    for filters in ALIGNED:
        for fen in probes:
            want = oracle(games, fen, **filters)
            if not want:
                continue
            assert pre_aggregate_at(aggregated, con, fen, **filters), (fen, filters)
            got = explore(fen, aggregated, con=con, **filters)
            rows = explore(fen, aggregated, con=con, pre_aggregate=False, **filters)
            assert_rows_match(got.rows(named=True), want, f"{fen}, {filters}")
            assert got.equals(rows), (fen, filters, got, rows)
            answered += 1
    assert answered > 2 * len(probes)


def test_pre_aggregate_not_used_where_filters_cross_its_cells(
    aggregated: Path, games: list[Game], probes: list[str]
) -> None:
    """A rating bound not of whole hundreds, dates not of whole months, a player: the games' moves answer,
    and the answer is python-chess's."""
    con = warehouse.connect(aggregated)
    for filters in UNALIGNED:
        fen = kept_at(games, probes, filters)[0]
        assert not pre_aggregate_at(aggregated, con, fen, **filters), filters
        got = explore(fen, aggregated, con=con, **filters).rows(named=True)
        assert_rows_match(got, oracle(games, fen, **filters), f"{fen}, {filters}")
    assert not pre_aggregate_at(aggregated, con, chess.STARTING_FEN, player="a player")


def test_stale_pre_aggregate_not_used(
    inputs: list[Path], games: list[Game], probes: list[str], tmp_path: Path
) -> None:
    """An index (and pre-aggregate of every position) built over the first input, then the others loaded:
    the pre-aggregate is not read, and the explorer counts every game; the next build reads it again."""
    lake = aggregated_index(support.loaded(inputs[:1], tmp_path / "lake"), 1)
    support.loaded(inputs[1:], lake)
    con = warehouse.connect(lake)
    for fen in probes[:5]:
        assert not pre_aggregate_at(lake, con, fen)
        assert_rows_match(explore(fen, lake, con=con).rows(named=True), oracle(games, fen), fen)
    aggregated_index(lake, 1)
    assert pre_aggregate_at(lake, con, probes[0])
    assert_rows_match(explore(probes[0], lake, con=con).rows(named=True), oracle(games, probes[0]))


def test_page_from_the_pre_aggregate_equals_the_row_path(aggregated: Path, probes: list[str]) -> None:
    """The explorer page's answer (moves, its top games, how many games) from the pre-aggregate equals the
    row path's: `explore` over the games' moves, and every game `search` finds sorted by the page's order."""
    answers = Answers(str(aggregated))
    con = warehouse.connect(aggregated)
    mean = (pl.col("white_elo") + pl.col("black_elo")) / 2
    for filters in ALIGNED:
        for fen in probes[:8]:
            view = View(fen=fen, kept=GameFilters(**filters))
            moves, top, total, how = answers.answer(view)
            assert how == "index"
            assert moves.equals(explore(fen, aggregated, con=con, pre_aggregate=False, **filters))
            every = search(fen, aggregated, con=con, kept=GameFilters(**filters))
            best = every.sort([mean, "datetime", "game_key"], descending=[True, True, False], nulls_last=True)
            assert total == len(every), (fen, filters)
            assert top.equals(best.head(aggregate.TOP_GAMES).select(aggregate.TOP_COLUMNS)), (
                fen,
                filters,
                top,
            )


def filter_statements(filters: dict[str, Any]) -> str:
    """The `set variable` statements of sql/explorer.sql's filters (GameFilters' names), each set (null
    when absent: the CLI keeps a variable across the statements of a run)."""
    names = {"type": "speed", "min_rating": "min_rating", "max_rating": "max_rating", "since": "since"}
    names |= {"until": "until", "player": "player"}
    values = {variable: filters.get(name) for name, variable in names.items()}
    return "".join(
        f"set variable explorer_{variable} = "
        f"{'null' if value is None else value if isinstance(value, int) else sql_string(str(value))};\n"
        for variable, value in values.items()
    )


def cli_explorer(lake: Path, asked: list[tuple[str, dict[str, Any]]]) -> list[list[Row]]:
    """sql/explorer.sql's answers through the duckdb CLI at each (FEN, filters) of `asked`, in one run."""
    statements = VIEWS_IMPORT + "\n"
    statements += "".join(explorer_statements(fen, filter_statements(f)) for fen, f in asked)
    done = run_duckdb(lake, statements)
    assert done.returncode == 0 and not done.stderr, done.stderr
    results = json_results(done.stdout)
    # The CLI prints nothing for an empty result.
    assert len(results) == len(asked), (len(results), len(asked))
    return results


def test_duckdb_cli_explorer_from_the_pre_aggregate_equals_python_chess(
    aggregated: Path, games: list[Game], probes: list[str]
) -> None:
    """The CLI's explorer on a lake whose index holds a pre-aggregate of every position, under filters
    of its cells and across them: python-chess's count, and the rows of Python's row path exactly."""
    con = warehouse.connect(aggregated)
    asked = [(fen, f) for f in ALIGNED + UNALIGNED for fen in probes if oracle(games, fen, **f)]
    assert len(asked) > 2 * len(probes)
    for (fen, filters), got in zip(asked, cli_explorer(aggregated, asked), strict=True):
        assert_rows_match(got, oracle(games, fen, **filters), f"{fen}, {filters}")
        rows = explore(fen, aggregated, con=con, pre_aggregate=False, **filters).rows(named=True)
        assert got == rows, (fen, filters)


def test_duckdb_cli_and_python_choose_the_pre_aggregate_alike(
    aggregated: Path, games: list[Game], probes: list[str], tmp_path: Path
) -> None:
    """One rule for both: on a copy whose pre-aggregate counts every game twice (so an answer tells where it
    came from), the CLI and Python's `explore` give the same answer under every filter, the doubled one
    exactly where `aggregate.at` answers (filters of its cells, an index covering the lake)."""
    lake = Path(shutil.copytree(aggregated, tmp_path / "lake"))
    (moves_rel, _top_rel) = PositionIndex.open(Lake.open(lake)).record.explorer_files  # type: ignore[union-attr]
    table = pq.read_table(lake / moves_rel)
    for name in ("games", "white_wins", "draws", "black_wins"):
        table = table.set_column(table.schema.get_field_index(name), name, pc.multiply(table[name], 2))
    pq.write_table(table, lake / moves_rel, row_group_size=aggregate.ROW_GROUP)
    con = warehouse.connect(lake)
    asked = [(fen, f) for f in ALIGNED + UNALIGNED for fen in probes[:3] if oracle(games, fen, **f)]
    assert len(asked) > len(ALIGNED + UNALIGNED)
    for (fen, filters), got in zip(asked, cli_explorer(lake, asked), strict=True):
        python = explore(fen, lake, con=con, **filters).rows(named=True)
        assert got == python, (fen, filters)
        want = oracle(games, fen, **filters)
        doubled = pre_aggregate_at(lake, con, fen, **filters)
        assert doubled == (filters in ALIGNED), (fen, filters)
        assert [r["games"] for r in got] == [r["games"] * (2 if doubled else 1) for r in want], (fen, filters)
