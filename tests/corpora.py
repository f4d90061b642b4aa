"""The PGN files the lake is compared with python-chess on (test_oracle_corpora, test_export_pgn): every
`*.pgn` / `*.pgn.zst` under tests/data/ and, when present, under ../shared/corpora/, by case id
(`data/…`, `corpora/…`), and the files where the two read the PGN differently, each with its reason."""

from __future__ import annotations

from pathlib import Path

from support import CORPORA, DATA

ROOTS = {"data": DATA, "corpora": CORPORA}
FOLDER_LOAD_SECONDS = 600  # the bound of a load of one folder of the corpora, all its files at once

# Files where the lake and python-chess read the PGN differently, each for a stated reason. Every other
# file of the corpora must match ply for ply. Causes:
UNREADABLE = (
    "a token that starts with no move (`Sf3`, German for Nf3): python-chess plays the move it finds "
    "inside (`f3`), the lake rejects the game as an unreadable move"
)
INLINE_TAGS = (
    "tags not on lines of their own (`<br />` between them, a `[pgn]…[/pgn]` wrapper): python-chess "
    "reads a header and no moves, pgn-reader reads the game's moves"
)
TAGS = (
    "malformed tag lines (several tags on one line, a value without its closing quote, a line without "
    "quotes): python-chess drops or merges them, the lake reads each tag and closes an unclosed value "
    "at its `]`"
)
BOUNDARY = (
    "no blank line between games: pgn-reader ends a game at a line starting with `[`, python-chess "
    "only at a blank line"
)
RESULT = (
    "result written `½-½`, with a dash variant, or only in the movetext: pgn-reader reads it, "
    "python-chess does not"
)
NULL = "python-chess reads a null move (`--`/`Z0`) where pgn-reader sees none"
_DIVERGENCES = {
    UNREADABLE: ["edge/pgn-parser/doc/sampleGameThrow.pgn"],
    INLINE_TAGS: [
        "edge/chess.js/__tests__/pgn/0.pgn",
        "edge/scalachess/fixtures/withDelimiters.pgn",
    ],
    TAGS: [
        "edge/scid/gtest/res_gameLatin1.pgn",
        "tournament/scoutfish/GM_games.pgn",
        "tournament/scoutfish/hartwig.pgn",
        "edge/duckdb-chess/test/pgn_files/malformed.pgn",
        "edge/pgn-extract/test/infiles/test-nochecks.pgn",
        "edge/pgn-extract/test/infiles/test-stalemate.pgn",
        "edge/pychess/testing/gamefiles/badpgn.pgn",
        "edge/scalachess/fixtures/inlineTags.pgn",
        "edge/scalachess/fixtures/stackOverflow.pgn",
        "edge/scalachess/fixtures/unclosedQuote.pgn",
        "edge/scalachess/fixtures/whiteResignsInMoves.pgn",
        "edge/scalachess/fixtures/whiteResignsInTags.pgn",
        "edge/scalachess/fixtures/whiteResignsInTagsAndMoves.pgn",
    ],
    BOUNDARY: [
        "edge/chess-library/tests/pgns/empty_body.pgn",
        "edge/pgn-extract/test/infiles/test-nobadresults.pgn",
        "edge/pychess/learn/puzzles/mate_in_3.pgn",
        "edge/pychess/learn/puzzles/mate_in_4.pgn",
        "edge/pychess/testing/gamefiles/3fold.pgn",
        "edge/scalachess/fixtures/overflow.pgn",
        "edge/scalachess/fixtures/withDelimitersOnNewLines.pgn",
        "tournament/scoutfish/chessdoctor.pgn",
    ],
    RESULT: [
        "edge/scalachess/fixtures/fromChessProgrammingWiki.pgn",
        "edge/scalachess/fixtures/unicodeResultDraw.pgn",
        "edge/scalachess/fixtures/unicodeResultWeirdDashDraw.pgn",
        "edge/scalachess/fixtures/unicodeResultWeirdDashWin.pgn",
    ],
    NULL: [
        "edge/pgn-extract/test/infiles/nested-comment.pgn",
        "edge/scalachess/fixtures/blackAbsentResult.pgn",
    ],
}
KNOWN_DIVERGENCES: dict[str, str] = {
    f"corpora/{path}": why for why, paths in _DIVERGENCES.items() for path in paths
} | {
    "data/edge/unreadable.pgn": UNREADABLE,
    "data/edge/unclosed_tag.pgn": TAGS,
}


def pgn_files(root: Path) -> list[Path]:
    return sorted({*root.rglob("*.pgn"), *root.rglob("*.pgn.zst")}) if root.is_dir() else []


CASES = {f"{name}/{path.relative_to(root)}": path for name, root in ROOTS.items() for path in pgn_files(root)}
