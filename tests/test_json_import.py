"""JSON import: every move replayed and checked against the fields its line gives, hostile lines rejected
one by one with their line, counts reconciled, loads idempotent; the command's errors in one line; the
BGN archive read from S3 with a prefix glob; json2pgn."""

from __future__ import annotations

import bz2
import copy
import gzip
import io
import json
import os
import random
import re
import signal
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import chess.pgn
import numpy as np
import pyarrow as pa
import pytest
import zstandard
from s3_server import S3Server
from support import (
    DATA,
    SAMPLE,
    interrupted_publish,
    json2parquet,
    lake_counts,
    loaded,
    make_games,
    module,
    one_line_error,
    read_games,
    read_inputs,
    read_records,
    read_rejects,
    run_module,
    start,
    write_zst,
)

from warehouse import _core
from warehouse.exports.bgn_json import export_json
from warehouse.ingest import json_files
from warehouse.lake import Lake
from warehouse.lake.positions import reader_openings

SITE = "https://lichess.org/abcdEFGH"
# Scholar's mate, as the BGN export writes it.
GOOD: dict[str, Any] = {
    "id": "abcdEFGH",
    "site": SITE,
    "result": "W",
    "moves": [
        {"p": "P", "f": "e2", "t": "e4"},
        {"p": "p", "f": "e7", "t": "e5"},
        {"p": "B", "f": "f1", "t": "c4"},
        {"p": "n", "f": "b8", "t": "c6"},
        {"p": "Q", "f": "d1", "t": "h5"},
        {"p": "n", "f": "g8", "t": "f6"},
        {"p": "Q", "f": "h5", "t": "f7", "x": "p"},
    ],
}


def variant(change: dict[str, Any], ply: int | None = None, number: int = 1) -> str:
    """GOOD with `change` applied to its move `ply` (or to the game), under the lichess id `number`."""
    game = copy.deepcopy(GOOD)
    game["id"] = f"abcd{number:04d}"
    target = game if ply is None else game["moves"][ply]
    for key, value in change.items():
        if value is None:
            del target[key]
        else:
            target[key] = value
    return json.dumps(game)


# (line, reject kind, the reason after `line N: `)
DISAGREEING = [
    (
        variant({"x": "p"}, 0),
        "disagrees",
        "move 1 of the mainline disagrees with its replay: x p (replay: -)",
    ),
    (
        variant({"p": "P"}, 1),
        "disagrees",
        "move 2 of the mainline disagrees with its replay: p P (replay: p)",
    ),
    (
        variant({"x": None}, 6),
        "disagrees",
        "move 7 of the mainline disagrees with its replay: x - (replay: p)",
    ),
    (variant({"c": 1}, 4), "disagrees", "move 5 of the mainline disagrees with its replay: c 1 (replay: -)"),
    (variant({"p": "N"}, 2), "illegal_move", "illegal move 'Nf1c4' at ply 3"),
    (variant({"t": "e5"}, 0), "illegal_move", "illegal move 'e2e5' at ply 1"),
    (variant({"castle": "K"}, 2), "illegal_move", "illegal move 'O-O' at ply 3"),
]


def test_moves_that_disagree_with_their_replay_are_rejected(tmp_path: Path) -> None:
    lines = [json.dumps(GOOD)] + [line for line, _, _ in DISAGREEING]
    path = tmp_path / "games.jsonl"
    path.write_text("\n".join(lines) + "\n")
    done = json2parquet(path, "--lake", tmp_path / "lake")
    assert done.returncode == 0, done.stderr
    (record,) = read_records(tmp_path / "lake")
    assert (record["games_seen"], record["games_written"], record["games_rejected"]) == (8, 1, 7)
    rejects = read_rejects(tmp_path / "lake")
    starts = [sum(len(line) + 1 for line in lines[:n]) for n in range(len(lines))]
    got = sorted((r["source_offset"], r["kind"], r["reason"]) for r in rejects)
    want = [
        (starts[n + 1], kind, f"line {n + 2}: {reason}") for n, (_, kind, reason) in enumerate(DISAGREEING)
    ]
    assert got == want
    (game,) = read_games(tmp_path / "lake", ["game_id", "source_file", "source_offset"])
    assert game == {"game_id": "abcdEFGH", "source_file": str(path), "source_offset": 0}


HUGE = 100 << 20
HOSTILE: list[tuple[bytes, str, str]] = [
    (b"{not json", "not_json", "not JSON: Expecting property name enclosed in double quotes at column 2"),
    (b'{"moves": "e4"}', "bad_field", "moves is a string, not an array"),
    (b'{"moves": [{"p": 1, "f": "e2", "t": "e4"}]}', "bad_field", "moves[0].p 1 is not a piece letter"),
    (b'{"players": {"white": "x"}, "moves": []}', "bad_field", "players is an object, not an array"),
    (b'{"site": "x"}', "bad_field", "missing required field 'moves'"),
    (b'{"game_id": "x", "metadata": {"event": "e", "date": "d", "black": "b", "result": "*"}, "moves": []}',
     "bad_field", "missing required field 'metadata.white'"),
    (b"[" * 10_000 + b"]" * 10_000, "not_json",
     "nested deeper than the JSON reader goes (about 1,000 levels)"),
    (b'{"players": [{"ELO_blitz": 1' + b"0" * 30 + b'}], "moves": []}', "bad_field",
     "players[0].ELO_blitz 1" + "0" * 30 + " is out of range (0 to 2147483647)"),
    (variant({"c": 99999}, 0).encode(), "bad_field", "moves[0].c 99999 is out of range (1 to 32767)"),
    (variant({"a": [{"nag": 300}]}, 0).encode(), "bad_field",
     "moves[0].a[0].nag 300 is out of range (1 to 255)"),
    (b'{"event": "caf\xe9", "moves": []}', "not_json", "not UTF-8 (byte 14)"),
    (b'{"event": "\\ud800", "moves": []}', "bad_field", "a string holds a lone surrogate (\\ud800-\\udfff)"),
    (b'{"comment": "a } b", "moves": []}', "bad_field", "comment holds '}', which ends a PGN comment"),
    (b'{"moves": [], "comment": "' + b"x" * HUGE + b'"}', "too_large", ""),
]  # fmt: skip


def test_hostile_lines_are_rejected_one_by_one(tmp_path: Path) -> None:
    lines = [variant({}, None, 0).encode()] + [
        line
        for n, (bad, _, _) in enumerate(HOSTILE, start=1)
        for line in (bad, variant({}, None, n).encode())
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n\n   \n")  # blank lines are no games
    done = json2parquet(path, "--lake", tmp_path / "lake")
    assert done.returncode == 0, done.stderr
    (record,) = read_records(tmp_path / "lake")
    good = len(HOSTILE) + 1
    assert (record["games_seen"], record["games_written"], record["games_rejected"]) == (
        2 * good - 1,
        good,
        good - 1,
    )
    rejects = sorted(read_rejects(tmp_path / "lake"), key=lambda r: r["source_offset"])
    starts = [sum(len(line) + 1 for line in lines[:n]) for n in range(len(lines))]
    for n, ((_, kind, reason), reject) in enumerate(zip(HOSTILE, rejects, strict=True)):
        number = 2 * n + 2
        assert (reject["source_offset"], reject["source_length"]) == (
            starts[number - 1],
            len(lines[number - 1]) + 1,
        )
        assert reject["kind"] == kind
        assert "\n" not in reject["reason"] and reject["reason"].startswith(f"line {number}: ")
        if reason:
            assert reject["reason"] == f"line {number}: {reason}"
    assert len(read_games(tmp_path / "lake", ["game_id"])) == good


MOVE = {"p": "P", "f": "e2", "t": "e4"}


def game(move: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """A one-move game with `fields`, its move `MOVE` with `move`'s fields (an Ellipsis removes one)."""
    changed = {k: v for k, v in {**MOVE, **(move or {})}.items() if v is not ...}
    return {"moves": [changed], **fields}


ALT = {"p": "P", "f": "d2", "t": "d4"}
# Each refusal of a BGN line, in the words the load has always used (Python's json_games before the Rust
# core took BGN lines over), and a result no Python dict could hold, which crashed the load.
REFUSED: list[tuple[Any, str]] = [
    ([1], "the line is an array, not an object"),
    (game(id="abc"), "id 'abc' is neither a lichess id (8 letters or digits) nor 16 hex digits"),
    (game(id=5), "id is a number, not a string"),
    (game(result="1-0"), "result '1-0' is not one of W, B, D, *"),
    (game(result=["W"]), "result ['W'] is not one of W, B, D, *"),
    (game(datetime="2025-05-01 10:00:00"), "datetime '2025-05-01 10:00:00' is not YYYY-MM-DDThh:mm:ssZ"),
    (game(event="a\nb"), "event holds a line break, which a PGN tag cannot"),
    (game(players=[{}, {}, {}]), "players holds 3 entries, not 2"),
    (game(players=["x"]), "players[0] is a string, not an object"),
    (game(players=[{"handle": {"value": 5}}]), "players[0].handle.value is a number, not a string"),
    (game(players=[{"ELO_blitz": 1, "ELO_bullet": 2}]), "players[0] holds 2 ELO_ keys, not one"),
    (game(players=[{"ELO_blitz": 1500.0}]), "players[0].ELO_blitz is a number, not an integer"),
    (game(players=[{"ratingDiff": -(2**31)}]),
     "players[0].ratingDiff -2147483648 is out of range (-2147483647 to 2147483647)"),
    (game(opening=[]), "opening is an array, not an object"),
    (game(opening={"ECO": None}), "opening.ECO is null, not a string"),
    (game(fen=None), "fen is null, not a string"),
    ({"moves": ["e4"]}, "moves[0] is a string, not an object"),
    (game({"p": "X"}), "moves[0].p 'X' is not a piece letter"),
    (game({"f": "e9"}), "moves[0].f 'e9' is not a square"),
    (game({"t": ...}), "moves[0].t None is not a square"),
    (game({"castle": "O-O"}), "moves[0].castle 'O-O' is not K, Q, k or q"),
    (game({"promote": "QQ"}), "moves[0].promote 'QQ' is not a piece letter"),
    (game({"c": True}), "moves[0].c is a boolean, not an integer"),
    (game({"f": None, "castle": "K"}), "moves[0].castle: a drop (f null) has no castle"),
    (game({"f": None, "t": "z1"}), "moves[0].t 'z1' is not a square"),
    (game({"a": {}}), "moves[0].a is an object, not an array"),
    (game({"a": [1]}), "moves[0].a[0] is a number, not an object"),
    (game({"a": [{"eval": []}]}), "moves[0].a[0].eval is empty"),
    (game({"a": [{"eval": ["1.234"]}]}), "moves[0].a[0].eval[0] '1.234' is not an eval"),
    (game({"a": [{"clk": ["1:2:3"]}]}), "moves[0].a[0].clk[0] '1:2:3' is not a clock"),
    (game({"a": [{"comment": "}"}]}), "moves[0].a[0].comment holds '}', which ends a PGN comment"),
    (game({"a": [{"alt": {}}]}), "moves[0].a[0].alt is an object, not an array"),
    (game({"a": [{"alt": [[{**ALT, "x": 5}]]}]}), "moves[0].alt[0][0].x 5 is not a piece letter"),
    (game({"a": [{"precomment": "x"}]}), "moves[0] has a precomment but does not start a variation"),
    (game({"a": [{"alt": [[{**ALT, "a": [{"precomment": 5}]}]]}]}),
     "moves[0].alt[0][0].precomment is a number, not a string"),
]  # fmt: skip


def test_each_refusal_of_a_bgn_line_in_its_words(tmp_path: Path) -> None:
    path = tmp_path / "refused.json.zst"
    write_zst(path, "".join(json.dumps(doc) + "\n" for doc, _ in REFUSED))
    done = json2parquet(path, "--lake", tmp_path / "lake")
    assert done.returncode == 0, done.stderr
    (record,) = read_records(tmp_path / "lake")
    assert (record["games_seen"], record["games_rejected"]) == (len(REFUSED), len(REFUSED))
    rejects = sorted(read_rejects(tmp_path / "lake"), key=lambda r: r["source_offset"])
    assert [(r["kind"], r["reason"]) for r in rejects] == [
        ("bad_field", f"line {n}: {reason}") for n, (_, reason) in enumerate(REFUSED, start=1)
    ]


def test_loads_are_idempotent_and_bad_files_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "one.json"
    path.write_text(json.dumps(GOOD))
    assert json2parquet(path, "--lake", tmp_path / "lake").returncode == 0
    again = json2parquet(tmp_path / "in", "--lake", tmp_path / "lake")
    assert again.returncode == 0 and "already loaded" in again.stdout
    assert len(read_records(tmp_path / "lake")) == 1
    one_line_error(json2parquet(tmp_path / "missing.json", "--lake", tmp_path / "lake"), "missing.json")
    (tmp_path / "empty").mkdir()
    one_line_error(json2parquet(tmp_path / "empty", "--lake", tmp_path / "lake"), "no JSON file")
    (tmp_path / "broken.json.bz2").write_bytes(bz2.compress(json.dumps(GOOD).encode())[:30])
    one_line_error(json2parquet(tmp_path / "broken.json.bz2", "--lake", tmp_path / "lake"), "broken.json.bz2")
    assert len(read_records(tmp_path / "lake")) == 1


def test_s3_archive_imported_with_a_prefix_glob(
    s3_server: S3Server, sample_lake: Path, tmp_path: Path
) -> None:
    archive = s3_server.bucket("bgn-archive") + "/archive"
    exported = export_json(Lake.open(sample_lake), archive)
    done = json2parquet(f"{archive}/b*/2025/*/G.*.json.bz2", "--lake", tmp_path / "lake")
    assert done.returncode == 0, done.stderr
    records = read_inputs(tmp_path / "lake")
    assert sorted(r["input"] for r in records) == [
        f"s3://{path}" for path in sorted(exported.files) if path.split("/")[2].startswith("b")
    ]
    games = read_games(tmp_path / "lake", ["game_id", "type"])
    want = read_games(sample_lake, ["game_id", "type"])
    assert sorted(g["game_id"] for g in games) == sorted(
        g["game_id"] for g in want if g["type"] in ("blitz", "bullet")
    )
    assert sum(r["games_rejected"] for r in records) == 0
    # The prefix's files are one load, each input recorded with its checksum: a rerun adds nothing.
    assert len(read_records(tmp_path / "lake")) == 1
    assert all(r["sha256"] for r in records)
    again = json2parquet(f"{archive}/b*/2025/*/G.*.json.bz2", "--lake", tmp_path / "lake")
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already loaded") == len(records)
    assert len(read_records(tmp_path / "lake")) == 1


@pytest.mark.parametrize("in_memory", [True, False])
def test_the_pgn_made_of_the_inputs_is_a_scratch_file(
    in_memory: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The PGN a JSON import makes is read by the core from an anonymous file in memory, or, where the system
    has none (`scratch.IN_MEMORY` false: not Linux, or no /proc), from a file in the process's folder in the
    system's temporary folder that is deleted once read; either way the games load, and nothing is left
    there but that folder's lock, until the process exits."""
    from warehouse import scratch
    from warehouse.ingest.json_files import load_json

    monkeypatch.setattr(scratch, "IN_MEMORY", in_memory)
    monkeypatch.setattr(scratch, "_made", {})  # the process's folder made anew, in this test's tmp
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    path = tmp_path / "games.jsonl"
    path.write_text("".join(variant({}, None, n) + "\n" for n in range(5)))
    loaded = load_json(str(path), Lake.open(str(tmp_path / "lake")))
    assert (loaded.record.games_seen, loaded.record.games_written) == (5, 5)
    assert lake_counts(tmp_path / "lake") == (5, 5)
    left = list((tmp_path / "tmp").rglob("*"))
    if in_memory:
        assert not left
    else:
        (folder,) = scratch._made.values()
        assert sorted(left) == [Path(folder), Path(folder, scratch.LOCK)]


def test_json2pgn_writes_the_games_python_chess_reads(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + DISAGREEING[0][0] + "\n")
    done = run_module("loaders.json2pgn", [str(path), str(tmp_path / "out.pgn")])
    assert done.returncode == 0, done.stderr
    assert f"{path}: line 2: move 1 of the mainline" in done.stderr
    with open(tmp_path / "out.pgn") as f:
        game = chess.pgn.read_game(f)
        assert chess.pgn.read_game(f) is None
    assert game is not None and game.headers["Site"] == SITE
    assert [m.uci() for m in game.mainline_moves()] == [
        "e2e4",
        "e7e5",
        "f1c4",
        "b8c6",
        "d1h5",
        "g8f6",
        "h5f7",
    ]
    assert game.end().board().is_checkmate()


def test_a_killed_json2pgn_leaves_nothing_but_what_a_rerun_takes_over(tmp_path: Path) -> None:
    """json2pgn holds its inputs' PGN in memory and writes only its output: a SIGKILL at any moment leaves
    nothing in the system's temporary folder (its temporary lake used to stay there) and no output file, and
    a rerun writes the whole output (it takes over the hidden partial file)."""
    source = write_zst(tmp_path / "g.pgn.zst", make_games(0, 600, month=3) + make_games(600, 600, month=4))
    export_json(Lake.open(loaded([source], tmp_path / "pgn_lake")), tmp_path / "bgn")
    inputs = sorted(str(path) for path in (tmp_path / "bgn").glob("**/*.json.bz2"))
    whole = tmp_path / "whole.pgn"
    full = run_module("loaders.json2pgn", [*inputs, str(whole)])
    assert full.returncode == 0, full.stderr
    assert "1,200 games of 1,200 (0 refused)" in full.stderr
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    rng = random.Random(17)
    for attempt in range(3):
        out = tmp_path / f"out{attempt}.pgn"
        converter = start(
            module("loaders.json2pgn", *inputs, str(out)), env={**os.environ, "TMPDIR": str(scratch)}
        )
        time.sleep(rng.uniform(0.3, 0.9 * full.seconds))
        converter.stop(signal.SIGKILL)
        assert not list(scratch.iterdir()), attempt
        if not out.exists():  # else it was done before the kill
            rerun = run_module("loaders.json2pgn", [*inputs, str(out)])
            assert rerun.returncode == 0, rerun.stderr
        assert out.read_bytes() == whole.read_bytes(), attempt


def test_sigkill_leaves_whole_inputs_and_a_rerun_completes(tmp_path: Path) -> None:
    source = write_zst(tmp_path / "g.pgn.zst", make_games(0, 600, month=3) + make_games(600, 600, month=4))
    export_json(Lake.open(loaded([source], tmp_path / "pgn_lake")), tmp_path / "bgn")
    # The archive's files (one per speed and month), and their games counted from the lines.
    games = {
        str(path): bz2.decompress(path.read_bytes()).count(b"\n")
        for path in sorted((tmp_path / "bgn").glob("**/*.json.bz2"))
    }
    assert sum(games.values()) == 1200
    full = json2parquet(*games, "--lake", tmp_path / "timing")
    assert full.returncode == 0, full.stderr
    # The system's temporary folder, for the killed loads: none may leave a file outside its lake.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    rng = random.Random(13)
    for attempt in range(4):
        lake = tmp_path / f"lake{attempt}"
        command = module("loaders.json2parquet", *games, "--lake", str(lake))
        loader = start(command, env={**os.environ, "TMPDIR": str(scratch)})
        time.sleep(rng.uniform(0.3, 0.9 * full.seconds))
        loader.stop(signal.SIGKILL)
        assert not list(scratch.iterdir()), attempt
        done = {r["input"] for r in read_inputs(lake)} if (lake / "_loads").is_dir() else set()
        if not interrupted_publish(lake):  # else: committed, files being moved; the rerun finishes it
            n = sum(games[path] for path in done)
            assert lake_counts(lake) == (n, n), (attempt, done)
        rerun = json2parquet(*games, "--lake", lake)
        assert rerun.returncode == 0, rerun.stderr
        assert rerun.stdout.count("already loaded") == len(done)
        assert lake_counts(lake) == (1200, 1200)
        assert run_module("warehouse.maintenance.check", ["--lake", str(lake)]).returncode == 0


def test_compressions_and_local_globs(tmp_path: Path) -> None:
    (tmp_path / "in" / "sub").mkdir(parents=True)
    compressors = {
        "json": lambda b: b,
        "jsonl.zst": zstandard.ZstdCompressor().compress,
        "json.gz": gzip.compress,
    }
    for n, (suffix, compress) in enumerate(compressors.items(), start=1):
        text = "\n".join(variant({}, None, 10 * n + i) for i in range(3)) + "\n"
        (tmp_path / "in" / "sub" / f"g{n}.{suffix}").write_bytes(compress(text.encode()))
    (tmp_path / "in" / "notes.txt").write_text("not an input")
    done = json2parquet(tmp_path / "in" / "**" / "g*", "--lake", tmp_path / "lake")
    assert done.returncode == 0, done.stderr
    records = read_inputs(tmp_path / "lake")
    assert sorted((Path(r["input"]).name, r["compression"], r["games_written"]) for r in records) == [
        ("g1.json", "json", 3),
        ("g2.jsonl.zst", "zstd", 3),
        ("g3.json.gz", "gzip", 3),
    ]


def test_a_study_result_of_any_json_type_is_refused_in_words(tmp_path: Path) -> None:
    """A study's `metadata.result` that is an object or an array is refused with the other results' words
    (Python's import crashed on it: `unhashable type`), and the documents around it load."""
    metadata = {"event": "e", "date": "2024-01-01", "white": "a", "black": "b", "result": "1-0"}
    example = {"game_id": "abcdEFGH", "metadata": metadata, "moves": [{"san": "e4", "move_number": 1}]}
    bad = [copy.deepcopy(example) for _ in range(2)]
    bad[0]["metadata"]["result"], bad[1]["metadata"]["result"] = [], {"b": 1, "a": None}
    path = tmp_path / "studies.jsonl"
    path.write_text("".join(json.dumps(doc) + "\n" for doc in [example, *bad]))
    done = json2parquet(path, "--lake", tmp_path / "lake")
    assert done.returncode == 0, done.stderr
    rejects = sorted(read_rejects(tmp_path / "lake"), key=lambda r: r["source_offset"])
    assert [(r["kind"], r["reason"]) for r in rejects] == [
        ("bad_field", "line 2: metadata.result [] is not one of 1-0, 0-1, 1/2-1/2, *"),
        ("bad_field", "line 3: metadata.result {'b': 1, 'a': None} is not one of 1-0, 0-1, 1/2-1/2, *"),
    ]
    assert len(read_games(tmp_path / "lake", ["game_id"])) == 1


SIGNATURE_FIELDS = ("p", "f", "t", "x", "c", "castle", "promote")


def python_signature(doc: dict[str, Any]) -> str:
    """A BGN game's signature (its moves' fields) computed from what Python's `json.loads` reads: each
    line's moves `p.f.t.x.c.castle.promote`, space-separated, the lines `|`-separated in the order they
    start (the mainline, then each `alt` as it comes, depth first)."""
    lines: list[str] = []

    def line(moves: list[dict[str, Any]]) -> None:
        at = len(lines)
        lines.append("")
        fields = []
        for move in moves:
            fields.append(".".join("" if move.get(k) is None else str(move[k]) for k in SIGNATURE_FIELDS))
            for note in move.get("a") or []:
                for alt in note.get("alt") or []:
                    line(alt)
        lines[at] = " ".join(fields)

    line(doc["moves"])
    return "|".join(lines)


def mutated(line: bytes, rng: random.Random) -> bytes:
    """`line` with a field changed, dropped, repeated (a repeated key: the last one counts), written with
    escapes, or a few bytes broken."""
    doc = json.loads(line)
    moves = doc["moves"]
    choice = rng.randrange(6)
    if choice == 0 and moves:  # a field of a move changed or dropped
        move = rng.choice(moves)
        key = rng.choice(SIGNATURE_FIELDS)
        move[key] = rng.choice([None, "P", "q", "e4", "K", 1, 3, "", "Z"])
    elif choice == 1 and moves:  # a move's key repeated: an earlier value that the later one replaces
        text = json.dumps(doc)
        start = text.index('"moves"')
        at = text.find('{"p": ', rng.randrange(start, len(text)))
        if at < 0:
            at = text.index('{"p": ', start)
        return (text[: at + 1] + '"p": "X", "x": 7, ' + text[at + 1 :]).encode()
    elif choice == 2:  # every string escaped (each one read into the arena, not borrowed)
        text = json.dumps(doc)
        return re.sub(r'"([A-Za-z])', lambda m: f'"\\u{ord(m.group(1)):04x}', text).encode()
    elif choice == 3:  # a few bytes broken
        data = bytearray(line)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(data))
            data[at : at + rng.randrange(3)] = rng.choice([b"{", b"]", b'"', b",", b"\\", b"\xff", b"", b"1"])
        return bytes(data)
    elif choice == 4:  # a number beyond 64 bits, a fraction, a surrogate
        doc[rng.choice(["x", "round", "event"])] = rng.choice([10**30, 1.5, "\ud800", [1, {"a": None}]])
        return json.dumps(doc).encode()
    return json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode()


def stored_signature(game: dict[str, Any]) -> str:
    """A game's moves as the lake holds them, written as `python_signature` writes a line's: the mainline,
    then each variation in the lake's order."""
    lines = [game["moves"], *(line["moves"] for line in game["variations"] or [])]
    return "|".join(
        " ".join(".".join("" if move[k] is None else str(move[k]) for k in SIGNATURE_FIELDS) for move in line)
        for line in lines
    )


def test_bgn_lines_read_real_and_mutated_lines_as_pythons_json(tmp_path: Path) -> None:
    """BGN lines of real games (the sample, the edge cases' variations and comments), exported, then
    mutated, read by `_core.BgnReader`: a line is refused as not JSON exactly when Python's `json.loads`
    cannot read it (NaN and the like aside, which RFC 8259 has not), a lone surrogate is refused in words,
    every real line is written, and each game written has the id and the moves (every field of every move,
    every line) that Python reads in its line."""
    lake = loaded([SAMPLE, DATA / "edge" / "variations.pgn", DATA / "edge" / "annotations.pgn"],
                  tmp_path / "lake")  # fmt: skip
    export_json(Lake.open(lake), tmp_path / "bgn", compression="zst")
    lines = [
        line
        for path in sorted((tmp_path / "bgn").glob("**/*.json.zst"))
        for line in zstandard.ZstdDecompressor().decompress(path.read_bytes(), 1 << 30).splitlines()
    ]
    real = len(lines)
    assert real > 400 and any(b'"alt"' in line for line in lines)
    rng = random.Random(32)
    lines += [mutated(rng.choice(lines), rng) for _ in range(3000)]
    data = b"".join(line + b"\n" for line in lines)
    reader = _core.BgnReader("lines.jsonl", openings=reader_openings())
    written, refused, studies = reader.block(data, 0, len(data), False, 1 << 20, 1 << 16, 0)
    starts = np.cumsum([0] + [len(line) + 1 for line in lines])
    number_at = {int(start): number for number, start in enumerate(starts[:-1], start=1)}
    games = {
        number_at[game["source_offset"]]: game
        for _, batch in reader.finish()
        for game in pa.table(batch).select(["source_offset", "game_id", "moves", "variations"]).to_pylist()
    }
    refusals = {line: (kind, reason) for _, _, line, kind, reason in refused}
    assert not studies and written == len(games) and len(games) + len(refusals) == len(lines)
    assert all(number in games for number in range(1, real + 1))
    seen: Counter[str] = Counter()
    for number, line in enumerate(lines, start=1):
        try:
            doc = json.loads(line.decode(), parse_constant=lambda c: 1 / 0)
        except UnicodeDecodeError as e:
            assert refusals[number] == ("not_json", f"not UTF-8 (byte {e.start})")
            seen["not UTF-8"] += 1
            continue
        except (ValueError, ZeroDivisionError):
            assert refusals[number] == ("not_json", None)
            seen["not JSON"] += 1
            continue
        if re.search(r"[\ud800-\udfff]", json.dumps(doc, ensure_ascii=False)):
            assert refusals[number] == ("bad_field", "a string holds a lone surrogate (\\ud800-\\udfff)")
            seen["surrogate"] += 1
        elif number in games:
            game = games[number]
            assert game["game_id"] == doc.get("id", game["game_id"])
            assert stored_signature(game) == python_signature(doc)
            seen["written"] += 1
        else:
            kind, reason = refusals[number]
            assert kind in ("bad_field", "disagrees", "illegal_move"), (kind, reason)
            seen[kind] += 1
    assert min(seen.values()) > 5 and seen["written"] > len(lines) // 2, seen


@pytest.mark.parametrize("block", [7, 64, 1000])
def test_blocks_of_lines_are_the_input_at_their_offsets_and_numbers(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`json_files.texts` over blocks smaller and larger than the lines: each block's lines are the input's
    bytes at its offset, its first line numbered as the input counts it; a line over the limit comes as a
    `Document` of its first bytes at its offset; every byte is in exactly one of them."""
    monkeypatch.setattr(json_files, "BLOCK_BYTES", block)
    rng = random.Random(block)
    lines = [b"x" * rng.choice([0, 1, 5, 30, 200, 900]) for _ in range(300)] + [b"y" * 5000, b"z" * 10]
    data = b"\n".join(lines)  # the last line without a line break
    covered = 0
    for text in json_files.texts(io.BytesIO(data), 4000):
        if isinstance(text, json_files.Document):
            assert data.startswith(text.data, text.offset) and len(text.data) > 4000 and text.length == 5001
            length = text.length
        else:
            length = text.end - text.start
            assert text.data[text.start : text.end] == data[text.offset : text.offset + length]
        assert text.offset == covered and text.line == data[: text.offset].count(b"\n") + 1
        covered += length
    assert covered == len(data)
