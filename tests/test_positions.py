"""The lake's positions against python-chess: the stored keys and openings of a load, the SQL FEN key, search
by FEN three ways (SQL, Python, the command).

The lake holds the bundled lichess sample and, when the corpora are there, a TCEC Chess960 (FRC) file.
python-chess reads the same PGN files itself, replays every game and hashes every position
(`chess.polyglot.zobrist_hash`); its games are matched with the lake's by file and order.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import shutil
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import pytest
import support
from fen_oracle import python_chess_key
from position_oracle import (
    CHESS960,
    START,
    Replayed,
    paired_games,
    probe_fens,
    reaching,
    read_pgn,
    signed,
)
from support import REPO, SAMPLE

import warehouse
from warehouse.positions import search
from warehouse.positions.explorer import explore


@pytest.fixture(scope="module")
def inputs() -> list[Path]:
    return [SAMPLE, CHESS960] if CHESS960.exists() else [SAMPLE]


@pytest.fixture(scope="module")
def lake(inputs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return support.loaded(inputs, tmp_path_factory.mktemp("positions") / "lake")


@pytest.fixture(scope="module")
def games(lake: Path, inputs: list[Path]) -> list[tuple[dict, Replayed]]:
    return paired_games(lake, inputs)


def test_stored_keys_equal_python_chess(lake: Path, games: list[tuple[dict, Replayed]]) -> None:
    con = warehouse.connect(lake)
    plies = con.sql("select game_key, ply, key from plies").fetchall()
    stored = {(game_key, ply): key for game_key, ply, key in plies}
    variants = {row["variant"] for row, _ in games}
    assert "Standard" in variants and ("Chess960" in variants or not CHESS960.exists())
    for row, game in games:
        assert row["final_key"] == game.keys[-1], row["game_id"]
        for ply, key in enumerate(game.keys[:-1]):
            assert stored[row["game_key"], ply] == (key if ply < 10 else None), (row["game_id"], ply)


def opening_positions() -> dict[int, tuple[str, str, str]]:
    """python-chess's reading of warehouse/data/chess-openings: the key of each line's position → its ECO,
    name and code (ECO + 3-digit ordinal of the name within the ECO, in the table's order); the first
    line of a position names it."""
    named: dict[int, tuple[str, str, str]] = {}
    ordinals: dict[str, list[str]] = {}
    for path in sorted((REPO / "warehouse" / "data" / "chess-openings").glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as f:
            for line in csv.DictReader(f, delimiter="\t"):
                names = ordinals.setdefault(line["eco"], [])
                if line["name"] not in names:
                    names.append(line["name"])
                code = f"{line['eco']}{names.index(line['name']) + 1:03d}"
                board = chess.pgn.read_game(io.StringIO(line["pgn"])).end().board()  # type: ignore[union-attr]
                named.setdefault(
                    signed(chess.polyglot.zobrist_hash(board)), (line["eco"], line["name"], code)
                )
    return named


def test_openings_equal_python_chess_classification(games: list[tuple[dict, Replayed]]) -> None:
    named = opening_positions()
    classified = 0
    for row, game in games:
        deepest = next((named[k] for k in reversed(game.keys) if k in named), (None, None, None))
        assert (row["opening_eco"], row["opening_name"], row["opening_code"]) == deepest, row["game_id"]
        classified += deepest[0] is not None
    assert classified > len(games) // 2


def test_polyglot_key_table_is_python_chess() -> None:
    with (REPO / "sql" / "views" / "polyglot_keys.csv").open() as f:
        rows = [(int(r["idx"]), int(r["key"])) for r in csv.DictReader(f)]
    assert rows == [(i, signed(k)) for i, k in enumerate(chess.polyglot.POLYGLOT_RANDOM_ARRAY)]


def test_sql_fen_key_equals_python_chess(lake: Path, games: list[tuple[dict, Replayed]]) -> None:
    """Every 5th position of the sample's games, en-passant positions all (standard FEN castling only)."""
    con = warehouse.connect(lake)
    cases = {
        (fen, key)
        for row, game in games
        if row["variant"] == "Standard"
        for i, (fen, key) in enumerate(zip(game.fens, game.keys, strict=True))
        if i % 5 == 0 or fen.split()[3] != "-"
    }
    assert any(fen.split()[3] != "-" for fen, _ in cases)
    fens = [fen for fen, _ in cases]
    keys = con.sql("select fen, fen_key(fen) from (select unnest($fens) as fen)", params={"fens": fens})
    assert dict(keys.fetchall()) == dict(cases)


def test_search_finds_what_python_chess_finds(lake: Path, games: list[tuple[dict, Replayed]]) -> None:
    con = warehouse.connect(lake)
    chess960 = {row["start_fen"] for row, _ in games if row["variant"] == "Chess960"}
    for fen in probe_fens(games):
        key = signed(chess.polyglot.zobrist_hash(chess.Board(fen, chess960=True)))
        as_960 = any(fen.split()[0] == f.split()[0] for f in chess960 if f)
        found = search(fen, lake, chess960=as_960, con=con)
        assert dict(zip(found["game_id"], found["ply"], strict=True)) == reaching(games, key), fen
        order = list(zip(found["datetime"], found["game_id"], strict=True))  # by date (nulls last), then id
        assert order == sorted(order, key=lambda o: (o[0] is None, o[0] or dt.datetime.min, o[1])), fen
        shallow = search(fen, lake, chess960=as_960, deep=False, con=con)
        assert dict(zip(shallow["game_id"], shallow["ply"], strict=True)) == reaching(games, key, 10), fen
    blitz = search(START, lake, con=con, type="blitz")
    types = {
        row["game_id"]: row["type"] for row in con.sql("select game_id, type from games").pl().to_dicts()
    }
    want = {
        g for g in reaching(games, signed(chess.polyglot.zobrist_hash(chess.Board()))) if types[g] == "blitz"
    }
    assert set(blitz["game_id"]) == want and want


def test_search_reads_the_connections_lake(
    lake: Path, games: list[tuple[dict, Replayed]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`search(fen, con=…)` without `lake=` searches the connection's lake, not the default one (here an
    empty folder): the same games as with the lake named, deep or shallow."""
    con = warehouse.connect(lake)
    monkeypatch.setenv("CHESS_LAKE", str(tmp_path / "elsewhere"))
    probes = probe_fens(games)
    for fen in (probes[0], probes[4], probes[5]):  # the start, plies 15 and 40
        for deep in (True, False):
            want = search(fen, lake, deep=deep, con=con)["game_id"].to_list()
            assert search(fen, deep=deep, con=con)["game_id"].to_list() == want, fen
            assert want or not deep, fen


def test_explorer_with_filters(lake: Path, games: list[tuple[dict, Replayed]]) -> None:
    """The moves from the position after 1. e4 in the blitz games of players rated 1500+ (mean Elo): counts
    and results as python-chess's replay gives them (the SQL library's test checks the other columns)."""
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    key = signed(chess.polyglot.zobrist_hash(chess.Board(fen)))
    want: dict[str, list[str]] = {}
    for row, game in games:
        elos = [p["elo"] for p in row["players"]]
        if row["type"] != "blitz" or None in elos or sum(elos) / 2 < 1500:
            continue
        for ply, k in enumerate(game.keys[: min(10, len(game.ucis))]):  # positions before a move
            if k == key:
                want.setdefault(game.ucis[ply], []).append(row["result"])
    got = explore(fen, lake, type="blitz", min_rating=1500).rows(named=True)
    assert {r["uci"]: (r["games"], r["white_wins"], r["draws"], r["black_wins"]) for r in got} == {
        uci: (len(results), results.count("W"), results.count("D"), results.count("B"))
        for uci, results in want.items()
    }
    assert want


def test_games_at_from_the_duckdb_cli(lake: Path, games: list[tuple[dict, Replayed]]) -> None:
    fen = probe_fens(games)[1]  # a position of the stored plies
    query = f"import database 'sql/views';\nselect game_id from games_at('{fen}') order by game_id;\n"
    run = support.run_command(
        ["duckdb", "-json"],
        stdin=query.encode(),
        env={"PATH": str(Path(shutil.which("duckdb") or "duckdb").parent), "CHESS_LAKE": str(lake)},
    )
    assert run.returncode == 0, run.stderr
    got = sorted(r["game_id"] for r in json.loads(run.stdout or "[]"))
    key = signed(chess.polyglot.zobrist_hash(chess.Board(fen)))
    assert got == sorted(reaching(games, key, 10)) and got


def spellings(fen: str) -> list[str]:
    """`fen` as users also write it: Shredder-FEN castling letters, other whitespace (tabs, runs of
    spaces), the en-passant square after any double step."""
    board = chess.Board(fen, chess960=True)
    return [
        board.shredder_fen(en_passant="fen"),
        "\t" + " \t  ".join(fen.split()) + " ",
        board.fen(en_passant="fen"),
    ]


def over_claimed(games: list[tuple[dict, Replayed]]) -> tuple[str, str]:
    """A position of the stored plies, and its FEN claiming castling rights `KQkq` it cannot have (a rook
    or king gone), which python-chess drops."""
    for row, game in games:
        for fen in game.fens[1:9]:
            fields = fen.split()
            claimed = " ".join([*fields[:2], "KQkq", *fields[3:]])
            if (
                row["variant"] == "Standard"
                and fields[2] != "KQkq"
                and python_chess_key(claimed) == python_chess_key(fen)
            ):
                return fen, claimed
    raise AssertionError("no such position in the lake")


def cli_rows(lake: Path, query: str) -> list[dict]:
    """The rows of `query`, after the views' import, through the duckdb CLI over `lake`."""
    run = support.run_command(
        ["duckdb", "-json"],
        stdin=f"import database 'sql/views';\n{query}\n".encode(),
        env={"PATH": str(Path(shutil.which("duckdb") or "duckdb").parent), "CHESS_LAKE": str(lake)},
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout or "[]")


def test_explorer_reads_every_spelling(lake: Path, games: list[tuple[dict, Replayed]]) -> None:
    """The Python explorer (the Rust core's key) and sql/explorer.sql through the duckdb CLI (the SQL macro's)
    answer alike for every spelling of a position, as for its plain FEN."""
    after_e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    fen, claimed = over_claimed(games)
    for plain, others in [(after_e4, spellings(after_e4)), (fen, [claimed, *spellings(claimed)])]:
        want = explore(plain, lake).select("uci", "games", "white_wins", "draws", "black_wins").rows()
        assert want, plain
        for other in others:
            assert (
                explore(other, lake).select("uci", "games", "white_wins", "draws", "black_wins").rows()
                == want
            )
            rows = cli_rows(lake, f"set variable explorer_fen = '{other}';\n.read sql/explorer.sql")
            assert [
                (r["uci"], r["games"], r["white_wins"], r["draws"], r["black_wins"]) for r in rows
            ] == want


def test_games_at_reads_chess960_castling(lake: Path, games: list[tuple[dict, Replayed]]) -> None:
    """games_at through the duckdb CLI finds Chess960 positions by X-FEN and Shredder-FEN alike."""
    chess960 = [g for row, g in games if row["variant"] == "Chess960"]
    if not chess960:
        pytest.skip("no Chess960 games (the corpora are absent)")
    for game in chess960[:3]:
        for fen in (game.fens[0], game.fens[3]):
            key = python_chess_key(fen)
            want = sorted(reaching(games, key, 10))
            assert want
            for spelled in [fen, *spellings(fen)]:
                found = cli_rows(lake, f"select game_id from games_at('{spelled}') order by game_id;")
                assert [r["game_id"] for r in found] == want, spelled


def test_search_command(lake: Path, games: list[tuple[dict, Replayed]], tmp_path: Path) -> None:
    fen = probe_fens(games)[4]  # beyond the stored plies
    key = signed(chess.polyglot.zobrist_hash(chess.Board(fen)))
    want = reaching(games, key)
    printed = support.run_module("loaders.positions", ["--lake", lake, fen])
    assert printed.returncode == 0, printed.stderr
    assert all(game_id in printed.stdout for game_id in want)
    out = tmp_path / "found.pgn"
    written = support.run_module("loaders.positions", ["--lake", lake, fen, "--pgn", out])
    assert written.returncode == 0, written.stderr
    exported = list(read_pgn(out))
    assert len(exported) == len(want)
    for game in exported:  # each game written reaches the position, as python-chess replays it
        board = game.board()
        keys = [signed(chess.polyglot.zobrist_hash(board))]
        for move in game.mainline_moves():
            board.push(move)
            keys.append(signed(chess.polyglot.zobrist_hash(board)))
        assert key in keys
    bad = support.run_module("loaders.positions", ["--lake", lake, "not a fen"])
    support.one_line_error(bad, "invalid FEN")
    support.one_line_error(support.run_module("loaders.positions", ["--lake", lake]), "give the position")


def test_search_command_after_a_line(lake: Path, games: list[tuple[dict, Replayed]]) -> None:
    """`--line`: a game's first 16 moves in SAN, as python-chess writes them; the games found are those
    python-chess finds at the position after them."""
    replayed = next(g for row, g in games if row["variant"] == "Standard" and len(g.ucis) > 30)
    board, sans = chess.Board(), []
    for uci in replayed.ucis[:16]:
        sans.append(board.san(chess.Move.from_uci(uci)))
        board.push_uci(uci)
    want = reaching(games, signed(chess.polyglot.zobrist_hash(board)))
    assert want
    printed = support.run_module("loaders.positions", ["--lake", lake, "--line", " ".join(sans)])
    assert printed.returncode == 0, printed.stderr
    assert all(game_id in printed.stdout for game_id in want)
    assert printed.stdout.splitlines()[-1] == f"{len(want):,} games"


def test_opening_tables_exported(tmp_path: Path) -> None:
    """The code map holds each (code, ECO, name) of python-chess's reading of the table once; the ECO book
    each line, with the FEN its moves reach."""
    run = support.run_module("loaders.openings", [tmp_path])
    assert run.returncode == 0, run.stderr
    with (tmp_path / "opening_codes.tsv").open() as f:
        codes = list(csv.DictReader(f, delimiter="\t"))
    named = opening_positions()
    assert {(r["code"], r["eco"], r["name"]) for r in codes} >= {(c, e, n) for e, n, c in named.values()}
    assert len({r["code"] for r in codes}) == len(codes)
    assert all(len(r["code"]) == 6 and r["code"].startswith(r["eco"]) for r in codes)
    with (tmp_path / "eco_book.tsv").open() as f:
        book = list(csv.DictReader(f, delimiter="\t"))
    tables = sorted((REPO / "warehouse" / "data" / "chess-openings").glob("*.tsv"))
    assert len(book) == sum(len(path.read_text(encoding="utf-8").splitlines()) - 1 for path in tables)
    assert {signed(chess.polyglot.zobrist_hash(chess.Board(r["fen"]))) for r in book} == set(named)
    again = support.run_module("loaders.openings", [tmp_path])
    support.one_line_error(again, "exists")
