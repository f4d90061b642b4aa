"""Issue 26, the readers' side: numbers beyond their columns, memory that grew with a game's content,
python-chess's null moves, pzstd's skippable frames, and a loader given the other loader's format.

Each test runs the real commands on inputs built here, whose expected contents are known from how they were
built; python-chess is the oracle for what a null move is.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import chess
import chess.pgn
import pytest
import zstandard
from support import (
    json2parquet,
    load,
    make_games,
    one_line_error,
    read_games,
    read_records,
    read_rejects,
)

from warehouse.ingest.json_files import MAX_LINE_BYTES

# A game with a clock on each move (the clock of ply 1 set by each case), and a good game after it.
MOVES = "1. e4 {{ [%clk {clk}] }} e5 {{ [%clk 0:03:00] }} 2. Nf3 {{ {eval} }} Nc6 *"


def pgn_game(n: int, clk: str = "0:03:00", evaluation: str = "") -> str:
    site = f"https://lichess.org/abcd{n:04d}"
    return f'[Site "{site}"]\n[TimeControl "180+0"]\n\n{MOVES.format(clk=clk, eval=evaluation)}\n\n'


def bgn_line(n: int, clk: str = "0:03:00", evaluation: str = "") -> str:
    """The BGN JSON line of `pgn_game(n, clk, evaluation)` (`evaluation` a `[%eval x]` or nothing)."""
    notes = {"a": [{"eval": [evaluation[7:-1]]}]} if evaluation else {}
    moves = [
        {"p": "P", "f": "e2", "t": "e4", "a": [{"clk": [clk]}]},
        {"p": "p", "f": "e7", "t": "e5", "a": [{"clk": ["0:03:00"]}]},
        {"p": "N", "f": "g1", "t": "f3", **notes},
        {"p": "n", "f": "b8", "t": "c6"},
    ]
    return json.dumps({"id": f"abcd{n:04d}", "timeControl": "180+0", "result": "*", "moves": moves})


# (clock of ply 1, eval of ply 3): each beyond its column (clk decimal(9, 1), eval_cp int32, eval_mate int16).
BEYOND = [
    ("100000:00:00", ""),
    ("27777:46:40", ""),  # one second more than 99,999,999.9
    ("99999999999999999999:00:00", ""),  # beyond i64 too
    ("0:03:00", "[%eval 9999999999]"),
    ("0:03:00", "[%eval -21474836.48]"),
    ("0:03:00", "[%eval #99999]"),
    ("0:03:00", "[%eval #-32768]"),
]
EDGES = [("27777:46:39.9", "[%eval 21474836.47]"), ("0:03:00", "[%eval #-32767]")]


def test_numbers_beyond_their_columns_are_rejected_alike_from_pgn_and_json(tmp_path: Path) -> None:
    """A clock or an eval the lake cannot hold rejects its game with the same reason from PGN as from JSON
    (the whole load failed on such a clock, its neighbours lost); the games at the columns' edges load."""
    cases = BEYOND + EDGES
    pgn = tmp_path / "games.pgn"
    pgn.write_text("".join(pgn_game(n, clk, ev) for n, (clk, ev) in enumerate(cases)))
    lines = tmp_path / "games.jsonl"
    lines.write_text("".join(bgn_line(n, clk, ev) + "\n" for n, (clk, ev) in enumerate(cases)))
    reasons = {}
    for path, run in [(pgn, load), (lines, json2parquet)]:
        lake = tmp_path / f"lake-{path.suffix}"
        done = run(path, "--lake", lake) if run is json2parquet else run([path], lake)
        assert done.returncode == 0, done.stderr
        (record,) = read_records(lake)
        assert (record["games_seen"], record["games_written"]) == (len(cases), len(EDGES))
        rejects = sorted(read_rejects(lake), key=lambda r: r["source_offset"])
        assert [r["kind"] for r in rejects] == ["out_of_range"] * len(BEYOND)
        reasons[path.suffix] = [r["reason"].removeprefix(f"line {n + 1}: ") for n, r in enumerate(rejects)]
        kept = read_games(lake, ["game_id", "moves"])
        assert sorted(
            (g["moves"][0]["clk"], g["moves"][2]["eval_cp"], g["moves"][2]["eval_mate"]) for g in kept
        ) == [
            (Decimal("180.0"), None, -32767),
            (Decimal("99999999.9"), 2147483647, None),
        ]
    assert reasons[".pgn"] == reasons[".jsonl"]
    assert (
        reasons[".pgn"][0] == "clock '[%clk 100000:00:00]' at ply 1 is out of range (at most 27777:46:39.9)"
    )
    assert reasons[".pgn"][3].startswith("eval '[%eval 9999999999]' at ply 3 is out of range (")


def test_a_nag_beyond_a_byte_is_rejected_not_dropped(tmp_path: Path) -> None:
    """pgn-reader dropped `$256` silently (python-chess reads it); the JSON import refuses it."""
    path = tmp_path / "nags.pgn"
    path.write_text('[Event "n"]\n\n1. e4 $256 e5 *\n\n' + make_games(0, 1))
    lake = tmp_path / "lake"
    assert load([path], lake).returncode == 0
    (reject,) = read_rejects(lake)
    assert (reject["kind"], reject["reason"]) == ("out_of_range", "NAG '$256' is out of range ($0 to $255)")
    assert len(read_games(lake, ["game_id"])) == 1


NULL_MOVES = ["--", "Z0", "0000", "@@@@"]


@pytest.mark.parametrize("null", NULL_MOVES)
def test_python_chess_null_moves_are_null_move_rejects(null: str, tmp_path: Path) -> None:
    """Each null-move spelling python-chess reads (the oracle) is a `null_move` reject, at its ply; `0000`
    and `@@@@` were skipped by pgn-reader, the next move then illegal."""
    movetext = f"1. e4 e5 2. {null} Nc6 3. Nf3 *"
    oracle = chess.pgn.read_game(io.StringIO(movetext))
    assert oracle is not None and list(oracle.mainline_moves())[2] == chess.Move.null()
    path = tmp_path / "null.pgn"
    path.write_text(f'[Event "null"]\n\n{movetext}\n\n' + make_games(0, 1))
    lake = tmp_path / "lake"
    assert load([path], lake).returncode == 0
    (reject,) = read_rejects(lake)
    assert (reject["kind"], reject["reason"]) == ("null_move", "null move '--' at ply 3")


def skippable(data: bytes, magic: int = 0x184D2A50) -> bytes:
    """A zstd skippable frame (RFC 8878 §3.1.2) holding `data`."""
    return magic.to_bytes(4, "little") + len(data).to_bytes(4, "little") + data


def test_pzstd_output_and_skippable_frames_load(tmp_path: Path) -> None:
    """pzstd writes a skippable frame first (valid for `zstd -t`): it was refused as "unknown format".
    Skippable frames of any magic before and between frames, from PGN and from JSON."""
    halves = [make_games(0, 20), make_games(20, 20)]
    frames = [zstandard.ZstdCompressor().compress(h.encode()) for h in halves]
    built = tmp_path / "built.pgn.zst"
    built.write_bytes(skippable(b"x" * 9, 0x184D2A5F) + frames[0] + skippable(b"") + frames[1])
    inputs = [built]
    if pzstd := shutil.which("pzstd"):
        plain = tmp_path / "p.pgn"
        plain.write_text("".join(halves))
        subprocess.run([pzstd, "-q", "-p", "2", str(plain), "-o", str(tmp_path / "p.pgn.zst")], check=True)
        assert (tmp_path / "p.pgn.zst").read_bytes()[:4] == b"\x50\x2a\x4d\x18"
        inputs.append(tmp_path / "p.pgn.zst")
    for path in inputs:
        lake = tmp_path / f"lake-{path.name}"
        done = load([path], lake)
        assert done.returncode == 0, done.stderr
        ((record),) = read_records(lake)
        assert (record["compression"], record["games_written"]) == ("zstd", 40)
    lines = "".join(bgn_line(n) + "\n" for n in range(6)).encode()
    json_path = tmp_path / "games.jsonl.zst"
    json_path.write_bytes(skippable(b"pzstd") + zstandard.ZstdCompressor().compress(lines))
    done = json2parquet(json_path, "--lake", tmp_path / "json-lake")
    assert done.returncode == 0, done.stderr
    assert len(read_games(tmp_path / "json-lake", ["game_id"])) == 6


def test_each_loader_refuses_the_other_format_and_records_nothing(tmp_path: Path) -> None:
    """json2parquet given a PGN file rejected every game as `not_json` and recorded the file, so that
    pgn2parquet then said "already loaded": each loader now refuses the other's format in one line, and the
    right one loads it."""
    pgn = tmp_path / "games.pgn.zst"
    pgn.write_bytes(zstandard.ZstdCompressor().compress(make_games(0, 5).encode()))
    lake = tmp_path / "lake"
    one_line_error(json2parquet(pgn, "--lake", lake), "games.pgn.zst", "not JSON")
    assert read_records(lake) == []
    done = load([pgn], lake)
    assert done.returncode == 0 and "already loaded" not in done.stdout, done.stdout
    assert [r["games_written"] for r in read_records(lake)] == [5]
    for name, text in [
        ("lines.jsonl", bgn_line(1) + "\n"),
        ("array.json", "[\n" + bgn_line(1) + "]"),
        ("study.json", '{\n  "metadata": {}\n}\n'),
    ]:
        path = tmp_path / name
        path.write_text(text)
        one_line_error(load([path], lake), name, "JSON, not PGN")
    assert len(read_records(lake)) == 1


def variation_bomb(path: Path, variations: int) -> Path:
    """One game of `variations` sibling variations, zstd-compressed: a kilobyte or two."""
    with path.open("wb") as f, zstandard.ZstdCompressor(level=19).stream_writer(f) as z:
        z.write(b'[Event "v"]\n[Site "bomb"]\n\n1. e4 ')
        for _ in range(variations // 100_000):
            z.write(b"(1. d4) " * 100_000)
        z.write(b"*\n\n")
    return path


def test_a_game_of_two_million_variations_in_bounded_memory(tmp_path: Path) -> None:
    """A 1.5 KB `.zst` of one game of 2M sibling variations took 1.57 GB: it is rejected as too large,
    the load's peak RSS under 1 GB, its counts reconciled."""
    path = variation_bomb(tmp_path / "bomb.pgn.zst", 2_000_000)
    assert path.stat().st_size < 4096
    lake = tmp_path / "lake"
    run = load([path], lake, timeout=240)
    assert run.returncode == 0, run.stderr
    assert run.max_rss_mb < 1000, f"peak RSS {run.max_rss_mb:.0f} MB"
    (record,) = read_records(lake)
    assert (record["games_seen"], record["games_written"], record["games_rejected"]) == (1, 0, 1)
    (reject,) = read_rejects(lake)
    assert reject["kind"] == "too_large" and "moves, variations and NAGs" in reject["reason"]


def test_a_json_line_too_long_to_hold_is_rejected_in_bounded_memory(tmp_path: Path) -> None:
    """A gzip'd JSON of one 450 MB line between good ones (1.4 MB compressed) took 2.4 GB: the line is
    read past in chunks and rejected with its offset and length, the load's peak RSS under 1 GB."""
    first, last = bgn_line(1) + "\n", bgn_line(2) + "\n"
    head = b'{"id": "abcd0003", "moves": [], "comment": "'
    filler, chunks = b"x" * (1 << 20), 450
    path = tmp_path / "huge.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=1) as z:
        z.write(first.encode() + head)
        for _ in range(chunks):
            z.write(filler)
        z.write(b'"}\n' + last.encode())
    assert path.stat().st_size < 4 << 20
    lake = tmp_path / "lake"
    run = json2parquet(path, "--lake", lake)
    assert run.returncode == 0, run.stderr
    assert run.max_rss_mb < 1000, f"peak RSS {run.max_rss_mb:.0f} MB"
    (record,) = read_records(lake)
    assert (record["games_seen"], record["games_written"], record["games_rejected"]) == (3, 2, 1)
    (reject,) = read_rejects(lake)
    length = len(head) + chunks * len(filler) + 3
    assert (reject["source_offset"], reject["source_length"], reject["kind"]) == (
        len(first),
        length,
        "too_large",
    )
    assert reject["reason"] == f"line 2: longer than {MAX_LINE_BYTES} bytes: skipped"
    assert reject["raw_truncated"] and len(reject["raw"]) == 64 << 10
