"""Hostile runs of the export commands, through the real CLIs (bounded in time): interrupted and killed
exports leave no partial output and say what they left; variations nested 100,000 deep export whole;
bad options and paths are one line and exit 2, before any work."""

from __future__ import annotations

import bz2
import io
import json
import os
import re
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pyarrow.parquet as pq
import pytest
from support import (
    Run,
    lichess_id,
    load,
    loaded,
    make_games,
    module,
    one_line_error,
    python,
    read_games,
    run_command,
    run_module,
    start,
    tree,
    write_zst,
)

from warehouse import connect
from warehouse.export_json import export_json
from warehouse.lake import Lake

GAMES = 2000
FILES = {"json": "out", "pgn": "out.pgn.bz2"}  # bz2: the slowest, the widest window to interrupt
MODULES = {"json": "loaders.parquet2json", "pgn": "loaders.parquet2pgn"}
EXTRA = {"json": ["--games-per-file", "200"], "pgn": []}  # many JSON files: some done when interrupted
# Every legal first move, in turn: nested lines that differ from their neighbours.
FIRSTS = [chess.Board().san(move) for move in chess.Board().legal_moves]
UCI = {chess.Board().san(move): move.uci() for move in chess.Board().legal_moves}


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GAMES games of May 2025, all speeds but correspondence and unknown."""
    tmp = tmp_path_factory.mktemp("lake")
    run = load([write_zst(tmp / "games.pgn.zst", make_games(0, GAMES))], tmp / "lake")
    assert run.returncode == 0, run.stderr
    return tmp / "lake"


def export(kind: str, out: Path, lake: Path, *extra: str, timeout: float = 60) -> Run:
    return run_module(MODULES[kind], [str(out), "--lake", str(lake), *extra], timeout=timeout)


def exported_games(kind: str, out: Path) -> int:
    if kind == "json":
        return sum(len(bz2.decompress(p.read_bytes()).splitlines()) for p in out.rglob("*.json.bz2"))
    text = bz2.decompress(out.read_bytes()).decode()
    return text.count("\n[Event ") + text.startswith("[Event ")


def leftovers(folder: Path, out: Path) -> list[str]:
    """What is in `folder` besides `out`: staging folders, temporary files."""
    return sorted(p.name for p in folder.iterdir() if p != out)


# --- item 9: an interrupted or killed export leaves no partial output; a rerun completes it ---


@pytest.fixture(scope="module")
def full_seconds(lake: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    """How long a full export of `lake` takes, each way."""
    tmp = tmp_path_factory.mktemp("full")
    runs = {kind: export(kind, tmp / FILES[kind], lake, *EXTRA[kind]) for kind in MODULES}
    assert all(run.returncode == 0 for run in runs.values()), runs
    return {kind: run.seconds for kind, run in runs.items()}


@pytest.mark.parametrize("kind", ["json", "pgn"])
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_interrupted_export(
    kind: str, how: signal.Signals, lake: Path, full_seconds: dict[str, float], tmp_path: Path
) -> None:
    """Interrupted half-way through (several files written, others open, queries and compression running):
    `OUT` is absent (never a plausible partial archive), Ctrl-C says so in one line (exit 130), and a rerun,
    over whatever a kill left beside `OUT`, writes every game and leaves nothing else."""
    out = tmp_path / FILES[kind]
    exporting = start(module(MODULES[kind], str(out), "--lake", str(lake), *EXTRA[kind]))
    # Once the export writes (its staging folder or temporary file exists), a little later.
    staged = tmp_path / (f".{out.name}.partial" if kind == "json" else f".{out.name}.tmp")
    while not staged.exists() and exporting.running():
        time.sleep(0.01)
    time.sleep(0.15 * full_seconds[kind])
    stopped = exporting.stop(how)
    assert stopped.returncode != 0, "finished before the signal: the lake is too small for this machine"
    assert not out.exists(), "a partial export is visible"
    if how == signal.SIGINT:
        assert stopped.returncode == 130, stopped.stderr
        assert stopped.stderr.strip() == f"interrupted: nothing was written to {out}", stopped.stderr
        assert leftovers(tmp_path, out) == []
    rerun = export(kind, out, lake, *EXTRA[kind])
    assert rerun.returncode == 0, rerun.stderr
    assert exported_games(kind, out) == GAMES
    assert leftovers(tmp_path, out) == [], "staging or temporary files left behind"


# --- item 11: variations nested deeper than Python's recursion limit export whole ---


def nested_pgn(depth: int) -> str:
    """A game whose first move has an alternative, which has one, … `depth` lines deep."""
    lines = "".join(f"( 1. {FIRSTS[k % len(FIRSTS)]} " for k in range(depth))
    return f'[Event "deep"]\n[Result "*"]\n\n1. e4 {lines}{")" * depth} e5 2. Nf3 *\n\n'


def parse_json(text: str) -> Any:
    """JSON without recursion (json.loads stops at ~1,000 levels): the exports nest lines as deep as
    the source does."""
    stack: list[Any] = [[]]
    keys: list[str | None] = [None]
    for token in re.findall(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|[^\s,:\[\]{}"]+|:', text):
        if token in "[{":
            stack.append([] if token == "[" else {})
            keys.append(None)
        elif token in "]}":
            value = stack.pop()
            keys.pop()
            add(stack, keys, value)
        elif token == ":":
            keys[-1] = stack[-1].popitem()[0]  # the key went in as a value: take it back
        else:
            add(stack, keys, json.loads(token))
    return stack[0][0]


def add(stack: list[Any], keys: list[str | None], value: Any) -> None:
    if isinstance(stack[-1], list):
        stack[-1].append(value)
    elif keys[-1] is None:
        stack[-1][value] = None  # a key, until its ":"
    else:
        stack[-1][keys[-1]] = value
        keys[-1] = None


def json_tree(moves: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """The game tree of a BGN `moves` array, depth first: (from+to, number of children) per move. The
    children of a move are the next move and its alternatives: the lines in its `alt`, and theirs on
    their first moves (a line opening inside a line, before its second move, replaces that first move)."""

    def children(line: list[dict[str, Any]], index: int) -> list[tuple[list[dict[str, Any]], int]]:
        if index >= len(line):
            return []
        found = [(line, index)]
        stack = list(reversed(alts(line[index])))
        while stack:
            alt = stack.pop()
            found.append((alt, 0))
            stack.extend(reversed(alts(alt[0])))
        return found

    tree: list[tuple[str, int]] = []
    stack = list(reversed(children(moves, 0)))
    while stack:
        line, index = stack.pop()
        below = children(line, index + 1)
        tree.append((line[index]["f"] + line[index]["t"], len(below)))
        stack.extend(reversed(below))
    return tree


def alts(move: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [line for a in move.get("a", []) for line in a.get("alt", [])]


def chess_tree(game: chess.pgn.Game) -> list[tuple[str, int]]:
    """The same walk over python-chess's reading of a game."""
    tree: list[tuple[str, int]] = []
    stack = list(reversed(game.variations))
    while stack:
        node = stack.pop()
        tree.append((node.move.uci()[:4], len(node.variations)))
        stack.extend(reversed(node.variations))
    return tree


def generated_tree(depth: int) -> list[tuple[str, int]]:
    """The tree `nested_pgn(depth)` describes, from how it was built (python-chess reads a 100,000-deep
    game in ~7 s: the generator is the oracle there). Each line opens before its first move's successor,
    so each replaces the move before it: all are alternatives to 1. e4, in order."""
    lines = [(UCI[FIRSTS[k % len(FIRSTS)]], 0) for k in range(depth)]
    return [("e2e4", 1), ("e7e5", 1), ("g1f3", 0), *lines]


def deep_exports(depth: int, tmp_path: Path) -> tuple[list[tuple[str, int]], str, list[dict[str, Any]]]:
    """Loads `nested_pgn(depth)` and exports it both ways; returns the source's tree (from the generator),
    the PGN export's text and the JSON export's moves."""
    source = tmp_path / "deep.pgn"
    source.write_text(nested_pgn(depth))
    run = load([source], tmp_path / "lake")
    assert run.returncode == 0 and "1 written" in run.stdout, run.stdout + run.stderr
    for kind in ("json", "pgn"):
        run = export(kind, tmp_path / FILES[kind], tmp_path / "lake")
        assert run.returncode == 0, run.stderr[-2000:]
    (archive,) = (tmp_path / "out").rglob("*.json.bz2")
    (line,) = bz2.decompress(archive.read_bytes()).decode().splitlines()
    pgn = bz2.decompress((tmp_path / FILES["pgn"]).read_bytes()).decode()
    return generated_tree(depth), pgn, parse_json(line)["moves"]


def test_variations_2000_deep_export_whole(tmp_path: Path) -> None:
    """python-chess reads the source, the PGN export and the JSON export's tree the same: every level."""
    expected, pgn, moves = deep_exports(2000, tmp_path)
    source = chess_tree(chess.pgn.read_game(io.StringIO(nested_pgn(2000))))
    assert source == expected
    assert chess_tree(chess.pgn.read_game(io.StringIO(pgn))) == source
    assert json_tree(moves) == source


def test_variations_100000_deep_export_whole(tmp_path: Path) -> None:
    expected, pgn, moves = deep_exports(100_000, tmp_path)
    assert json_tree(moves) == expected
    # The PGN's moves in order, each line opening with `(`: the same tree, read without python-chess.
    sans = re.findall(r"\(\s*1\.\s*(\S+)", pgn)
    assert [UCI[san] for san in sans] == [move for move, _ in expected[3:]]
    assert pgn.count("(") == pgn.count(")") == 100_000


# --- item 12: options and paths are one line and exit 2, before any work ---


@pytest.mark.parametrize("kind", ["json", "pgn"])
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--type", "Blitz"], "'Blitz' is not a speed"),
        (["--month", "13"], "13 is not a month"),
        (["--month", "-1"], "-1 is not a month"),
        (["--year", "99999999999999999999"], "is not a year"),
        (["--year", "2019"], "no partition matches --year 2019"),
        (["--type", "correspondence"], "no partition matches --type correspondence"),
        (["--type", "classical", "--month", "4"], "it holds types"),
        (["--year", "x"], "'x' is not a whole number"),
    ],
    ids=[
        "type-case",
        "month-13",
        "month-negative",
        "year-huge",
        "year-absent",
        "type-absent",
        "combined",
        "nan",
    ],
)
def test_bad_selection_is_one_line(
    kind: str, args: list[str], needle: str, lake: Path, tmp_path: Path
) -> None:
    out = tmp_path / FILES[kind]
    one_line_error(export(kind, out, lake, *args), needle)
    assert list(tmp_path.iterdir()) == [], "output made for a refused export"


@pytest.mark.parametrize("value", ["0", "-5", "1e3", "9" * 5000])
def test_games_per_file_out_of_range(value: str, lake: Path, tmp_path: Path) -> None:
    one_line_error(export("json", tmp_path / "out", lake, "--games-per-file", value), "--games-per-file")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["json", "pgn"])
def test_existing_outputs_are_refused_before_any_work(kind: str, lake: Path, tmp_path: Path) -> None:
    """An existing directory (even empty) for PGN, a file for JSON: refused at once, nothing left."""
    out = tmp_path / FILES[kind]
    if kind == "pgn":
        out.mkdir()
        needle = "already exists"
    else:
        out.write_text("not a directory")
    run = export(kind, out, lake)
    one_line_error(run, str(out), *([needle] if kind == "pgn" else ["not a directory"]))
    assert run.seconds < 10
    assert leftovers(tmp_path, out) == [], "temporary files left behind"


@pytest.mark.parametrize("kind", ["json", "pgn"])
def test_non_utf8_output_name(kind: str, lake: Path, tmp_path: Path) -> None:
    name = os.fsencode(tmp_path) + b"/out\xff" + (b".pgn" if kind == "pgn" else b"")
    one_line_error(run_module(MODULES[kind], [name, "--lake", str(lake)]), "not a UTF-8 name")
    assert list(tmp_path.iterdir()) == []


def test_bugs_keep_their_traceback(lake: Path, tmp_path: Path) -> None:
    """Only the project's user errors are one line: a ValueError from a bug is not disguised as one."""
    code = (
        "import sys, warehouse.export_json as e\n"
        "def bug(*a, **k): raise ValueError('a bug')\n"
        "e.json_lines = bug\n"
        "from loaders import parquet2json\n"
        "sys.exit(parquet2json.main(sys.argv[1:]))\n"
    )
    run = run_command(python("-c", code, str(tmp_path / "out"), "--lake", str(lake)))
    assert run.returncode == 1 and "Traceback" in run.stderr and "a bug" in run.stderr, run.stderr
    assert list(tmp_path.iterdir()) == [], "the failed export's staging was not dropped"


# --- issue 26, item 1: every file of the lake is exported, whatever its input was named ---

# Names whose stem starts with a character file names cannot keep, or with `_` or `.` themselves.
ODD_NAMES = ["Ödön.pgn", "été.pgn.zst", "_under.pgn", ".hidden.pgn", "(1) copy.pgn", "-dash.pgn"]
ODD_GAMES = 40


def game_ids(first: int, count: int) -> set[str]:
    """The ids of `make_games(first, count)`: its lichess ids."""
    return {lichess_id(n) for n in range(first, first + count)}


def exported_ids(kind: str, out: Path) -> list[str]:
    """The game ids an export wrote, one per game (repeats kept)."""
    if kind == "pgn":
        return re.findall(r'\[Site "https://lichess.org/([^"]+)"\]', out.read_text())
    if kind == "json":
        lines = [
            line for p in out.rglob("*.json.bz2") for line in bz2.decompress(p.read_bytes()).splitlines()
        ]
        return [json.loads(line)["site"].rsplit("/", 1)[1] for line in lines]
    return [json.loads(p.read_text())["metadata"]["site"].rsplit("/", 1)[1] for p in out.iterdir()]


def export_all_ways(lake: Path, tmp_path: Path) -> dict[str, list[str]]:
    """The ids each export (PGN, BGN JSON, study JSON) wrote of `lake`; each must exit 0."""
    outs = {"pgn": tmp_path / "all.pgn", "json": tmp_path / "bgn", "study": tmp_path / "study"}
    runs = {
        "pgn": export("pgn", outs["pgn"], lake),
        "json": export("json", outs["json"], lake),
        "study": export("json", outs["study"], lake, "--format", "study"),
    }
    for kind, run in runs.items():
        assert run.returncode == 0, (kind, run.stderr)
    return {kind: exported_ids(kind, out) for kind, out in outs.items()}


def test_inputs_with_odd_names_export_whole(tmp_path: Path) -> None:
    """Inputs named with a leading non-ASCII letter, `_`, `.`, `(`, `-`, beside a plain one: the lake's
    file names never start with `_` or `.`, and every export writes every game once."""
    sources = []
    for n, name in enumerate([*ODD_NAMES, "normal.pgn"]):
        text = make_games(n * ODD_GAMES, ODD_GAMES)
        sources.append(write_zst(tmp_path / name, text) if name.endswith(".zst") else tmp_path / name)
        if not name.endswith(".zst"):
            sources[-1].write_text(text)
    lake = tmp_path / "lake"
    run = load(sources, lake)
    assert run.returncode == 0, run.stderr
    names = [p.name for p in (lake / "games").rglob("*") if p.is_file()]
    names += [p.name for p in (lake / "plies").rglob("*") if p.is_file()]
    assert names and not [n for n in names if n[0] in "_."], names
    want = game_ids(0, ODD_GAMES * (len(ODD_NAMES) + 1))
    for kind, ids in export_all_ways(lake, tmp_path).items():
        assert len(ids) == len(want) and set(ids) == want, kind


def old_style_load(source: Path, lake: Path, stem: str) -> None:
    """Loads `source` as earlier versions named a stem that began with an odd character: `_…` files."""
    code = (
        "import sys, warehouse.load as load\n"
        f"load.input_stem = lambda path: {stem!r}\n"
        "from loaders.pgn2parquet import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    run = run_command(python("-c", code, str(source), "--lake", str(lake)))
    assert run.returncode == 0, run.stderr


def test_an_old_lake_of_underscore_files_is_read_whole(tmp_path: Path) -> None:
    """A lake written before the fix holds `_d_n-….parquet` files (from `Ödön.pgn`): the exports, the
    views and the book read them all."""
    lake = tmp_path / "lake"
    (tmp_path / "Ödön.pgn").write_text(make_games(0, 100))
    old_style_load(tmp_path / "Ödön.pgn", lake, "_d_n")
    (tmp_path / "normal.pgn").write_text(make_games(100, 100))
    assert load([tmp_path / "normal.pgn"], lake).returncode == 0
    assert any(p.name.startswith("_d_n-") for p in (lake / "games").rglob("*.parquet"))
    want = game_ids(0, 200)
    for kind, ids in export_all_ways(lake, tmp_path).items():
        assert len(ids) == len(want) and set(ids) == want, kind
    con = connect(lake)
    assert con.sql("select count(*), count(distinct game_id) from games").fetchall() == [(200, 200)]
    ((plies,),) = con.sql("select count(*) from plies").fetchall()
    assert plies == sum(g["n_plies"] for g in read_games(lake, ["n_plies"]))


def test_json2pgn_of_an_input_named_with_an_accent(tmp_path: Path) -> None:
    """`été.jsonl`: every game is converted (the temporary lake's files were named `_t_…` and skipped)."""
    lake = loaded([write_zst(tmp_path / "src.pgn.zst", make_games(0, 105))], tmp_path / "lake")
    export_json(Lake.open(lake), tmp_path / "bgn")
    source = tmp_path / "été.jsonl"
    source.write_bytes(
        b"".join(bz2.decompress(p.read_bytes()) for p in sorted((tmp_path / "bgn").rglob("*.bz2")))
    )
    out = tmp_path / "out.pgn"
    run = run_module("loaders.json2pgn", [str(source), str(out)])
    assert run.returncode == 0, run.stderr
    assert f"{out}: 105 games of 105 (0 refused)" in run.stderr
    assert sorted(exported_ids("pgn", out)) == sorted(game_ids(0, 105))


def test_an_export_reconciles_with_the_records(tmp_path: Path) -> None:
    """A file the records list is missing, or holds fewer games than they say: every export refuses in one
    line, writing nothing (it used to export what was left, exit 0)."""
    sources = [write_zst(tmp_path / f"part-{i}.pgn.zst", make_games(i * 60, 60)) for i in range(2)]
    lake = loaded(sources, tmp_path / "lake")
    first, second = sorted((lake / "games").rglob("part-0-*.parquet"))[:2]
    missing, short = tmp_path / "missing", tmp_path / "short"
    shutil.copytree(lake, missing)
    (missing / first.relative_to(lake)).unlink()
    shutil.copytree(lake, short)
    shutil.copy(second, short / first.relative_to(lake))  # another file's games: a different count
    assert pq.read_metadata(first).num_rows != pq.read_metadata(second).num_rows
    outs = tmp_path / "outs"
    outs.mkdir()
    for damaged, needle in (
        (missing, "listed by a committed record but not in the lake"),
        (short, "games read"),
    ):
        for kind, extra in (("pgn", []), ("json", []), ("json", ["--format", "study"])):
            out = outs / (FILES[kind] if not extra else "study")
            one_line_error(export(kind, out, damaged, *extra), str(first.relative_to(lake)), needle)
            assert list(outs.iterdir()) == [], "output left by a refused export"


# --- issue 26, items 10 and 11: every output appears whole or not at all, never inside the lake ---

E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def writers(lake: Path, folder: Path) -> dict[str, tuple[list[str], Path]]:
    """Every command that writes an output of its own from `lake`, by name: its arguments to write into
    `folder`, and the path its messages name (a prefix of all it writes)."""
    into = {
        "pgn": ("loaders.parquet2pgn", ["{out}.pgn"]),
        "bgn": ("loaders.parquet2json", ["{out}"]),
        "study": ("loaders.parquet2json", ["{out}", "--format", "study"]),
        "study-lines": ("loaders.parquet2json", ["{out}.jsonl", "--format", "study", "--lines"]),
        "book": ("loaders.book", ["{out}.tsv"]),
        "graph": ("loaders.opening_graph", ["{out}.dot", "--min-share", "0.001", "--no-svg"]),
        "positions": ("loaders.positions", [E4, "--pgn", "{out}.pgn"]),
    }
    out = folder / "out"
    return {
        kind: ([name, *(a.format(out=out) for a in args), "--lake", str(lake)], out)
        for kind, (name, args) in into.items()
    }


@pytest.fixture(scope="module")
def small_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 games, to copy where a test may change the lake."""
    tmp = tmp_path_factory.mktemp("small")
    return loaded([write_zst(tmp / "games.pgn.zst", make_games(0, 300))], tmp / "lake")


@pytest.mark.parametrize("kind", list(writers(Path("lake"), Path("out"))))
def test_a_full_disk_leaves_no_output_and_names_it(kind: str, small_lake: Path, small_fs: Path) -> None:
    """The disk fills while the output is written: one line naming it and the disk's error; nothing of it
    is left (a temporary file holding the space was)."""
    free = os.statvfs(small_fs).f_bavail * os.statvfs(small_fs).f_frsize
    (small_fs / "filler").write_bytes(b"\0" * (free - (16 << 10)))  # 16 KiB left
    args, shown = writers(small_lake, small_fs)[kind]
    one_line_error(run_module(args[0], args[1:]), str(shown), "No space left on device")
    assert leftovers(small_fs, small_fs / "filler") == []


def test_a_book_killed_while_written_leaves_nothing_and_a_rerun_writes_it(
    small_lake: Path, tmp_path: Path
) -> None:
    """kill -9 half-way through writing the book: nothing at its name (a rerun used to refuse the partial
    book as existing); the rerun writes the whole book, as an uninterrupted run does."""
    out, whole = tmp_path / "book.tsv", tmp_path / "whole" / "book.tsv"
    half_then_killed = (
        "import os, signal, sys\n"
        "import loaders.book as book\n"
        "real = book.write\n"
        "def write(batches, out, fmt, work):\n"
        "    def half():\n"
        "        for batch in batches:\n"
        "            yield batch.slice(0, batch.num_rows // 2)\n"
        "            os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(half(), out, fmt, work)\n"
        "book.write = write\n"
        "sys.exit(book.main(sys.argv[1:]))\n"
    )
    killed = run_command(python("-c", half_then_killed, "--lake", str(small_lake), str(out)))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not out.exists(), "a partial book is at the book's name"
    rerun = run_module("loaders.book", ["--lake", str(small_lake), str(out)])
    assert rerun.returncode == 0, rerun.stderr
    assert run_module("loaders.book", ["--lake", str(small_lake), str(whole)]).returncode == 0
    assert out.read_bytes() == whole.read_bytes()
    assert leftovers(tmp_path, out) == ["whole"]


@pytest.mark.parametrize("existing", ["tree.dot", "tree.svg", "tree_boards/1.svg"])
def test_the_graph_refuses_existing_outputs(existing: str, small_lake: Path, tmp_path: Path) -> None:
    """Any of the graph's outputs existing (the boards' folder holding a file): one line naming it, before
    any work, and nothing written or overwritten."""
    (tmp_path / existing).parent.mkdir(exist_ok=True)
    (tmp_path / existing).write_text("mine")
    before = tree(tmp_path)
    run = run_module("loaders.opening_graph", ["--lake", str(small_lake), str(tmp_path / "tree.dot")])
    one_line_error(run, str(tmp_path / existing.split("/")[0]))
    assert tree(tmp_path) == before


def test_a_graph_that_fails_leaves_nothing(small_lake: Path, tmp_path: Path) -> None:
    """Rendering fails (a Graphviz `dot` that fails): one line, and neither the .dot nor the boards are
    left. (Without any `dot`, the .dot is written: tests/test_front_door.py.)"""
    tools, out = tmp_path / "tools", tmp_path / "out"
    tools.mkdir()
    out.mkdir()
    (tools / "dot").write_text("#!/bin/sh\necho 'Error: out of memory' >&2\nexit 1\n")
    (tools / "dot").chmod(0o755)
    run = run_module(
        "loaders.opening_graph",
        ["--lake", str(small_lake), str(out / "tree.dot")],
        env={**os.environ, "PATH": str(tools)},
    )
    one_line_error(run, "dot failed: Error: out of memory")
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("kind", list(writers(Path("lake"), Path("out"))))
@pytest.mark.parametrize("place", ["root", "partition", "linked"])
def test_an_output_inside_the_lake_is_refused(
    kind: str, place: str, small_lake: Path, tmp_path: Path
) -> None:
    """In the lake's root, in a partition of `games/` (a book's .parquet there broke every query), or in a
    folder outside that is a link into `games/`: one line, and the lake is unchanged."""
    lake = Path(shutil.copytree(small_lake, tmp_path / "lake"))
    partition = next((lake / "games").glob("type=*/year=*/month=*"))
    folder = {"root": lake, "partition": partition, "linked": tmp_path / "link"}[place]
    if place == "linked":
        folder.symlink_to(partition)
    before = tree(lake)
    args, shown = writers(lake, folder)[kind]
    one_line_error(run_module(args[0], args[1:]), str(shown), f"inside the lake {lake}")
    assert tree(lake) == before
    assert run_module("warehouse.check", ["--lake", str(lake)]).returncode == 0


# --- issue 26, item 12: file names made from game ids are safe and bounded ---


def test_study_files_of_long_and_odd_game_ids(tmp_path: Path) -> None:
    """Game ids of 300 characters (two sharing 299), ones that would name hidden files (`.x`, `_x`), a
    path, `..`, non-ASCII only: each game in a file of its own, every name at most 255 bytes, none hidden,
    each document holding its id."""
    ids = ["x" * 300, "x" * 299 + "y", ".hidden", "_under", "..", "a/b\\c", "é" * 200, "plain"]
    games = make_games(0, len(ids)).split("[Event ")[1:]
    source = tmp_path / "ids.pgn"
    source.write_text("".join(f'[GameId "{i}"]\n[Event {g}' for i, g in zip(ids, games, strict=True)))
    lake = loaded([source], tmp_path / "lake")
    run = export("json", tmp_path / "study", lake, "--format", "study")
    assert run.returncode == 0, run.stderr
    names = [p.name for p in (tmp_path / "study").iterdir()]
    assert len(names) == len(ids)
    assert all(len(name.encode()) <= 255 and name[0] not in "._" for name in names), names
    documents = [json.loads(p.read_text()) for p in (tmp_path / "study").iterdir()]
    assert sorted(d["game_id"] for d in documents) == sorted(ids)
