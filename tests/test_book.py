"""Opening books (`python -m loaders.book`) against python-chess: the counts of a replay of the same games,
the PolyGlot `.bin` read back by `chess.polyglot`, and two half books merged equal to the whole one.

The sample's games are loaded as two lakes, its first and second half; python-chess replays each game's
first `BOOK_PLIES` plies (9: the moves between the 10 positions whose keys the lake stores) from the PGN
text.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import chess.polyglot
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
import support
from s3_server import S3Server

import warehouse
from warehouse.lake.location import Lake
from warehouse.positions.book import BOOK_PLIES, build

SIGNED = 1 << 64
Book = dict[tuple[int, str], dict[str, Any]]


@pytest.fixture(scope="module")
def halves(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, list[str]]]:
    """Two lakes, of the sample's first and second half, with their games' text."""
    games = support.sample_games()
    out = []
    for i, part in enumerate((games[: len(games) // 2], games[len(games) // 2 :])):
        root = tmp_path_factory.mktemp(f"half{i}")
        pgn = support.write_zst(root / "half.pgn.zst", "".join(part))
        out.append((support.loaded([pgn], root / "lake"), part))
    return out


def blitz(headers: chess.pgn.Headers) -> bool:
    """lichess's speed rule (docs/schema.md `type`): base + 40 x increment seconds in [180, 480)."""
    base, _, inc = headers.get("TimeControl", "-").partition("+")
    return base.isdigit() and 180 <= int(base) + 40 * int(inc or 0) < 480


def expected_book(texts: list[str], only: Callable[[chess.pgn.Headers], bool] | None = None) -> Book:
    """(key, uci) → the counts python-chess's replay gives (of the games `only` keeps)."""
    rows: Book = defaultdict(
        lambda: {"white_wins": 0, "draws": 0, "black_wins": 0, "games": 0, "ratings": [], "sans": set()}
    )
    for text in texts:
        game = chess.pgn.read_game(io.StringIO(text))
        assert game is not None
        if only is not None and not only(game.headers):
            continue
        result = {"1-0": "white_wins", "1/2-1/2": "draws", "0-1": "black_wins"}.get(game.headers["Result"])
        elos = [game.headers.get(f"{side}Elo", "?") for side in ("White", "Black")]
        board = game.board()
        for ply, move in enumerate(game.mainline_moves()):
            if ply >= BOOK_PLIES:
                break
            key = chess.polyglot.zobrist_hash(board)
            row = rows[signed(key), move.uci()]
            row["games"] += 1
            if result:
                row[result] += 1
            if all(e.isdigit() for e in elos):
                row["ratings"].append((int(elos[0]) + int(elos[1])) / 2)
            row["sans"].add((board.fen(), board.san(move)))
            board.push(move)
    return rows


def signed(key: int) -> int:
    return key - SIGNED if key >= 1 << 63 else key


def book(lake: Path, out: Path, *options: str) -> Path:
    run = support.run_module("loaders.book", ["--lake", lake, out, *options])
    assert run.returncode == 0, run.stderr
    return out


def test_book_counts_equal_python_chess(halves: list[tuple[Path, list[str]]], tmp_path: Path) -> None:
    lake, texts = halves[0]
    for options, only in (((), None), (("--type", "blitz"), blitz)):
        got = pq.read_table(book(lake, tmp_path / f"book{len(options)}.parquet", *options)).to_pylist()
        assert_rows_equal(got, expected_book(texts, only))
    popular = book(lake, tmp_path / "popular.parquet", "--min-games", "5")
    assert {(r["key"], r["uci"]) for r in pq.read_table(popular).to_pylist()} == {
        k for k, w in expected_book(texts).items() if w["games"] >= 5
    }


def assert_rows_equal(got: list[dict[str, Any]], want: Book) -> None:
    """The book's rows `got` are python-chess's `want`: the same (key, move)s, counts and mean ratings, and
    a FEN and SAN of a game that played each."""
    assert {(r["key"], r["uci"]) for r in got} == set(want)
    for row in got:
        w = want[row["key"], row["uci"]]
        counts = {name: row[name] for name in ("white_wins", "draws", "black_wins", "games")}
        assert counts == {name: w[name] for name in counts}, row
        assert row["rated"] == len(w["ratings"])
        mean = sum(w["ratings"]) / len(w["ratings"]) if w["ratings"] else None
        assert row["mean_rating"] == pytest.approx(mean)
        assert (row["fen"], row["san"]) in w["sans"]


def rated_within(headers: chess.pgn.Headers, low: int, high: int) -> bool:
    """Whether both Elos are known and their mean is in [low, high] (the book's rating band)."""
    elos = [headers.get(f"{side}Elo", "?") for side in ("White", "Black")]
    return all(e.isdigit() for e in elos) and low <= (int(elos[0]) + int(elos[1])) / 2 <= high


def test_book_filters_equal_python_chess(halves: list[tuple[Path, list[str]]], tmp_path: Path) -> None:
    """The rating band, date range and player filters keep the games python-chess's tags say they keep.
    The sample's games were all played on one day: a range around it keeps them all, one before none."""
    lake, texts = halves[0]
    headers = [chess.pgn.read_headers(io.StringIO(text)) for text in texts]
    player = Counter(h["White"] for h in headers).most_common(1)[0][0]
    day = min(h["UTCDate"] for h in headers).replace(".", "-")
    before = (dt.date.fromisoformat(day) - dt.timedelta(days=1)).isoformat()
    everything = expected_book(texts)
    cases: list[tuple[tuple[str, ...], Callable[[chess.pgn.Headers], bool]]] = [
        (("--min-rating", "1500", "--max-rating", "2000"), lambda h: rated_within(h, 1500, 2000)),
        (("--player", player), lambda h: player in (h["White"], h["Black"])),
        (("--since", day, "--until", day), lambda h: h["UTCDate"].replace(".", "-") == day),
        (("--since", before, "--until", before), lambda h: False),
    ]
    kept = []
    for i, (options, only) in enumerate(cases):
        want = expected_book(texts, only)
        got = pq.read_table(book(lake, tmp_path / f"filtered{i}.parquet", *options)).to_pylist()
        assert_rows_equal(got, want)
        kept.append(len(want))
    assert 0 < kept[0] < len(everything) and 0 < kept[1] < len(everything)  # the band and player select
    assert kept[2:] == [len(everything), 0]


@pytest.mark.parametrize("cut", ["first", "last"])
def test_plies_that_do_not_fit_their_games_fail_in_one_line(
    halves: list[tuple[Path, list[str]]], tmp_path: Path, cut: str
) -> None:
    """A plies file missing a row (a damaged lake) fails the build in one line naming its games file, rather
    than count moves under other games: without its first row, each ply's row number names another game's
    ply (a game's first key must be its start position's); without its last, the file holds fewer plies
    than its games. The file cut is the first one read, so that an error found only when the next file
    starts would name the wrong file."""
    lake = Path(shutil.copytree(halves[0][0], tmp_path / "lake"))
    files = sorted((lake / "plies").rglob("*.parquet"))
    assert len(files) > 1
    table = pq.read_table(files[0])
    pq.write_table(table.slice(1) if cut == "first" else table.slice(0, table.num_rows - 1), files[0])
    run = support.run_module("loaders.book", ["--lake", lake, tmp_path / "book.parquet"])
    games_file = "games" + str(files[0].relative_to(lake))[len("plies") :]
    support.one_line_error(run, games_file, "do not fit their games")
    assert not (tmp_path / "book.parquet").exists()


def test_book_over_s3_equals_the_local_one(halves: list[tuple[Path, list[str]]], s3_server: S3Server) -> None:
    """The book of a lake on S3 (a real S3-compatible server: the games files listed and read through the
    lake's pyarrow filesystem) is the book of the same lake on disk."""
    lake, _ = halves[0]
    url = s3_server.bucket("book-bucket") + "/lake"
    remote = Lake.open(url)
    pafs.copy_files(str(lake), remote.root, destination_filesystem=remote.fs)
    local = build(warehouse.connect(lake))
    assert local.num_rows and build(warehouse.connect(url)).equals(local)


SET_UP_GAMES = [
    # Set up in the Ruy Lopez, transposing into the line of a game from the start: its keys are the same.
    '[Event "A"]\n[White "w1"]\n[Black "b1"]\n[Result "1-0"]\n[WhiteElo "1800"]\n[BlackElo "1700"]\n'
    '[SetUp "1"]\n[FEN "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"]\n\n'
    "3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 1-0\n\n",
    '[Event "B"]\n[White "w2"]\n[Black "b2"]\n[Result "1/2-1/2"]\n\n'
    "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1/2-1/2\n\n",
    '[Event "C"]\n[White "w3"]\n[Black "b3"]\n[Result "1-0"]\n[SetUp "1"]\n'
    '[FEN "8/P6k/8/8/8/8/6K1/8 w - - 0 1"]\n\n'
    "1. a8=Q Kg6 2. Qa6+ Kg5 3. Qe6 Kh5 4. Qf6 Kg4 5. Qg6+ 1-0\n\n",
    '[Event "D"]\n[White "w4"]\n[Black "b4"]\n[Result "0-1"]\n[Variant "Chess960"]\n[SetUp "1"]\n'
    '[FEN "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"]\n\n'
    "9. g3 d5 0-1\n\n",
]


def test_book_of_set_up_and_short_games_equals_python_chess(tmp_path: Path) -> None:
    """Games set up from a FEN (a promotion among their moves, one transposing into another game's line),
    a game shorter than the book's depth (its last move reaches its final key) and a Chess960 game, which
    the book of standard chess leaves out."""
    lake = support.loaded(
        [support.write_zst(tmp_path / "set_up.pgn.zst", "".join(SET_UP_GAMES))], tmp_path / "lake"
    )
    ((variants,),) = (
        warehouse.connect(lake, "all").sql("select list(variant order by variant) from games").fetchall()
    )
    assert variants == ["Chess960", "Standard", "Standard", "Standard"]
    got = build(warehouse.connect(lake)).to_pylist()
    want = expected_book(SET_UP_GAMES, lambda h: h.get("Variant") != "Chess960")
    assert_rows_equal(got, want)
    assert {r["san"] for r in got} >= {"a8=Q", "O-O", "Bb5", "a6"}


def test_book_of_a_lake_named_like_a_pattern(halves: list[tuple[Path, list[str]]], tmp_path: Path) -> None:
    """A lake whose name holds `[`, `]`, `?` and `*` (DuckDB's pattern characters) gets the same book: the
    views escape the lake's name, and the files are read by their names."""
    lake, _ = halves[0]
    odd = Path(shutil.copytree(lake, tmp_path / "lake[1]?*"))
    assert build(warehouse.connect(odd)).equals(build(warehouse.connect(lake)))


def test_polyglot_bin_read_by_python_chess(halves: list[tuple[Path, list[str]]], tmp_path: Path) -> None:
    lake, texts = halves[0]
    want = expected_book(texts)
    path = book(lake, tmp_path / "book.bin")
    board = chess.Board()
    for san in ("e4", "e5", "Nf3"):
        with chess.polyglot.open_reader(path) as reader:
            entries = {e.move.uci(): e.weight for e in reader.find_all(board)}
        key = signed(chess.polyglot.zobrist_hash(board))
        white = board.turn == chess.WHITE
        expected = {}
        for (k, uci), w in want.items():
            weight = 2 * (w["white_wins"] if white else w["black_wins"]) + w["draws"]
            if k == key and weight:
                expected[uci] = min(weight, 0xFFFF)
        assert entries == expected and entries, san
        board.push_san(san)


def test_merged_halves_equal_the_whole(halves: list[tuple[Path, list[str]]], tmp_path: Path) -> None:
    parts = [book(lake, tmp_path / f"half{i}.parquet") for i, (lake, _) in enumerate(halves)]
    whole = support.loaded([support.SAMPLE], tmp_path / "whole")
    merged = tmp_path / "merged.parquet"
    run = support.run_module("loaders.book", [merged, "--merge", *parts])
    assert run.returncode == 0, run.stderr
    full = pq.read_table(book(whole, tmp_path / "whole.parquet")).to_pylist()
    got = pq.read_table(merged).to_pylist()
    assert [(r["key"], r["uci"]) for r in got] == [(r["key"], r["uci"]) for r in full]
    for a, b in zip(got, full, strict=True):
        for name in ("white_wins", "draws", "black_wins", "games", "rated", "first_date", "last_date"):
            assert a[name] == b[name], (name, a, b)
        assert a["mean_rating"] == pytest.approx(b["mean_rating"])


def test_opening_graph(halves: list[tuple[Path, list[str]]], tmp_path: Path) -> None:
    """Every edge of the graph is a move of python-chess's book played in at least the minimum share of all
    games, labelled with its share of the games at its position; every node links to its board's SVG."""
    lake, texts = halves[0]
    want = expected_book(texts)
    run = support.run_module(
        "loaders.opening_graph", ["--lake", lake, tmp_path / "tree.dot", "--min-share", "0.05"]
    )
    assert run.returncode == 0, run.stderr
    dot = (tmp_path / "tree.dot").read_text()
    start = signed(chess.polyglot.zobrist_hash(chess.Board()))
    at: defaultdict[int, int] = defaultdict(int)
    for (k, _), w in want.items():
        at[k] += w["games"]
    expected, frontier, seen = set(), [start], {start}
    while frontier:  # the moves of at least 5% of all games, from the start on
        k = frontier.pop()
        for (key, uci), w in want.items():
            if key != k or w["games"] / at[start] < 0.05:
                continue
            fen, san = next(iter(w["sans"]))
            board = chess.Board(fen)
            board.push_uci(uci)
            child = signed(chess.polyglot.zobrist_hash(board))
            expected.add((k, child, san, f"{w['games'] / at[k]:.0%}"))
            if child not in seen:
                seen.add(child)
                frontier.append(child)
    pattern = r'"(-?\d+)" -> "(-?\d+)" \[label="(\S+) (\d+%)"\]'
    edges = {(int(m[1]), int(m[2]), m[3], m[4]) for m in re.finditer(pattern, dot)}
    assert edges == expected and len(expected) > 3
    svg = (tmp_path / "tree.svg").read_text()
    nodes = re.findall(r'^  "(-?\d+)" \[label=', dot, re.M)
    for key in nodes:
        assert f"tree_boards/{key}.svg" in svg
        assert (tmp_path / "tree_boards" / f"{key}.svg").read_text().startswith("<svg")
