"""The filters of games every command and query function shares: speed (`type`), the mean rating of the two
players, a date range and a player; one reading of each.

A value that can match no game of any lake is refused in one line (`InputError`), never passed on to
answer nothing: a speed outside `SPEEDS`, a negative rating, a bound above its other bound, an empty
player name. Names are exact, as the lake stores them: speeds in lower case (`blitz`, not `Blitz`, which
is refused with the right spelling named), players' names as written, either side. The variant counted is
the SQL views' own filter (`sql.connect(variant=…)`), which refuses an unknown name in one line
itself, exact too (`Atomic`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from warehouse.errors import InputError
from warehouse.lake.layout import SPEEDS

# The filters of games, in the order the commands list them.
NAMES = ("type", "min_rating", "max_rating", "since", "until", "player")
# What the commands' --help says of the speed's spelling.
SPEED_RULE = f"one of {', '.join(SPEEDS)}, in lower case"


def speed(text: str) -> str:
    """A speed (`type` partition) as given: one of `SPEEDS`, exactly."""
    if text in SPEEDS:
        return text
    hint = f"; did you mean {text.lower()!r}?" if text.lower() in SPEEDS else ""
    raise InputError(f"{text!r} is not a speed ({SPEED_RULE}){hint}")


def date(text: str) -> dt.date:
    """A date given as YYYY-MM-DD."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InputError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def player(text: str) -> str:
    """A player's name: not empty (a game's missing name is null, which no filter names)."""
    if not text.strip():
        raise InputError("an empty player name")
    return text


def rating(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{name} {value!r} is not a whole number from 0")
    return value


@dataclass(frozen=True)
class GameFilters:
    """Which games count: speed (`type`), the mean of the two Elos within [min_rating, max_rating], a date
    range [since, until], games of one player (either side); None: no filter.

    :raises InputError: for a value `speed`, `date`, `player` or `rating` refuses, or bounds that cross."""

    type: str | None = None
    min_rating: int | None = None
    max_rating: int | None = None
    since: dt.date | None = None
    until: dt.date | None = None
    player: str | None = None

    def __post_init__(self) -> None:
        if self.type is not None:
            speed(self.type)
        for name in ("min_rating", "max_rating"):
            if getattr(self, name) is not None:
                rating(getattr(self, name), name)
        if self.player is not None:
            player(self.player)
        for low, high in (("min_rating", "max_rating"), ("since", "until")):
            first, last = getattr(self, low), getattr(self, high)
            if first is not None and last is not None and first > last:
                raise InputError(f"{low} {first} is beyond {high} {last}: no game is both")

    def chosen(self) -> dict[str, Any]:
        """The filters set, by name."""
        return {name: getattr(self, name) for name in NAMES if getattr(self, name) is not None}

    def selective(self) -> bool:
        """Whether any filter is set."""
        return bool(self.chosen())

    def where(self) -> tuple[str, dict[str, Any]]:
        """A SQL condition on the games view's columns (`games.`), and its parameters."""
        tests = {
            "type": "games.type = $type",
            "min_rating": "games.mean_elo >= $min_rating",
            "max_rating": "games.mean_elo <= $max_rating",
            "since": "games.datetime >= $since::date",
            "until": "games.datetime < $until::date + interval 1 day",
            "player": "(games.white_name = $player or games.black_name = $player)",
        }
        chosen = self.chosen()
        return " and ".join(["true", *(tests[name] for name in chosen)]), chosen
