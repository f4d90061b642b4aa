"""PGN → lake → PGN, compared with python-chess game by game: the original game at its source offset beside
the exported one (shared by the PGN and JSON round-trip tests)."""

from __future__ import annotations

import functools
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest
from corpora import BATCHES
from oracle import COMMAND, INTEGER, RESULTS, TAG_ESCAPE, read_bytes, strip_commands

from warehouse.exports.pgn import pgn_games
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
