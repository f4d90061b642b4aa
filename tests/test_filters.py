"""One reading of the game filters (warehouse/filters.py) for every command and query function: a value
that can match no game (a speed misspelt or in another case, a date that is none, bounds that cross, an
empty player) is refused in one line, exit 2, by the exports, positions, book and graph alike, and by
`explore`, `search` and the book's `Filters` in Python; never an empty answer and exit 0."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import support

from warehouse.errors import InputError
from warehouse.filters import SPEED_RULE
from warehouse.positions import search
from warehouse.positions.book import Filters
from warehouse.positions.explorer import explore

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
# Each command with its other arguments ({tmp}: a fresh folder), and the filters it takes.
COMMANDS = {
    "loaders.positions": ([START], ("type", "player")),
    "loaders.book": (["{tmp}/book.parquet"], ("type", "rating", "dates", "player")),
    "loaders.opening_graph": (["{tmp}/graph.dot", "--no-svg"], ("type", "rating", "dates", "player")),
    "loaders.parquet2pgn": (["{tmp}/out.pgn"], ("type",)),
    "loaders.parquet2json": (["{tmp}/out"], ("type",)),
}
# Each refused value, by the filter it is of, with what its line says.
REFUSED = [
    ("type", ["--type", "Blitz"], ["'Blitz' is not a speed", "did you mean 'blitz'"]),
    ("type", ["--type", "hyperbullet"], ["'hyperbullet' is not a speed"]),
    ("dates", ["--since", "2025-13-01"], ["'2025-13-01' is not a date"]),
    ("dates", ["--since", "2025-06-01", "--until", "2025-05-01"], ["since 2025-06-01 is beyond until"]),
    ("rating", ["--min-rating", "2000", "--max-rating", "1500"], ["min_rating 2000 is beyond max_rating"]),
    ("rating", ["--min-rating", "-5"], ["-5 is not at least 0"]),
    ("player", ["--player", " "], ["an empty player name"]),
]


CASES = [
    pytest.param(command, option, says, id=f"{command} {' '.join(option)}")
    for command, (_, takes) in COMMANDS.items()
    for kind, option, says in REFUSED
    if kind in takes
]


@pytest.mark.parametrize(("command", "option", "says"), CASES)
def test_commands_refuse_in_one_line(
    sample_lake: Path, tmp_path: Path, command: str, option: list[str], says: list[str]
) -> None:
    args = [a.format(tmp=tmp_path) for a in COMMANDS[command][0]]
    run = support.run_module(command, ["--lake", sample_lake, *args, *option])
    support.one_line_error(run, *says)
    assert not any(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("command", COMMANDS)
def test_help_says_the_speed_rule(command: str) -> None:
    run = support.run_module(command, ["--help"])
    assert run.returncode == 0 and "in lower case" in " ".join(run.stdout.split()), run.stdout


def test_python_functions_refuse(sample_lake: Path) -> None:
    for call in [
        lambda: explore(START, sample_lake, type="Blitz"),
        lambda: explore(START, sample_lake, since=dt.date(2025, 6, 1), until=dt.date(2025, 5, 1)),
        lambda: search(START, sample_lake, type="Blitz"),
        lambda: Filters(type="Blitz"),
        lambda: Filters(min_rating=-1),
        lambda: Filters(player=""),
    ]:
        with pytest.raises(InputError):
            call()
    assert "lower case" in SPEED_RULE
    assert len(explore(START, sample_lake, type="blitz")) > 0
