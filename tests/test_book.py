"""Opening books (`python -m loaders.book`) against python-chess (`book_oracle`: a replay of the same
games): the counts of every row and position at any depth, in memory or spilled to runs, the TSV and the
PolyGlot `.bin` read back (by `chess.polyglot`), filters, two half books merged equal to the whole one,
and the opening graph.

The sample's games are loaded as two lakes, its first and second half.
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
from book_oracle import Book, Counted, StoredGame, expected_book, signed, stored_games
from s3_server import S3Server

import warehouse
from warehouse.lake.location import Lake
from warehouse.positions.book import DEFAULT_MAX_PLY, build


@pytest.fixture(scope="module")
def halves(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, list[StoredGame]]]:
    """Two lakes, of the sample's first and second half, with their games as python-chess reads them."""
    texts = support.sample_games()
    out = []
    for i, part in enumerate((texts[: len(texts) // 2], texts[len(texts) // 2 :])):
        root = tmp_path_factory.mktemp(f"half{i}")
        pgn = support.write_zst(root / "half.pgn.zst", "".join(part))
        out.append((support.loaded([pgn], root / "lake"), stored_games([pgn])))
    return out


def blitz(game: StoredGame) -> bool:
    return game.row["type"] == "blitz"


def book(lake: Path, out: Path, *options: str) -> Path:
    run = support.run_module("loaders.book", ["--lake", lake, out, *options])
    assert run.returncode == 0, run.stderr
    return out


def test_book_counts_equal_python_chess(halves: list[tuple[Path, list[StoredGame]]], tmp_path: Path) -> None:
    """At the default depth, a shallow one and a deep one, for all games and blitz games alone; and with
    `--min-games`, which keeps the moves and positions of at least as many games."""
    lake, games = halves[0]
    cases: list[tuple[tuple[str, ...], int, Callable[[StoredGame], bool] | None]] = [
        ((), DEFAULT_MAX_PLY, None),
        (("--max-ply", "9"), 9, None),
        (("--max-ply", "60", "--type", "blitz"), 60, blitz),
    ]
    for i, (options, max_ply, only) in enumerate(cases):
        got = pq.read_table(book(lake, tmp_path / f"book{i}.parquet", *options)).to_pylist()
        assert_rows_equal(got, expected_book(games, max_ply, only).kept(1))
    popular = book(lake, tmp_path / "popular.parquet", "--min-games", "5")
    got = pq.read_table(popular).to_pylist()
    want = expected_book(games, DEFAULT_MAX_PLY)
    assert_rows_equal(got, want.kept(5))
    assert len(want.kept(5)) < len(want.kept(1))


def assert_rows_equal(got: list[dict[str, Any]], want: dict[tuple[int, str], Any]) -> None:
    """The book's rows `got` are python-chess's `want` (`Book.kept`): the same (key, move)s, counts and mean
    ratings, and a FEN and SAN of the move as python-chess writes them."""
    assert {(r["key"], r["uci"]) for r in got} == set(want)
    for row in got:
        w = want[row["key"], row["uci"]]
        assert {name: row[name] for name in w.counts()} == w.counts(), row
        assert row["rated"] == len(w.ratings)
        assert row["mean_rating"] == pytest.approx(w.mean_rating())
        assert (row["fen"], row["san"]) in w.names


def rated_within(headers: chess.pgn.Headers, low: int, high: int) -> bool:
    """Whether both Elos are known and their mean is in [low, high] (the book's rating band)."""
    elos = [headers.get(f"{side}Elo", "?") for side in ("White", "Black")]
    return all(e.isdigit() for e in elos) and low <= (int(elos[0]) + int(elos[1])) / 2 <= high


def test_book_filters_equal_python_chess(halves: list[tuple[Path, list[StoredGame]]], tmp_path: Path) -> None:
    """The rating band, date range and player filters keep the games python-chess's tags say they keep.
    The sample's games were all played on one day: a range around it keeps them all, one before none."""
    lake, games = halves[0]
    headers = [g.game.headers for g in games]
    player = Counter(h["White"] for h in headers).most_common(1)[0][0]
    day = min(h["UTCDate"] for h in headers).replace(".", "-")
    before = (dt.date.fromisoformat(day) - dt.timedelta(days=1)).isoformat()
    everything = expected_book(games, DEFAULT_MAX_PLY).kept(1)
    cases: list[tuple[tuple[str, ...], Callable[[chess.pgn.Headers], bool]]] = [
        (("--min-rating", "1500", "--max-rating", "2000"), lambda h: rated_within(h, 1500, 2000)),
        (("--player", player), lambda h: player in (h["White"], h["Black"])),
        (("--since", day, "--until", day), lambda h: h["UTCDate"].replace(".", "-") == day),
        (("--since", before, "--until", before), lambda h: False),
    ]
    kept = []
    for i, (options, only) in enumerate(cases):
        want = expected_book(games, DEFAULT_MAX_PLY, lambda g, only=only: only(g.game.headers)).kept(1)
        got = pq.read_table(book(lake, tmp_path / f"filtered{i}.parquet", *options)).to_pylist()
        assert_rows_equal(got, want)
        kept.append(len(want))
    assert 0 < kept[0] < len(everything) and 0 < kept[1] < len(everything)  # the band and player select
    assert kept[2:] == [len(everything), 0]


@pytest.mark.parametrize("cut", ["first", "last"])
def test_plies_that_do_not_fit_their_games_fail_in_one_line(
    halves: list[tuple[Path, list[StoredGame]]], tmp_path: Path, cut: str
) -> None:
    """A plies file missing a row (a damaged lake) fails the build in one line naming its games file, rather
    than count moves under other games: without its first row, each ply's row number names another game's
    ply (a game's first move is then its second, which its start position does not allow); without its
    last, the file holds fewer plies than its games. The file cut is the first one read, so that an error
    found only when the next file starts would name the wrong file. Nothing is left beside the book's
    name: neither the book nor the work folder of its runs."""
    lake = Path(shutil.copytree(halves[0][0], tmp_path / "lake"))
    files = sorted((lake / "plies").rglob("*.parquet"))
    assert len(files) > 1
    table = pq.read_table(files[0])
    pq.write_table(table.slice(1) if cut == "first" else table.slice(0, table.num_rows - 1), files[0])
    run = support.run_module("loaders.book", ["--lake", lake, tmp_path / "book.parquet"])
    games_file = "games" + str(files[0].relative_to(lake))[len("plies") :]
    support.one_line_error(run, games_file, "do not fit their games")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lake"]


def test_book_over_s3_equals_the_local_one(
    halves: list[tuple[Path, list[StoredGame]]], s3_server: S3Server
) -> None:
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
    games shorter than the book's depth (ended in their last position, which counts in its position's
    totals) and a Chess960 game, which the book of standard chess leaves out."""
    pgn = support.write_zst(tmp_path / "set_up.pgn.zst", "".join(SET_UP_GAMES))
    lake = support.loaded([pgn], tmp_path / "lake")
    ((variants,),) = (
        warehouse.connect(lake, "all").sql("select list(variant order by variant) from games").fetchall()
    )
    assert variants == ["Chess960", "Standard", "Standard", "Standard"]
    got = build(warehouse.connect(lake)).to_pylist()
    got = build(warehouse.connect(lake)).to_pylist()
    want = expected_book(stored_games([pgn]), DEFAULT_MAX_PLY)
    assert_rows_equal(got, want.kept(1))
    assert_positions_equal(got, want)
    assert {r["san"] for r in got} >= {"a8=Q", "O-O", "Bb5", "a6"}


def assert_positions_equal(got: list[dict[str, Any]], want: Book) -> None:
    """The positions' totals of the book's rows `got` are python-chess's."""
    for row in got:
        totals = want.positions[row["key"]].counts()
        assert {name: row[f"position_{name}"] for name in totals} == totals, row


def test_book_of_a_lake_named_like_a_pattern(
    halves: list[tuple[Path, list[StoredGame]]], tmp_path: Path
) -> None:
    """A lake whose name holds `[`, `]`, `?` and `*` (DuckDB's pattern characters) gets the same book: the
    views escape the lake's name, and the files are read by their names."""
    lake, _ = halves[0]
    odd = Path(shutil.copytree(lake, tmp_path / "lake[1]?*"))
    assert build(warehouse.connect(odd)).equals(build(warehouse.connect(lake)))


def test_polyglot_bin_read_by_python_chess(
    halves: list[tuple[Path, list[StoredGame]]], tmp_path: Path
) -> None:
    lake, games = halves[0]
    assert_polyglot_equal(book(lake, tmp_path / "book.bin"), expected_book(games, DEFAULT_MAX_PLY), 1)


def assert_polyglot_equal(path: Path, want: Book, min_games: int) -> None:
    """The PolyGlot book at `path`, read by python-chess, holds for each position python-chess's book keeps
    its moves weighted 2 x wins + draws of the side to move (capped at 65535; none of weight 0), and no
    other entry."""
    moves: defaultdict[int, dict[str, Counted]] = defaultdict(dict)
    boards = {}
    for (key, uci), counted in want.kept(min_games).items():
        moves[key][uci] = counted
        boards[key] = chess.Board(next(iter(counted.names))[0])
    expected_entries = 0
    with chess.polyglot.open_reader(path) as reader:
        for key, board in boards.items():
            white = board.turn == chess.WHITE
            weights = {
                uci: 2 * (w.white_wins if white else w.black_wins) + w.draws for uci, w in moves[key].items()
            }
            expected = {uci: min(weight, 0xFFFF) for uci, weight in weights.items() if weight}
            assert {e.move.uci(): e.weight for e in reader.find_all(board)} == expected, board.fen()
            expected_entries += len(expected)
    assert path.stat().st_size == 16 * expected_entries


def assert_tsv_equal(path: Path, want: Book, min_games: int) -> None:
    """The TSV book at `path` is Ormulogun's layout of python-chess's book: for each position, a line of its
    totals (white wins, draws, black wins, FEN, an empty move), then one per move kept (the same, and the
    UCI); every move kept, once."""
    kept = want.kept(min_games)
    fens = {key: fen for (key, _), counted in kept.items() for fen, _ in counted.names}
    by_fen = {fen: key for key, fen in fens.items()}
    position: int | None = None
    seen = []
    for line in path.read_text().splitlines():
        white, draws, black, fen, uci = line.split("\t")
        counts = (int(white), int(draws), int(black))
        if uci == "":
            position = by_fen[fen]
            totals = want.positions[position]
            assert counts == (totals.white_wins, totals.draws, totals.black_wins), line
            continue
        assert position is not None and fens[position] == fen, line
        w = kept[position, uci]
        assert counts == (w.white_wins, w.draws, w.black_wins), line
        seen.append((position, uci))
    assert sorted(seen) == sorted(kept)


def test_merged_halves_equal_the_whole(halves: list[tuple[Path, list[StoredGame]]], tmp_path: Path) -> None:
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


# Depths where a book is asked for more than the stored keys give: python-chess's counts of the positions of
# these plies reached by at least DEEP_GAMES games are checked.
DEEP_PLIES = range(12, 41)
DEEP_GAMES = 3


@pytest.fixture(scope="module", params=["data", "corpora"])
def deep_games(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Book]:
    """A lake of real games where positions past the stored keys are reached by several games, and
    python-chess's book of them to the last of `DEEP_PLIES`: `data`, the sample's lichess games three times
    over (copies with their own ids, as the bench dump repeats them); `corpora`, the lichess sample and the
    TWIC games of the shared corpora (skipped when absent), whose openings run deep."""
    root = tmp_path_factory.mktemp(f"deep-{request.param}")
    if request.param == "data":
        # Each game ends in a blank line (the sample's last does not), which python-chess needs between games.
        text = "".join(
            support.make_games(n, 1).rstrip("\n") + "\n\n" for n in range(3 * support.SAMPLE_GAMES)
        )
        inputs = [support.write_zst(root / "thrice.pgn.zst", text)]
    else:
        inputs = [support.CORPORA / "lichess" / "lichess_2025-05_sample.pgn"]
        inputs.append(support.CORPORA / "tournament" / "twic1599_sample.pgn")
        if not all(p.exists() for p in inputs):
            pytest.skip("the shared corpora are absent")
    lake = support.loaded(inputs, root / "lake")
    return lake, expected_book(stored_games(inputs), DEEP_PLIES[-1] + 1)


def test_deep_book_equals_python_chess(deep_games: tuple[Path, Book], tmp_path: Path) -> None:
    """Past the stored keys (plies 12 to 40), every row of the Parquet book, every line of the TSV and every
    entry of the PolyGlot `.bin` of the positions and moves reached by at least 3 games are python-chess's,
    and so are the positions' totals; with a memory budget so small that the counts spill to runs (dozens,
    merged in two rounds) the book is the same."""
    lake, want = deep_games
    options = ["--max-ply", str(DEEP_PLIES[-1] + 1), "--min-games", str(DEEP_GAMES)]
    got = pq.read_table(book(lake, tmp_path / "deep.parquet", *options)).to_pylist()
    kept = want.kept(DEEP_GAMES)
    assert_rows_equal(got, kept)
    deep = {k for k, counted in kept.items() if counted.plies & set(DEEP_PLIES)}
    assert len(deep) > 100, len(deep)
    assert_tsv_equal(book(lake, tmp_path / "deep.tsv", *options), want, DEEP_GAMES)
    assert_polyglot_equal(book(lake, tmp_path / "deep.bin", *options), want, DEEP_GAMES)
    spilled = book(lake, tmp_path / "spilled.parquet", *options, "--memory", "32K")
    assert pq.read_table(spilled).equals(pq.read_table(tmp_path / "deep.parquet"))
    table = build(warehouse.connect(lake), max_ply=DEEP_PLIES[-1] + 1, memory=32 << 10)
    assert_positions_equal(table.to_pylist(), want)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "deep.bin",
        "deep.parquet",
        "deep.tsv",
        "spilled.parquet",
    ]


@pytest.mark.parametrize(
    "options, needle",
    [
        (["--max-ply", "0"], "--max-ply"),
        (["--max-ply", "-3"], "--max-ply"),
        (["--min-games", "0"], "--min-games"),
        (["--memory", "0"], "--memory"),
        (["--memory", "lots"], "--memory"),
    ],
)
def test_bad_arguments_fail_in_one_line(
    halves: list[tuple[Path, list[StoredGame]]], tmp_path: Path, options: list[str], needle: str
) -> None:
    run = support.run_module("loaders.book", ["--lake", halves[0][0], tmp_path / "book.bin", *options])
    support.one_line_error(run, needle)
    assert list(tmp_path.iterdir()) == []


def test_existing_book_is_refused_in_one_line(
    halves: list[tuple[Path, list[StoredGame]]], tmp_path: Path
) -> None:
    out = tmp_path / "book.tsv"
    out.write_text("mine\n")
    run = support.run_module("loaders.book", ["--lake", halves[0][0], out])
    support.one_line_error(run, str(out), "exists")
    assert out.read_text() == "mine\n" and list(tmp_path.iterdir()) == [out]


def test_opening_graph(halves: list[tuple[Path, list[StoredGame]]], tmp_path: Path) -> None:
    """Every edge of the graph is a move of python-chess's book (to 40 plies) played in at least the minimum
    share of all games, labelled with its share of the games that stood in its position; a node is labelled
    with its chess-openings name where the table names it (its keys computed here by python-chess), else with
    a shortest line of the graph's moves that reaches it; every node links to its board's SVG."""
    lake, games = halves[0]
    want = expected_book(games, 40)
    # What a graph killed while counting left beside its output: taken over, and nothing else left there.
    (tmp_path / ".tree.dot.work" / ".book-killed").mkdir(parents=True)
    run = support.run_module(
        "loaders.opening_graph",
        ["--lake", lake, tmp_path / "tree.dot", "--min-share", "0.02", "--max-ply", "40"],
    )
    assert run.returncode == 0, run.stderr
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    dot = (tmp_path / "tree.dot").read_text()
    start = signed(chess.polyglot.zobrist_hash(chess.Board()))
    total = want.positions[start].games
    expected, depth = set(), {start: 0}
    frontier = [start]
    while frontier:  # the moves of at least 2% of all games, from the start on, breadth first
        k = frontier.pop(0)
        for (key, uci), w in sorted(want.moves.items()):
            if key != k or w.games / total < 0.02:
                continue
            fen, san = next(iter(w.names))
            board = chess.Board(fen)
            board.push_uci(uci)
            child = signed(chess.polyglot.zobrist_hash(board))
            expected.add((k, child, san, f"{w.games / want.positions[k].games:.0%}"))
            if child not in depth:
                depth[child] = depth[k] + 1
                frontier.append(child)
    pattern = r'"(-?\d+)" -> "(-?\d+)" \[label="(\S+) (\d+%)"\]'
    edges = {(int(m[1]), int(m[2]), m[3], m[4]) for m in re.finditer(pattern, dot)}
    assert edges == expected and len(expected) > 20
    assert max(depth.values()) > 4
    names = chess_openings_names()
    labels = dict((int(k), label) for k, label in re.findall(r'^  "(-?\d+)" \[label="([^"]*)"', dot, re.M))
    assert set(labels) == set(depth)
    named = 0
    for key, label in labels.items():
        if key == start:
            assert label == "start"
        elif key in names:
            assert label == names[key], key
            named += 1
        else:
            board = chess.Board()
            sans = [token for token in label.split() if not token.endswith(".")]
            for san in sans:
                board.push_san(san)
            assert signed(chess.polyglot.zobrist_hash(board)) == key and len(sans) == depth[key], label
    assert 0 < named < len(labels) - 1
    svg = (tmp_path / "tree.svg").read_text()
    for key in labels:
        assert f"tree_boards/{key}.svg" in svg
        assert (tmp_path / "tree_boards" / f"{key}.svg").read_text().startswith("<svg")


def chess_openings_names() -> dict[int, str]:
    """`ECO name` of each position lichess's chess-openings table names (the first of its lines that reach
    it), keyed by python-chess's replay of the lines."""
    names: dict[int, str] = {}
    for path in sorted((support.REPO / "warehouse" / "data" / "chess-openings").glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            eco, name, pgn = line.split("\t")[:3]
            game = chess.pgn.read_game(io.StringIO(pgn))
            assert game is not None
            names.setdefault(signed(chess.polyglot.zobrist_hash(game.end().board())), f"{eco} {name}")
    return names
