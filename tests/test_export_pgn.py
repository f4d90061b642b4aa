"""PGN → lake → PGN, checked with python-chess: every stored game, exported again, must read as the
original game at its source offset: moves, variations, NAGs, comments, clocks, evals and tags.

Cases: tests/data/ and every folder of ../shared/corpora/ (skipped when absent): the files python-chess
and the lake read alike, loaded in the batches of test_oracle_corpora, whose lakes this module shares
(corpora.py). Games the lake rejected are not compared; the rest must all round-trip. Known losses of the
lake (see LOSSY_TAGS) are the only differences allowed.
"""

from __future__ import annotations

import bz2
import functools
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest
import zstandard
from corpora import BATCHES, CorpusLoad, CorpusLoader, folder_lakes
from oracle import COMMAND, INTEGER, RESULTS, TAG_ESCAPE, read_bytes, strip_commands, termination
from support import Run, loaded, read_games, run_module

from warehouse.export_pgn import pgn_games
from warehouse.lake import Lake

MAX_REPORTED = 10
# Tags the lake keeps only as values it derives, not as written (docs/schema.md): the Variant tag's
# text (kept as lichess's name of the variant: `crazyhouse` is written `Crazyhouse`), a non-numeric
# Elo/RatingDiff (`?`, `""`: kept as null), a Result other than 1-0, 0-1, 1/2-1/2 (kept as the outcome).
# The test checks what they mean instead: the variant through python-chess's board class for the game
# and its chess960 flag.
LOSSY_TAGS = ("Variant",)
NON_NUMERIC_LOSSY = ("WhiteElo", "BlackElo", "WhiteRatingDiff", "BlackRatingDiff")
# The folders whose files python-chess and the lake read alike, each loaded in one or more batches.
FOLDERS = sorted({batch.folder for batch in BATCHES})


@pytest.mark.parametrize("folder", FOLDERS)
def test_round_trip(folder: str, corpus_loads: CorpusLoader) -> None:
    lakes = folder_lakes(folder, corpus_loads)
    if not lakes:
        pytest.skip(f"the lake stored no game of {folder}")
    assert_round_trip(lakes, folder)


def test_random_variant_games_round_trip(random_variant_load: CorpusLoad) -> None:
    """Seeded random games of every lichess variant (drops `N@f3`, explosions, horde and racing kings'
    own starts, FEN starts with pockets): the `Variant` tag and every move come back."""
    assert random_variant_load.returncode == 0, random_variant_load.stderr
    assert_round_trip([random_variant_load.lake], "random variant games")


def assert_round_trip(lakes: list[Path], what: str) -> None:
    """Every game of `lakes`, exported as PGN, reads in python-chess as its original game."""
    exported = [game for lake in lakes for game in pgn_games(Lake.open(lake))]
    ends = next_offsets((source, offset) for source, offset, _ in exported)
    mismatches = [
        f"{Path(source).name} @{offset}: {problem}"
        for source, offset, text in exported
        for problem in compare(original_game(Path(source), offset, ends[source, offset]), read(text))
    ]
    if mismatches:
        shown = "\n".join(mismatches[:MAX_REPORTED])
        pytest.fail(f"{len(mismatches)} mismatches in {what}:\n{shown}", pytrace=False)


@functools.cache
def source_bytes(path: Path) -> bytes:
    return read_bytes(path)


def next_offsets(games: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int | None]:
    """For each stored game, the offset of the next stored game of its file (None for the last): the
    original game lies before it, which saves decoding the rest of the file for every game."""
    by_file: dict[str, list[int]] = {}
    for source, offset in games:
        by_file.setdefault(source, []).append(offset)
    ends: dict[tuple[str, int], int | None] = {}
    for source, offsets in by_file.items():
        offsets.sort()
        for offset, end in zip(offsets, [*offsets[1:], None], strict=True):
            ends[source, offset] = end
    return ends


def original_game(path: Path, offset: int, end: int | None) -> chess.pgn.Game:
    """python-chess's reading of the game at `offset` of the (decompressed) file, decoded as the lake
    does: UTF-8 when the game's bytes are, else Latin-1."""
    rest = source_bytes(path)[offset:end]
    handle = io.StringIO(rest.decode("latin-1"), newline="")  # one character a byte: tell() is a byte count
    game = chess.pgn.read_game(handle)
    raw = rest[: handle.tell()]
    if game is not None and raw.isascii():
        # The game's text read as UTF-8 is the very text just read (ASCII reads the same either way),
        # and python-chess read nothing of the game beyond it: that reading is the game.
        return game
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return read(text)


def read(text: str) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(text, newline=""))
    assert game is not None, f"python-chess finds no game in {text[:200]!r}"
    return game


def compare(want: chess.pgn.Game, got: chess.pgn.Game) -> Iterator[str]:
    yield from compare_headers(dict(want.headers), dict(got.headers))
    if type(want.board()) is not type(got.board()):
        yield f"variant: {type(want.board()).__name__} != {type(got.board()).__name__}"
    if want.board().chess960 != got.board().chess960:
        yield f"chess960: {want.board().chess960} != {got.board().chess960}"
    if want.comment.strip() != got.comment.strip():
        yield f"game comment: {want.comment.strip()!r} != {got.comment.strip()!r}"
    want_tree, got_tree = line(want.next()), line(got.next())
    if want_tree != got_tree:
        yield first_difference(want_tree, got_tree)


def compare_headers(want: dict[str, str], got: dict[str, str]) -> Iterator[str]:
    for name in sorted(set(want) | set(got)):
        # python-chess keeps PGN's escapes (`\"`, `\\`) in tag values: compare what they stand for.
        a, b = (None if tags.get(name) is None else TAG_ESCAPE.sub(r"\1", tags[name]) for tags in (want, got))
        if name in LOSSY_TAGS or (name in NON_NUMERIC_LOSSY and a is not None and not INTEGER.fullmatch(a)):
            continue
        if name == "Result" and a not in RESULTS:
            continue
        if name in NON_NUMERIC_LOSSY and a is not None and b is not None:
            if int(a) != int(b):  # `+5` and `5` are the same difference
                yield f"tag {name}: {a!r} != {b!r}"
        elif a != b:
            yield f"tag {name}: {a!r} != {b!r}"


def line(node: chess.pgn.ChildNode | None) -> list[Any]:
    """The moves from `node` on, main continuation first: per move its UCI, NAGs, comment without
    commands, eval, clock (to the tenth, the lake's precision), starting comment, and the lines of its
    alternatives. A loop, not a recursion, along a line: engine games run to hundreds of plies."""
    out = []
    while node is not None:
        parent = node.parent
        alternatives = parent.variations[1:] if parent is not None and parent.variations[0] is node else []
        # python-chess's eval() and clock() search the comment for `[%eval …]` and `[%clk …]`.
        evaluation, clock = (node.eval(), node.clock()) if COMMAND in node.comment else (None, None)
        fields = [
            node.move.uci(),  # not node.uci(): that replays the game from its start for every move
            sorted(node.nags),
            strip_commands(node.comment),
            None if evaluation is None else str(evaluation.white()),
            None if clock is None else round(clock + 1e-9, 1),
            node.starting_comment.strip(),
        ]
        out.append([*fields, [line(alt) for alt in alternatives]])
        node = node.next()
    return out


def first_difference(want: list[Any], got: list[Any], where: str = "") -> str:
    for index, (a, b) in enumerate(zip(want, got, strict=False)):
        if a != b:
            here = f"{where}/{index}:{a[0]}"
            if a[:6] != b[:6]:
                return f"{here}: {a[:6]} != {b[:6]}"
            for alt, (x, y) in enumerate(zip(a[6], b[6], strict=False)):
                if x != y:
                    return first_difference(x, y, f"{here}/alt{alt}")
            return f"{here}: {len(a[6])} alternatives != {len(b[6])}"
    return f"{where}: {len(want)} moves != {len(got)}"


# The PGN of games with one tag each: what the Rust core writes for them (export_pgn.rs), read back.
NUMBERED = """[Result "*"]

1. e4 e5 { hi } ( { Sicilian } 1... c5 2. Nf3 ( 2. Nc3 ) ( ) ) 2. Nf3 { dev } Nc6 *

[Result "*"]
[FEN "8/8/8/8/8/8/8/K6k b - - 0 12"]

{ late } 12... Kg2 13. Kb2 *

[Result "*"]

{ %s } 1. e4 e5 *

"""
ROSTER = '[Event "?"]\n[Site "?"]\n[Date "????.??.??"]\n[Round "?"]\n[White "?"]\n[Black "?"]\n[Result "*"]\n'


def test_movetext_numbers_moves_nests_lines_and_wraps(tmp_path: Path) -> None:
    """Black's move is numbered first in a line and after a comment or a variation; an empty line is left
    out; a line inside a line is opened after the move it replaces; lines break at 79 characters, between
    tokens only; a bare game gets the Seven Tag Roster."""
    long = "c" * 100
    (tmp_path / "games.pgn").write_text(NUMBERED % long)
    lake = loaded([tmp_path / "games.pgn"], tmp_path / "lake")
    texts = [text for _, _, text in pgn_games(Lake.open(lake))]
    assert texts == [
        ROSTER
        + "\n1. e4 e5 { hi } ( { Sicilian } 1... c5 2. Nf3 ( 2. Nc3 ) ) 2. Nf3 { dev }\n2... Nc6 *\n\n",
        ROSTER + '[FEN "8/8/8/8/8/8/8/K6k b - - 0 12"]\n\n{ late } 12... Kg2 13. Kb2 *\n\n',
        ROSTER + f"\n{{ {long} }}\n1. e4 e5 *\n\n",
    ]


def parquet2pgn(*args: str) -> Run:
    return run_module("loaders.parquet2pgn", list(args), timeout=300)


@pytest.mark.parametrize("name", ["games.pgn", "games.pgn.bz2", "games.pgn.zst"])
def test_cli_writes_the_games(sample_lake: Path, tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    process = parquet2pgn("--lake", str(sample_lake), str(out))
    assert process.returncode == 0, process.stderr
    assert "438 games" in process.stdout
    data = out.read_bytes()
    if name.endswith(".bz2"):
        data = bz2.decompress(data)
    elif name.endswith(".zst"):
        data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
    assert data.decode() == "".join(text for _, _, text in pgn_games(Lake.open(sample_lake)))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temporary file left behind"


def test_cli_selects_partitions(sample_lake: Path) -> None:
    process = parquet2pgn("--lake", str(sample_lake), "--type", "classical", "--type", "ultrabullet", "-")
    assert process.returncode == 0, process.stderr
    games = process.stdout.count("[Event ")
    assert games == 5  # 3 classical + 2 ultrabullet games in the sample


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lake", "{tmp}/nowhere", "{tmp}/out.pgn"], "not a lake"),
        (["--lake", "{lake}", "{lake}/_loads"], "inside the lake"),
        (["--lake", "gs://bucket/lake", "{tmp}/out.pgn"], "unsupported location"),
        (["--lake", "s3://", "{tmp}/out.pgn"], "no bucket"),
    ],
)
def test_cli_user_errors_are_one_line(
    sample_lake: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    process = parquet2pgn(*(a.format(tmp=tmp_path, lake=sample_lake) for a in args))
    assert process.returncode == 2
    assert message in process.stderr
    assert len(process.stderr.strip().splitlines()) == 1, process.stderr


# Other sites' wordings, the column's text for each (the test's own reading of what lichess writes), and
# the time controls they write: chess.com's daily `1/259200`, TCEC's per-side tags.
OTHER_SOURCES = [
    ("cancer0707 won by checkmate", "Normal", '[TimeControl "180"]', "blitz"),
    ("Game drawn by repetition", "Normal", '[TimeControl "1/259200"]', "correspondence"),
    ("hikaru won on time", "Time forfeit", '[TimeControl "1/86400"]', "correspondence"),
    ("someone won - game abandoned", "Abandoned", '[TimeControl "600"]', "rapid"),
    ("Game drawn by timeout vs insufficient material", "Time forfeit", '[TimeControl "60"]', "bullet"),
    ("Game drawn by 50-move rule", "Normal", '[WhiteTimeControl "180+0.5"]\n[BlackTimeControl "180+0.5"]',
     "blitz"),
    ("adjudication", "Adjudication", '[WhiteTimeControl "40/900"]\n[BlackTimeControl "40/900"]', "rapid"),
    ("White mates", "White mates", '[WhiteTimeControl "60+1"]\n[BlackTimeControl "600+1"]', "unknown"),
]  # fmt: skip


def test_other_sources_terminations_and_time_controls(tmp_path: Path) -> None:
    """chess.com's and TCEC's tags: the `termination` column in lichess's words, the text in `headers`,
    written back as it was by the PGN export; daily and per-side time controls typed."""
    source = tmp_path / "others.pgn"
    source.write_text(
        "".join(
            f'[Event "game {i}"]\n[Result "1-0"]\n{tc}\n[Termination "{raw}"]\n\n1. e4 e5 1-0\n\n'
            for i, (raw, _, tc, _) in enumerate(OTHER_SOURCES)
        )
    )
    lake = loaded([source], tmp_path / "lake")
    games = sorted(read_games(lake, ["event", "termination", "type", "headers"]), key=lambda g: g["event"])
    for game, (raw, word, _, kind) in zip(games, OTHER_SOURCES, strict=True):
        assert (game["termination"], game["type"]) == (termination(raw), kind) == (word, kind)
        assert ("Termination", raw) in game["headers"] or raw == word
    exported = {read(text).headers["Event"]: read(text).headers for _, _, text in pgn_games(Lake.open(lake))}
    for i, (raw, _, _, _) in enumerate(OTHER_SOURCES):
        assert exported[f"game {i}"]["Termination"] == raw
