"""The formats' own rules, which the imports (JSON to PGN) and the exports (the lake to PGN and study JSON)
both follow: PGN's tag escapes and move numbers, study JSON's dates, tags command and game id tag."""

from __future__ import annotations

import re

# A PGN-shaped date, `2024.01.05` or `2024.??.??`, written `2024-01-05` / `2024-??-??` in study JSON.
PGN_DATE = re.compile(r"([0-9?]{4})\.([0-9?]{2})\.([0-9?]{2})")
# Free annotation tags ride in the move's comment as this command (the lake has no column for them).
TAGS_COMMAND = re.compile(r"\[%tags (\[[^\]]*\])\]")
# The tag that keeps a study `game_id` the lake cannot take as its own id.
GAME_ID_TAG = "GameId"


def escape(value: str) -> str:
    """A tag value with PGN's escapes for `\\` and `"`."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def start_ply(fen: str | None) -> int:
    """The ply number of the first move: 0 for White's first move, 1 for Black's, from the FEN's side to
    move and fullmove number."""
    if not fen:
        return 0
    fields = fen.split()
    black = len(fields) > 1 and fields[1] == "b"
    fullmove = int(fields[5]) if len(fields) > 5 and fields[5].isdigit() else 1
    return 2 * (max(fullmove, 1) - 1) + int(black)
