"""Hand-written edge cases, loaded through the real CLI, checked against hand-computed values.

Every expectation below was worked out by hand from docs/schema.md and the fixtures in tests/data/edge/
(the games were replayed with python-chess to make sure they are legal); none is generated from the
implementation. Ply numbers are 0-based indexes into `moves`.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import random
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pytest
import zstandard
from support import DATA, SAMPLE, SAMPLE_GAMES, Row, read_games, read_records, read_rejects, run_module
from support import sample_pgn as decompressed_sample
from support import without_source as game_without_source

from warehouse import _core

EDGE = DATA / "edge"
MOVE_FACTS = ("p", "f", "t", "x", "c", "castle", "promote")


@dataclass(frozen=True)
class Lake:
    path: Path
    games: list[Row]
    rejects: list[Row]
    loads: list[Row]


def load(paths: list[str | Path], tmp_path: Path, stdin: bytes | None = None) -> Lake:
    """Load `paths` into a fresh lake under `tmp_path` and read it back (see `read_lake`)."""
    lake = Path(tempfile.mkdtemp(prefix="lake-", dir=tmp_path))
    run = run_module("loaders.pgn2parquet", [*map(str, paths), "--lake", str(lake)], stdin=stdin)
    assert run.returncode == 0, run.stderr
    return read_lake(lake)


def read_lake(lake: Path) -> Lake:
    """Games and rejects of `lake` in source order, and its load records. Each move also holds `filled`: its
    SAN as the exports give it (`_core.fill_san`: the stored `san`, else the SAN the position gives)."""
    games, rejects = (sorted(rows, key=in_source_order) for rows in (read_games(lake), read_rejects(lake)))
    filled = {in_source_order(g): g for g in filled_games(lake)}
    for game in games:
        twin = filled[in_source_order(game)]
        pairs = [(game["moves"], twin["moves"])]
        for line, twin_line in zip(game["variations"], twin["variations"], strict=True):
            pairs.append((line["moves"], twin_line["moves"]))
        for moves, twin_moves in pairs:
            for move, twin_move in zip(moves, twin_moves, strict=True):
                move["filled"] = twin_move["san"]
    return Lake(lake, games, rejects, read_records(lake))


def filled_games(lake: Path) -> list[Row]:
    """Where each game of `lake` comes from, and its moves and variations with every `san` filled in."""
    if not (lake / "games").is_dir():
        return []
    columns = ["game_id", "source_file", "source_offset", "start_fen", "variant", "moves", "variations"]
    table = ds.dataset(lake / "games", format="parquet", partitioning="hive").to_table(columns=columns)
    return [row for batch in table.to_batches() for row in pa.record_batch(_core.fill_san(batch)).to_pylist()]


def in_source_order(row: Row) -> tuple[str, int]:
    return row["source_file"], row["source_offset"]


def event_offsets(raw: bytes) -> list[int]:
    """Byte offsets where each game's text starts: every fixture game opens with its Event tag."""
    return [m.start() for m in re.finditer(rb'\[Event "', raw)]


def mv(
    p: str,
    f: str,
    t: str,
    *,
    x: str | None = None,
    c: int | None = None,
    castle: str | None = None,
    promote: str | None = None,
) -> dict[str, str | int | None]:
    """The expected BGN facts of one move."""
    return {"p": p, "f": f, "t": t, "x": x, "c": c, "castle": castle, "promote": promote}


def facts(move: Row) -> dict[str, str | int | None]:
    return {key: move[key] for key in MOVE_FACTS}


def sans(moves: list[Row]) -> list[str]:
    """The moves' SAN as the exports give it: the stored `san`, else the position's (`filled`)."""
    return [m["filled"] for m in moves]


def stored(moves: list[Row]) -> dict[int, str]:
    """The `san` the lake stores, by ply: only where the source's differs from the position's SAN."""
    return {i: m["san"] for i, m in enumerate(moves) if m["san"] is not None}


def san(move: Row) -> tuple[str | None, str]:
    """(stored `san`, the SAN the exports give) of a move."""
    return move["san"], move["filled"]


def lines(game: Row) -> list[tuple[int, int, int, list[str]]]:
    """The variation tree as (id, parent, ply, sans), by id."""
    return sorted((v["id"], v["parent"], v["ply"], sans(v["moves"])) for v in game["variations"])


def stored_in_lines(game: Row) -> dict[int, dict[int, str]]:
    """The `san` stored in the variations, by line id (lines storing none left out)."""
    return {v["id"]: stored(v["moves"]) for v in game["variations"] if stored(v["moves"])}


def line(game: Row, line_id: int) -> Row:
    (found,) = [v for v in game["variations"] if v["id"] == line_id]
    return found


def without_source(games: list[Row]) -> list[Row]:
    return [game_without_source(g) for g in games]


def strings(value: object) -> list[str]:
    """Every string inside a row (map columns come back from Arrow as lists of pairs)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in strings(k) + strings(v)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in strings(item)]
    return []


FIXTURES = sorted(p.name for p in EDGE.glob("*.pgn"))


@pytest.mark.parametrize("name", FIXTURES)
def test_every_game_is_accounted_for(name: str, tmp_path: Path) -> None:
    path = EDGE / name
    raw = path.read_bytes()
    lake = load([path], tmp_path)
    offsets = event_offsets(raw)
    assert sorted(r["source_offset"] for r in lake.games + lake.rejects) == offsets
    assert {r["source_file"] for r in lake.games + lake.rejects} == {str(path)}
    (record,) = lake.loads
    assert record["games_seen"] == len(offsets)
    assert record["games_written"] == len(lake.games)
    assert record["games_rejected"] == len(lake.rejects)
    assert record["games_seen"] == record["games_written"] + record["games_rejected"]
    assert record["sha256"] == hashlib.sha256(raw).hexdigest()
    ids = [g["game_id"] for g in lake.games]
    assert len(set(ids)) == len(ids)
    for game in lake.games:
        if not (game["site"] or "").startswith("https://lichess.org/"):
            assert re.fullmatch(r"[0-9a-fA-F]{16}", game["game_id"]), game["game_id"]


def test_promotions(tmp_path: Path) -> None:
    both, knight, rook = load([EDGE / "promotion.pgn"], tmp_path).games

    assert both["n_plies"] == 18
    assert both["variant"] == "Standard"
    assert both["start_fen"] is None
    assert both["result"] == "W"
    assert both["mate"] is False
    assert (both["type"], both["tc_base"], both["tc_inc"]) == ("blitz", 180, 2)
    assert (both["year"], both["month"]) == (2024, 2)
    moves = both["moves"]
    assert facts(moves[8]) == mv("P", "b7", "a8", x="r", promote="Q")
    assert san(moves[8]) == (None, "bxa8=Q")
    assert facts(moves[11]) == mv("p", "e3", "f2", x="P", c=1)
    assert san(moves[11]) == (None, "exf2+")
    # Black's second check: a capture that underpromotes to a knight.
    assert facts(moves[13]) == mv("p", "f2", "g1", x="N", c=2, promote="n")
    assert san(moves[13]) == (None, "fxg1=N+")
    # The promoted piece is a knight from then on.
    assert facts(moves[14]) == mv("R", "h1", "g1", x="n")
    assert facts(moves[16]) == mv("Q", "a8", "b8", x="n")
    assert facts(moves[17]) == mv("q", "d8", "h4")

    fen = "4r3/3P2k1/8/8/8/8/8/K7 w - - 0 1"
    assert (knight["variant"], knight["start_fen"]) == ("Standard", fen)
    assert dict(knight["headers"])["SetUp"] == "1"
    assert knight["result"] == "D"
    assert sans(knight["moves"]) == ["dxe8=N+", "Kf7", "Nd6+", "Ke6"]
    assert stored(knight["moves"]) == {}
    assert facts(knight["moves"][0]) == mv("P", "d7", "e8", x="r", c=1, promote="N")
    assert facts(knight["moves"][1]) == mv("k", "g7", "f7")
    assert facts(knight["moves"][2]) == mv("N", "e8", "d6", c=2)

    assert rook["start_fen"] == "8/8/8/8/8/5k2/p7/5K2 b - - 0 40"
    assert rook["n_plies"] == 1
    assert rook["mate"] is True
    assert rook["result"] == "B"
    assert san(rook["moves"][0]) == (None, "a1=R#")
    assert facts(rook["moves"][0]) == mv("p", "a2", "a1", promote="r")


def test_en_passant(tmp_path: Path) -> None:
    (game,) = load([EDGE / "en_passant.pgn"], tmp_path).games
    moves = game["moves"]
    assert game["n_plies"] == 14
    assert game["type"] == "blitz"
    assert facts(moves[4]) == mv("P", "e5", "d6", x="p")
    assert san(moves[4]) == (None, "exd6")
    # The white pawn stands on d6 after capturing en passant.
    assert facts(moves[5]) == mv("p", "c7", "d6", x="P")
    assert facts(moves[11]) == mv("p", "b4", "c3", x="P")
    assert san(moves[11]) == (None, "bxc3")
    assert facts(moves[12]) == mv("N", "b1", "c3", x="p")


def test_chess960_castling(tmp_path: Path) -> None:
    king_b1, king_g1, rook_f1 = load([EDGE / "chess960.pgn"], tmp_path).games
    for game in (king_b1, king_g1, rook_f1):
        assert game["variant"] == "Chess960"
    assert king_b1["start_fen"] == "rk5r/ppp1qppp/2npbn2/4p3/4P3/2NPBN2/PPP1QPPP/RK5R w HAha - 0 8"
    assert king_g1["start_fen"] == "1rk4r/pppq1ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPPQ1PPP/1R4KR w HBhb - 0 7"
    assert rook_f1["start_fen"] == "1r3kr1/ppp2ppp/2nqbn2/3pp3/3PP3/2NQBN2/PPP2PPP/RK3R2 w KQkq - 0 6"

    moves = king_b1["moves"]
    assert sans(moves) == ["O-O-O", "O-O", "Rd2", "Rfe8", "Rhd1", "a6"]
    assert stored(moves) == {}
    assert facts(moves[0]) == mv("K", "b1", "c1", castle="Q")
    assert facts(moves[1]) == mv("k", "b8", "g8", castle="k")
    # The rooks landed on d1 and f8.
    assert facts(moves[2]) == mv("R", "d1", "d2")
    assert facts(moves[3]) == mv("r", "f8", "e8")
    assert facts(moves[4]) == mv("R", "h1", "d1")

    # The kings are already on their castled squares: only the rooks move.
    moves = king_g1["moves"]
    assert facts(moves[0]) == mv("K", "g1", "g1", castle="K")
    assert facts(moves[1]) == mv("k", "c8", "c8", castle="q")
    assert facts(moves[2]) == mv("R", "f1", "e1")
    assert facts(moves[3]) == mv("r", "d8", "f8")

    # White's rook is already on f1; Black's king and rook swap squares.
    moves = rook_f1["moves"]
    assert facts(moves[0]) == mv("K", "b1", "g1", castle="K")
    assert facts(moves[1]) == mv("k", "f8", "g8", castle="k")
    assert facts(moves[2]) == mv("R", "f1", "e1")
    assert facts(moves[3]) == mv("r", "f8", "e8")
    assert rook_f1["n_plies"] == 6


def test_fen_starts(tmp_path: Path) -> None:
    sicilian, en_passant = load([EDGE / "fen_start.pgn"], tmp_path).games

    assert sicilian["start_fen"] == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    assert sicilian["variant"] == "Standard"
    assert sicilian["result"] == "*"
    assert sicilian["datetime"] == datetime(2024, 5, 1, tzinfo=UTC)
    assert sicilian["n_plies"] == 9
    moves = sicilian["moves"]
    assert facts(moves[0]) == mv("p", "c7", "c5")
    assert facts(moves[1]) == mv("N", "g1", "f3")
    assert facts(moves[4]) == mv("p", "c5", "d4", x="P")
    assert facts(moves[5]) == mv("N", "f3", "d4", x="p")
    assert san(moves[8]) == (None, "a6")

    # The FEN's en passant square makes Black's first move legal.
    assert en_passant["start_fen"] == "rnbqkbnr/ppp1pppp/8/8/3pP3/N4N2/PPPP1PPP/R1BQKB1R b KQkq e3 0 3"
    moves = en_passant["moves"]
    assert facts(moves[0]) == mv("p", "d4", "e3", x="P")
    assert facts(moves[1]) == mv("P", "d2", "e3", x="p")
    assert facts(moves[2]) == mv("q", "d8", "d1", x="Q", c=1)
    assert facts(moves[3]) == mv("K", "e1", "d1", x="q")
    assert en_passant["result"] == "D"


def test_evals_and_clocks(tmp_path: Path) -> None:
    game, _ = load([EDGE / "annotations.pgn"], tmp_path).games
    moves = game["moves"]
    assert [m["eval_cp"] for m in moves] == [30, 123, None, None, None, -50, None]
    assert [m["eval_mate"] for m in moves] == [None, None, 4, -3, None, None, None]
    assert [m["clk"] for m in moves] == [
        Decimal(3900),
        Decimal("9.7"),
        Decimal("3898.3"),
        Decimal(8),
        Decimal(3890),
        None,
        None,
    ]
    assert all(isinstance(m["clk"], Decimal) for m in moves[:5])
    # Comments holding nothing but [%eval] and [%clk] leave no comment.
    assert [m["comment"] for m in moves] == [None] * 7
    assert game["comment"] is None
    assert (game["has_eval"], game["has_clock"]) == (True, True)
    assert game["mate"] is True
    assert game["result"] == "W"
    assert facts(moves[6]) == mv("Q", "h5", "f7", x="p")
    assert san(moves[6]) == (None, "Qxf7#")
    assert game["datetime"] == datetime(2024, 3, 10, 18, 30, 5, tzinfo=UTC)
    assert (game["type"], game["tc_base"], game["tc_inc"]) == ("classical", 3900, 0)
    headers = dict(game["headers"])
    assert (headers["UTCDate"], headers["UTCTime"]) == ("2024.03.10", "18:30:05")


def test_nags_and_comments(tmp_path: Path) -> None:
    _, game = load([EDGE / "annotations.pgn"], tmp_path).games
    moves = game["moves"]
    assert game["comment"] == "A game to test NAGs."
    assert [m["nag"] for m in moves] == [1, 2, 3, 4, 5, 6, 14, None, 1, None, None, None, None, None]
    assert [m["nags"] for m in moves] == [
        [1],
        [2],
        [3],
        [4],
        [5],
        [6],
        [14],
        None,
        [1, 14],
        None,
        None,
        None,
        None,
        None,
    ]
    assert san(moves[6]) == (None, "Ba4")
    assert san(moves[8]) == (None, "O-O")
    assert facts(moves[8]) == mv("K", "e1", "g1", castle="K")
    # [%clk] is taken out of the comment, [%csl] stays.
    assert moves[8]["comment"] == "Castles [%csl Ga4]"
    assert moves[8]["clk"] == Decimal(298)
    assert moves[9]["comment"] == "first second"
    assert (game["has_eval"], game["has_clock"]) == (False, True)
    assert game["datetime"] == datetime(2024, 3, 11, tzinfo=UTC)
    assert (game["type"], game["tc_base"], game["tc_inc"]) == ("rapid", 600, 5)


def test_results_checks_and_mates(tmp_path: Path) -> None:
    lake = load([EDGE / "results.pgn"], tmp_path)
    empty, unfinished, scholar, vienna, untagged = lake.games

    assert empty["n_plies"] == 0
    assert empty["moves"] == []
    assert empty["variations"] == []
    assert empty["mate"] is False
    assert empty["result"] == "B"
    assert empty["termination"] == "Abandoned"
    assert empty["comment"] is None
    assert (empty["has_eval"], empty["has_clock"]) == (False, False)
    assert empty["datetime"] is None
    assert (empty["year"], empty["month"]) == (0, 0)
    assert (empty["type"], empty["time_control"], empty["tc_base"]) == ("unknown", None, None)
    assert empty["players"] == [
        {"name": "Absent", "elo": None, "rating_diff": None, "title": None},
        {"name": "Present", "elo": 1500, "rating_diff": None, "title": "FM"},
    ]
    headers = dict(empty["headers"])
    assert headers["Date"] == "????.??.??"
    assert "White" not in headers
    assert "BlackElo" not in headers
    assert (lake.path / "games" / "type=unknown" / "year=0" / "month=0").is_dir()

    assert unfinished["result"] == "*"
    assert unfinished["n_plies"] == 3
    assert (unfinished["type"], unfinished["time_control"]) == ("correspondence", "-")
    assert (unfinished["tc_base"], unfinished["tc_inc"]) == (None, None)

    assert scholar["mate"] is True
    assert scholar["result"] == "W"
    assert (scholar["type"], scholar["tc_base"], scholar["tc_inc"]) == ("ultrabullet", 15, 0)
    assert (scholar["moves"][5]["nag"], scholar["moves"][5]["nags"]) == (4, [4])
    assert facts(scholar["moves"][6]) == mv("Q", "h5", "f7", x="p")

    # Reti - Tartakower, Vienna 1910: 10. Bg5+ is a double check (bishop and the d1 rook).
    assert vienna["site"] == "Vienna AUT"
    assert vienna["datetime"] is None
    assert vienna["n_plies"] == 21
    assert vienna["mate"] is True
    assert vienna["result"] == "W"
    assert [m["c"] for m in vienna["moves"]] == [None] * 11 + [1] + [None] * 4 + [1, None, 2, None, None]
    moves = vienna["moves"]
    assert facts(moves[11]) == mv("q", "d8", "a5", c=1)
    assert facts(moves[14]) == mv("K", "e1", "c1", castle="Q")
    assert facts(moves[16]) == mv("Q", "d3", "d8", c=1)
    assert facts(moves[17]) == mv("k", "e8", "d8", x="Q")
    assert facts(moves[18]) == mv("B", "d2", "g5", c=2)
    assert san(moves[18]) == (None, "Bg5+")
    assert facts(moves[19]) == mv("k", "d8", "c7")
    assert facts(moves[20]) == mv("B", "g5", "d8")
    assert san(moves[20]) == (None, "Bd8#")
    assert [p["name"] for p in vienna["players"]] == ["Reti, Richard", "Tartakower, Savielly"]

    # No Result tag: the movetext's termination marker decides.
    assert untagged["result"] == "B"
    assert untagged["type"] == "rapid"


def test_variations(tmp_path: Path) -> None:
    nested, edges = load([EDGE / "variations.pgn"], tmp_path).games

    assert sans(nested["moves"]) == ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]
    assert stored(nested["moves"]) == {}
    assert nested["comment"] == "Annotated by hand."
    assert all(v["comment"] is None for v in nested["variations"] if v["id"] != 4)
    assert stored_in_lines(nested) == {}
    assert lines(nested) == [
        (1, 0, 2, ["f4", "exf4", "Nf3"]),
        (2, 1, 1, ["d5", "exd5"]),
        (3, 0, 2, ["Bc4"]),
        (4, 0, 4, ["Bc4", "Bc5"]),
        (5, 4, 1, ["Nf6", "Ng5"]),
    ]
    gambit = line(nested, 1)["moves"]
    assert facts(gambit[1]) == mv("p", "e5", "f4", x="P")
    assert facts(gambit[2]) == mv("N", "g1", "f3")
    assert gambit[2]["comment"] == "King's Gambit Accepted"
    assert facts(line(nested, 2)["moves"][1]) == mv("P", "e4", "d5", x="p")
    assert facts(line(nested, 3)["moves"][0]) == mv("B", "f1", "c4")
    assert line(nested, 4)["comment"] == "The Italian"
    italian = line(nested, 4)["moves"]
    assert italian[0]["comment"] is None
    assert facts(italian[0]) == mv("B", "f1", "c4")
    assert facts(line(nested, 5)["moves"][1]) == mv("N", "f3", "g5")

    assert sans(edges["moves"]) == ["d4", "d5", "c4", "e6"]
    assert stored(edges["moves"]) == {}
    assert stored_in_lines(edges) == {}
    assert lines(edges) == [
        (1, 0, 0, ["e4", "e5"]),
        (2, 0, 0, ["c4"]),
        (3, 0, 2, ["Nf3", "Nf6"]),
        (4, 3, 1, ["c5"]),
        (5, 0, 3, ["c6"]),
    ]
    assert line(edges, 2)["moves"][0]["nags"] == [5]
    assert line(edges, 4)["moves"][0]["nag"] == 1
    assert edges["result"] == "D"


def test_crlf_matches_its_lf_twin(tmp_path: Path) -> None:
    raw = (EDGE / "crlf.pgn").read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n")
    lf = tmp_path / "lf.pgn"
    lf.write_bytes(raw.replace(b"\r\n", b"\n"))
    crlf_games = load([EDGE / "crlf.pgn"], tmp_path).games
    lf_games = load([lf], tmp_path).games

    assert without_source(crlf_games) == without_source(lf_games)
    assert [g["source_offset"] for g in crlf_games] == event_offsets(raw)
    assert [s for s in strings(crlf_games) if "\r" in s] == []
    first, second = crlf_games
    assert first["event"] == "CRLF one"
    assert facts(first["moves"][9]) == mv("b", "b4", "c3", x="N", c=1)
    assert first["moves"][11]["comment"] == "A solid line"
    assert [m["clk"] for m in first["moves"][:3]] == [Decimal(180), Decimal(180), None]
    assert stored_in_lines(second) == {}
    assert lines(second) == [(1, 0, 2, ["e4", "Nc6"])]
    assert (second["mate"], second["result"]) == (True, "B")


def test_latin1_is_decoded(tmp_path: Path) -> None:
    raw = (EDGE / "latin1.pgn").read_bytes()
    latin, utf8 = load([EDGE / "latin1.pgn"], tmp_path).games
    assert [p["name"] for p in latin["players"]] == ["Müller", "Lefèvre"]
    assert latin["moves"][0]["comment"] == "très bien"
    # The second game is valid UTF-8 and stays so.
    assert [p["name"] for p in utf8["players"]] == ["Núñez", "Müller"]
    assert utf8["moves"][0]["comment"] == "déjà vu"

    second = event_offsets(raw)[1]
    twin = tmp_path / "utf8.pgn"
    twin.write_bytes(raw[:second].decode("latin-1").encode("utf-8") + raw[second:])
    assert without_source(load([twin], tmp_path).games) == without_source([latin, utf8])


def test_bom_is_skipped(tmp_path: Path) -> None:
    raw = (EDGE / "bom.pgn").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    games = load([EDGE / "bom.pgn"], tmp_path).games
    first = games[0]
    assert first["event"] == "BOM game"
    assert first["source_offset"] == 3
    assert [p["name"] for p in first["players"]] == ["Šarić", "Øst"]
    assert [s for s in strings(games) if "\ufeff" in s] == []
    twin = tmp_path / "no_bom.pgn"
    twin.write_bytes(raw[3:])
    assert without_source(load([twin], tmp_path).games) == without_source(games)


def test_bad_games_are_rejected_and_good_ones_kept(tmp_path: Path) -> None:
    path = EDGE / "bad.pgn"
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    offsets = event_offsets(raw)
    lake = load([path], tmp_path)

    assert [g["event"] for g in lake.games] == ["Good 1", "Good 2", "Good 3", "Good 4"]
    assert [g["source_offset"] for g in lake.games] == [offsets[i] for i in (0, 2, 5, 7)]
    assert sans(lake.games[1]["moves"]) == ["d4", "d5", "c4", "dxc4"]
    assert stored(lake.games[1]["moves"]) == {}
    assert facts(lake.games[1]["moves"][3]) == mv("p", "d5", "c4", x="P")
    assert lake.games[3]["game_id"] == "abcdEFGH"

    illegal, ambiguous, null, seirawan = lake.rejects
    assert [r["source_offset"] for r in lake.rejects] == [offsets[i] for i in (1, 3, 4, 6)]
    for reject, index in zip(lake.rejects, (1, 3, 4, 6), strict=True):
        assert reject["source_file"] == str(path)
        assert "\n" not in reject["reason"]
        end = offsets[index + 1] if index + 1 < len(offsets) else len(raw)
        assert reject["raw"].strip() == text[offsets[index] : end].strip()
    assert "illegal" in illegal["reason"].lower()
    assert "Nd5" in illegal["reason"]
    assert "ambiguous" in ambiguous["reason"].lower()
    assert "Ne2" in ambiguous["reason"]
    assert "--" in null["reason"] or "null" in null["reason"].lower()
    assert "Seirawan" in seirawan["reason"]  # a variant lichess does not play

    (record,) = lake.loads
    assert (record["games_seen"], record["games_written"], record["games_rejected"]) == (8, 4, 4)


def test_sloppy_move_tokens(tmp_path: Path) -> None:
    """Tokens pgn-reader cannot read as SAN are read as python-chess reads them, or the game is rejected:
    never a move silently dropped."""
    lake = load([EDGE / "tokens.pgn", EDGE / "unreadable.pgn"], tmp_path)
    long_algebraic, promotion, en_passant, noise, uci_castling = lake.games

    assert sans(long_algebraic["moves"]) == ["e2e4", "e7e5", "Bf1c4", "Nb8c6", "Qd1h5", "Ng8f6", "Qh5xf7+"]
    # None of them is the SAN the position gives: all stored, as read (`-` dropped, `++` read as `+`).
    assert stored(long_algebraic["moves"]) == dict(enumerate(sans(long_algebraic["moves"])))
    assert facts(long_algebraic["moves"][6]) == mv("Q", "h5", "f7", x="p")
    assert long_algebraic["mate"] is True

    assert [facts(m) for m in promotion["moves"]] == [
        mv("P", "a7", "a8", c=1, promote="Q"),
        mv("k", "a1", "b1"),
        mv("K", "h1", "g2"),
        mv("k", "b1", "c2"),
        mv("K", "g2", "f3"),
        mv("p", "b2", "b1", promote="n"),
    ]

    # Read as `a8=Q+` and `b1=N`: the SAN the position gives, so not stored.
    assert sans(promotion["moves"]) == ["a8=Q+", "Kb1", "Kg2", "Kc2", "Kf3", "b1=N"]
    assert stored(promotion["moves"]) == {}

    # The en passant capture is the last move: before, it was dropped and the game stored a ply short.
    assert en_passant["n_plies"] == 5
    assert facts(en_passant["moves"][4]) == mv("P", "e5", "d6", x="p")
    assert san(en_passant["moves"][4]) == (None, "exd6")

    # `,`, `+-` and `e.p.` name no square: noise, skipped.
    assert sans(noise["moves"]) == ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]
    assert stored(noise["moves"]) == {}

    # UCI castling (`e1g1`) names the king's squares, as python-chess reads it.
    assert facts(uci_castling["moves"][6]) == mv("K", "e1", "g1", castle="K")
    assert stored(uci_castling["moves"]) == {6: "e1g1"}

    # `Sf6` (German for Nf6) is no move python-chess can read at its start: the game is rejected.
    (german,) = lake.rejects
    assert german["reason"] == "unreadable move 'Sf6'"
    assert german["raw"].startswith('[Event "German piece letter"]')


def test_tag_values_as_meant(tmp_path: Path) -> None:
    """Unescaped quotes are read up to the line's last `"]` (as python-chess reads them), PGN escapes
    are undone, and a value missing its closing quote ends at its `]` rather than taking the line."""
    quotes, unclosed = load([EDGE / "quotes.pgn", EDGE / "unclosed_tag.pgn"], tmp_path).games
    assert quotes["event"] == 'Tournament "Championship" Finals'
    assert quotes["site"] == 'Club "Victory"'
    assert quotes["round"] == "Tournament \\"
    assert [p["name"] for p in quotes["players"]] == ['Smith, John "The King"', "Back\\slash"]
    assert sans(quotes["moves"]) == ["d4", "Nf6", "c4", "g6"]
    assert stored(quotes["moves"]) == {}

    assert unclosed["event"] == "Unclosed quote"
    assert dict(unclosed["headers"])["Annotator"] == "Krush, I"
    assert sans(unclosed["moves"]) == ["e4", "e5"]
    assert stored(unclosed["moves"]) == {}


def test_escape_line_after_the_tags(tmp_path: Path) -> None:
    """A `%` line between the tags and the movetext is skipped (PGN's escape mechanism), blank line
    after it included: the game keeps its moves."""
    (game,) = load([EDGE / "boundaries.pgn"], tmp_path).games
    assert game["event"] == "Escape line after the tags"
    assert sans(game["moves"]) == ["d4", "d5"]
    assert stored(game["moves"]) == {}


def test_headers_keep_what_columns_cannot(tmp_path: Path) -> None:
    """A repeated tag is kept under a numbered key (map keys must be unique, or DuckDB refuses the
    map); a column tag whose text the column cannot spell (`WhiteElo "?"`) is kept in `headers` too."""
    lake = load([EDGE / "repeated_tags.pgn"], tmp_path)
    (game,) = lake.games
    assert game["headers"] == [("Date", "2024.01.01"), ("Date (2)", "2024.01.02"), ("WhiteElo", "?")]
    assert [p["elo"] for p in game["players"]] == [None, 2100]
    query = f"select headers['Date (2)'] from read_parquet('{lake.path}/games/**/*.parquet')"
    assert duckdb.sql(query).fetchall() == [("2024.01.02",)]


def test_several_inputs_in_one_run(tmp_path: Path) -> None:
    first, second = EDGE / "en_passant.pgn", EDGE / "promotion.pgn"
    games = load([first, second], tmp_path).games
    assert sorted((g["source_file"], g["event"]) for g in games) == sorted(
        [
            (str(first), "En passant both colours"),
            (str(second), "Promotions both colours"),
            (str(second), "Knight underpromotion with check"),
            (str(second), "Rook underpromotion mates"),
        ]
    )


def test_missing_input_is_a_one_line_error(tmp_path: Path) -> None:
    assert_one_line_error(tmp_path / "no_such_file.pgn", tmp_path)


def assert_one_line_error(path: Path, tmp_path: Path) -> None:
    """Loading `path` fails with a non-zero exit and one stderr line naming it, no traceback."""
    run = run_module("loaders.pgn2parquet", [str(path), "--lake", str(tmp_path / "lake")])
    assert run.returncode != 0
    stderr = run.stderr
    assert "Traceback" not in stderr
    assert "\n" not in stderr.strip()
    assert str(path) in stderr


PNG_HEADER = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("random.bin", bytes([0x01, 0x02]) + random.Random(0).randbytes(4094)),
        ("image.png", PNG_HEADER + bytes(64)),
    ],
)
def test_unknown_format_is_a_one_line_error(name: str, content: bytes, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert_one_line_error(path, tmp_path)


def test_sample_is_two_zstd_frames() -> None:
    data = SAMPLE.read_bytes()
    first_frame = zstandard.ZstdDecompressor().decompressobj()
    first_frame.decompress(data)
    assert first_frame.unused_data


@pytest.fixture(scope="module")
def sample_pgn() -> bytes:
    return decompressed_sample()


@pytest.fixture(scope="module")
def sample_plain(sample_pgn: bytes, tmp_path_factory: pytest.TempPathFactory) -> Lake:
    tmp = tmp_path_factory.mktemp("sample")
    path = tmp / "sample.pgn"
    path.write_bytes(sample_pgn)
    return load([path], tmp)


def test_sample_games(sample_plain: Lake, sample_pgn: bytes) -> None:
    lake = sample_plain
    assert len(lake.games) == SAMPLE_GAMES
    assert lake.rejects == []
    (record,) = lake.loads
    assert (record["games_seen"], record["games_written"], record["games_rejected"]) == (
        SAMPLE_GAMES,
        SAMPLE_GAMES,
        0,
    )
    assert record["sha256"] == hashlib.sha256(sample_pgn).hexdigest()
    assert [g["source_offset"] for g in lake.games] == event_offsets(sample_pgn)
    assert (lake.path / "games" / "type=blitz" / "year=2025" / "month=5").is_dir()

    first = lake.games[0]
    assert first["game_id"] == "ENPo6ReH"
    assert (first["event"], first["site"], first["round"]) == (
        "Rated Blitz game",
        "https://lichess.org/ENPo6ReH",
        "-",
    )
    assert first["datetime"] == datetime(2025, 5, 1, 0, 0, 6, tzinfo=UTC)
    assert (first["type"], first["year"], first["month"]) == ("blitz", 2025, 5)
    assert (first["time_control"], first["tc_base"], first["tc_inc"]) == ("300+3", 300, 3)
    assert first["players"] == [
        {"name": "alanbrito4", "elo": 1028, "rating_diff": -5, "title": None},
        {"name": "Meridyan", "elo": 1132, "rating_diff": 5, "title": None},
    ]
    assert first["opening"] == {
        "eco": "C46",
        "verbose": "Three Knights Opening",
        "generic": "Three Knights Opening",
    }
    assert (first["result"], first["termination"]) == ("B", "Normal")
    assert (first["n_plies"], first["mate"]) == (42, True)
    assert (first["has_clock"], first["has_eval"]) == (True, False)
    assert first["moves"][0]["clk"] == Decimal(300)
    assert facts(first["moves"][8]) == mv("K", "e1", "g1", castle="K")
    assert san(first["moves"][41]) == (None, "Qg2#")
    assert first["moves"][41]["c"] is None
    headers = dict(first["headers"])
    assert (headers["Date"], headers["UTCDate"], headers["UTCTime"]) == (
        "2025.05.01",
        "2025.05.01",
        "00:00:06",
    )
    assert headers.keys().isdisjoint({"Event", "Site", "White", "BlackElo", "ECO", "TimeControl"})

    by_id = {g["game_id"]: g for g in lake.games}
    assert by_id["T89rZcXS"]["opening"]["generic"] == "English Opening"
    grunfeld = by_id["8qnGOgRl"]
    assert grunfeld["opening"] == {
        "eco": "D93",
        "verbose": "Grünfeld Defense: Three Knights Variation, Hungarian Variation",
        "generic": "Grünfeld Defense",
    }
    assert grunfeld["has_eval"] is True
    assert [m["eval_cp"] for m in grunfeld["moves"][:5]] == [17, 19, 11, 22, 10]
    assert (grunfeld["moves"][17]["nag"], grunfeld["moves"][17]["eval_cp"]) == (6, 2)


@pytest.mark.parametrize("form", ["zst", "bz2", "gz", "stdin"])
def test_sample_in_every_form(
    form: str, sample_plain: Lake, sample_pgn: bytes, sample_lake: Path, tmp_path: Path
) -> None:
    if form == "stdin":
        lake = load(["-"], tmp_path, stdin=sample_pgn)
        source, data = "-", sample_pgn
    elif form == "zst":  # the bundled file as it is: the run's lake of it
        lake = read_lake(sample_lake)
        source, data = str(SAMPLE), SAMPLE.read_bytes()
    else:
        path = tmp_path / f"sample.pgn.{form}"
        path.write_bytes(bz2.compress(sample_pgn) if form == "bz2" else gzip.compress(sample_pgn))
        lake = load([path], tmp_path)
        source, data = str(path), path.read_bytes()
    assert without_source(lake.games) == without_source(sample_plain.games)
    assert [g["source_offset"] for g in lake.games] == [g["source_offset"] for g in sample_plain.games]
    assert {g["source_file"] for g in lake.games} == {source}
    (record,) = lake.loads
    assert (record["games_seen"], record["games_written"], record["games_rejected"]) == (
        SAMPLE_GAMES,
        SAMPLE_GAMES,
        0,
    )
    assert record["sha256"] == hashlib.sha256(data).hexdigest()
