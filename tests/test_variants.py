"""lichess's variants against python-chess's `chess.variant`: seeded random games of every variant
(random_variants.py), every ply field by field, with the rules' own events checked to be there (drops,
explosions, the third check, the hill, the eighth rank, the horde's first-rank pawns); and the rejects
of variants lichess does not play, which name them. The corpora's variant games are compared by
test_oracle_corpora with the rest."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from corpora import CorpusLoad
from oracle import expected_games
from oracle_diff import compare_file
from random_variants import BOARDS
from support import loaded, read_rejects

MAX_REPORTED = 20


@pytest.mark.parametrize("variant", list(BOARDS))
def test_random_games_match_python_chess(
    variant: str, random_variant_files: dict[str, Path], random_variant_load: CorpusLoad
) -> None:
    assert random_variant_load.returncode == 0, random_variant_load.stderr
    path = random_variant_files[variant]
    expected = expected_games(path)
    assert expected and not any(e.rejected for e in expected)
    mismatches = list(compare_file(expected, random_variant_load, str(path)))
    assert not mismatches, "\n".join(mismatches[:MAX_REPORTED])


def events(variant: str, files: dict[str, Path], load: CorpusLoad) -> Counter[str]:
    """How often the stored games of `variant` show each rule of it at work."""
    seen: Counter[str] = Counter()
    for game in load.games[str(files[variant])]:
        assert game["variant"] == variant
        seen["from a FEN"] += game["start_fen"] is not None
        for move in game["moves"]:
            seen["drop"] += move["f"] is None
            seen["promotion"] += move["promote"] is not None
            seen["explosion"] += move["blast"] is not None
            seen["third check"] += move["c"] == 3
            seen["first-rank pawn"] += move["p"] == "P" and move["f"] is not None and move["f"][1] == "1"
            seen["king on the eighth rank"] += move["p"] in "Kk" and move["t"][1] == "8"
            seen["king on the hill"] += move["p"] in "Kk" and move["t"] in ("d4", "e4", "d5", "e5")
            seen["pawn drop"] += move["f"] is None and move["p"] in "Pp"
    return seen


@pytest.mark.parametrize(
    ("variant", "wanted"),
    [
        ("Crazyhouse", ("drop", "pawn drop", "promotion", "from a FEN")),
        ("Atomic", ("explosion", "promotion", "from a FEN")),
        ("Antichess", ("promotion",)),
        ("Horde", ("first-rank pawn", "promotion")),
        ("King of the Hill", ("king on the hill",)),
        ("Racing Kings", ("king on the eighth rank",)),
        ("Three-check", ("third check",)),
    ],
)
def test_random_games_cover_the_rules(
    variant: str,
    wanted: tuple[str, ...],
    random_variant_files: dict[str, Path],
    random_variant_load: CorpusLoad,
) -> None:
    seen = events(variant, random_variant_files, random_variant_load)
    assert all(seen[event] > 0 for event in wanted), seen


def test_promoted_piece_dropped_back_is_a_pawn(tmp_path: Path) -> None:
    # Black promotes on g1, White takes the new queen (x: q) and drops it back as a pawn (p: P).
    pgn = tmp_path / "zh.pgn"
    pgn.write_text(
        '[Variant "Crazyhouse"]\n[FEN "4k3/8/8/8/8/8/6p1/4K2R b - - 0 1"]\n\n'
        "1... g1=Q+ 2. Rxg1 Kd7 3. P@d6 *\n\n"
    )
    (game,) = expected_games(pgn)
    assert game.row is not None
    moves = game.row["moves"]
    assert (moves[1]["x"], moves[3]["p"], moves[3]["f"], moves[3]["t"]) == ("q", "P", None, "d6")
    lake = loaded([pgn], tmp_path / "lake")
    mismatches = list(compare_file([game], CorpusLoad(0, "", lake), str(pgn)))
    assert not mismatches, mismatches


@pytest.mark.parametrize("variant", ["Seirawan", "Sittuyin", "Suicide", "Giveaway", "Shogi"])
def test_variants_lichess_does_not_play_are_rejected_by_name(variant: str, tmp_path: Path) -> None:
    pgn = tmp_path / "other.pgn"
    # Seirawan's `H@e2`-style gating moves are no moves the lake reads: the reason still names the variant.
    pgn.write_text(f'[Event "x"]\n[Variant "{variant}"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 H@e2 *\n\n')
    (reject,) = read_rejects(loaded([pgn], tmp_path / "lake"))
    assert reject["kind"] == "unsupported_variant"
    assert variant in reject["reason"]
