"""The PGN files the lake is compared with python-chess on (test_oracle_corpora, test_export_pgn): every
`*.pgn` / `*.pgn.zst` under tests/data/ and, when present, under ../shared/corpora/, by case id
(`data/…`, `corpora/…`), and the files where the two read the PGN differently, each with its reason;
then how those files are loaded (`BATCHES`, `corpus_loader`), once per run for both test modules and all
parallel workers (the `corpus_loads` fixture of conftest.py)."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import support
from support import CORPORA, DATA, Row

ROOTS = {"data": DATA, "corpora": CORPORA}
FOLDER_LOAD_SECONDS = 600  # the bound of one load of the corpora (a batch of a folder's files)
# The most files one load takes. A load costs a little per input already in the lake (each input reads
# the lake's load records), so a folder of hundreds of one-game files (scalachess's fixtures: 560) is
# loaded as several lakes of this many files each, not one: the same games, compared the same way.
BATCH_INPUTS = 40

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


@dataclass(frozen=True)
class Batch:
    """Files of one folder loaded together into one lake: the folder (as in a case id, `corpora/edge/…`),
    which copy of a file repeated in the folder it holds (0: the first), and its rank among the batches
    of that folder and copy."""

    folder: str
    copy: int
    part: int


def _batches() -> tuple[dict[Batch, list[Path]], dict[Path, Batch]]:
    """The case files each load takes: a folder's cases, known divergences left out, at most
    `BATCH_INPUTS` a load. A file with the same bytes as an earlier one of its folder goes to a later
    batch: the loader skips an input already in the lake, and each file is compared on its own."""
    by_copy: dict[tuple[str, int], list[Path]] = defaultdict(list)
    copies: Counter[tuple[str, str]] = Counter()
    for case_id, path in CASES.items():
        if case_id not in KNOWN_DIVERGENCES:
            folder = case_id.rpartition("/")[0]
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            by_copy[folder, copies[folder, digest]].append(path)
            copies[folder, digest] += 1
    batches = {
        Batch(folder, copy, start // BATCH_INPUTS): paths[start : start + BATCH_INPUTS]
        for (folder, copy), paths in by_copy.items()
        for start in range(0, len(paths), BATCH_INPUTS)
    }
    return batches, {path: batch for batch, paths in batches.items() for path in paths}


BATCHES, BATCH_OF = _batches()


def folder_batches(folder: str) -> list[list[Path]]:
    """The batches of one folder, in order."""
    return [paths for batch, paths in BATCHES.items() if batch.folder == folder]


@dataclass
class CorpusLoad:
    """What one loader run wrote into its own lake, and the games and rejects of each input file (its
    path as given to the loader), read on first use."""

    returncode: int
    stderr: str
    lake: Path
    _by_file: dict[str, dict[str, list[Row]]] = field(default_factory=dict, repr=False)

    @property
    def games(self) -> dict[str, list[Row]]:
        if "games" not in self._by_file:
            self._by_file["games"] = by_file(support.read_games(self.lake))
        return self._by_file["games"]

    @property
    def plies(self) -> dict[int, list[Row]]:
        """By `game_key`, each stored game's plies' `material` and `phase` in ply order, as `ply_material`
        and `ply_phase` (the oracle's names): a list, as a lake loaded with duplicates allowed may hold a
        key more than once."""
        if "plies" not in self._by_file:
            grouped: dict[int, list[Row]] = defaultdict(list)
            for row in support.read_plies(self.lake, ["game_key", "ply", "material", "phase"]):
                if row["ply"] == 0:  # a file's plies are its games' in order, each from ply 0
                    grouped[row["game_key"]].append({"ply_material": [], "ply_phase": []})
                grouped[row["game_key"]][-1]["ply_material"].append(row["material"])
                grouped[row["game_key"]][-1]["ply_phase"].append(row["phase"])
            self._by_file["plies"] = dict(grouped)  # type: ignore[assignment]
        return self._by_file["plies"]  # type: ignore[return-value]

    @property
    def rejects(self) -> dict[str, list[Row]]:
        if "rejects" not in self._by_file:
            self._by_file["rejects"] = by_file(support.read_rejects(self.lake))
        return self._by_file["rejects"]


CorpusLoader = Callable[[tuple[Path, ...]], CorpusLoad]


def folder_lakes(folder: str, corpus_loads: CorpusLoader) -> list[Path]:
    """The lakes of `folder`'s batches (each loaded once a run) that stored games, in order."""
    lakes = []
    for inputs in folder_batches(folder):
        loaded = corpus_loads(tuple(inputs))
        assert loaded.returncode == 0, loaded.stderr
        if (loaded.lake / "games").is_dir():
            lakes.append(loaded.lake)
    return lakes


def corpus_loader(root: Path) -> CorpusLoader:
    """`load(inputs)`: the loader's run on those files into a lake of its own under `root`, run once for the
    same inputs. Processes given the same `root` (parallel test workers) share the runs: the first to ask
    for a batch loads it under a lock on the batch, the others wait for it and read its lake."""

    @functools.cache
    def load(inputs: tuple[Path, ...]) -> CorpusLoad:
        key = hashlib.sha256("\n".join(map(str, inputs)).encode()).hexdigest()[:16]
        lake, outcome = root / key / "lake", root / f"{key}.json"
        root.mkdir(parents=True, exist_ok=True)
        with (root / f"{key}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or its process ends
            if not outcome.exists():
                shutil.rmtree(lake.parent, ignore_errors=True)  # what a killed worker left, if any
                lake.parent.mkdir()
                # Each file is compared on its own: a game repeated in another file of the folder is
                # that file's game too, so the lake's dedup across inputs is off here (tests/test_loads.py
                # has it).
                process = support.load(list(inputs), lake, "--allow-duplicates", timeout=FOLDER_LOAD_SECONDS)
                outcome.write_text(json.dumps([process.returncode, process.stderr]))
        returncode, stderr = json.loads(outcome.read_text())
        return CorpusLoad(returncode, stderr, lake)

    return load


def by_file(records: list[Row]) -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = defaultdict(list)
    for record in records:
        grouped[record["source_file"]].append(record)
    return grouped
