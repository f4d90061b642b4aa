"""The lake against python-chess, game by game and ply by ply, over every PGN file we have.

Cases: each `*.pgn` / `*.pgn.zst` under tests/data/ and, when present, under ../shared/corpora/. The
loader runs once per batch of a folder's case files (up to `corpora.BATCH_INPUTS` files in one call,
which keeps the suite fast; the loads are shared with test_export_pgn); each file is then compared with
`oracle.expected_games` on its own: same number of games, same rejects, and every field of every stored
game and move equal.
"""

from __future__ import annotations

import pytest
from corpora import BATCH_OF, BATCHES, CASES, KNOWN_DIVERGENCES, ROOTS, CorpusLoader
from oracle import expected_games
from oracle_diff import (
    compare_file,
)

MAX_REPORTED = 20


def test_shared_corpora_found() -> None:
    if not ROOTS["corpora"].is_dir():
        pytest.skip(f"{ROOTS['corpora']} not found: its files are not compared")
    assert any(case_id.startswith("corpora/") for case_id in CASES)


@pytest.mark.parametrize("case_id", list(CASES))
def test_lake_matches_python_chess(case_id: str, corpus_loads: CorpusLoader) -> None:
    if case_id in KNOWN_DIVERGENCES:
        pytest.skip(KNOWN_DIVERGENCES[case_id])
    path = CASES[case_id]
    loaded = corpus_loads(tuple(BATCHES[BATCH_OF[path]]))
    if loaded.returncode != 0:  # find out whether this file is the one the loader fails on
        loaded = corpus_loads((path,))
    assert loaded.returncode == 0, f"loader failed on {case_id}:\n{loaded.stderr}"
    mismatches = list(compare_file(expected_games(path), loaded, str(path)))
    if mismatches:
        shown = "\n".join(f"{case_id} {line}" for line in mismatches[:MAX_REPORTED])
        first = f", the first {MAX_REPORTED}" if len(mismatches) > MAX_REPORTED else ""
        pytest.fail(f"{len(mismatches)} mismatches{first}:\n{shown}", pytrace=False)
