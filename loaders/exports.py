"""What the export commands share: the selection options (partitions, and games within them), and a run
that tells Ctrl-C apart from the error DuckDB turns it into."""

from __future__ import annotations

import argparse
import signal
from collections.abc import Callable
from types import FrameType
from typing import TypeVar

from loaders import cli
from warehouse.exports.lake_scan import Selection
from warehouse.queries import filters

T = TypeVar("T")
MAX_YEAR = 9999
# The game filters an export takes beside its partitions': all but the speed, which is `--type`'s (a
# partition, repeatable).
GAME_FILTERS = tuple(name for name in filters.NAMES if name != "type")


def add_selection_arguments(p: argparse.ArgumentParser) -> None:
    cli.add_lake_argument(p)
    p.add_argument(
        "--type",
        action="append",
        dest="types",
        type=cli.shared(filters.speed),
        metavar="TYPE",
        help=f"only games of this speed ({filters.SPEED_RULE}); repeat for several",
    )
    p.add_argument(
        "--year",
        action="append",
        dest="years",
        type=cli.whole_number(0, MAX_YEAR, f"a year (0-{MAX_YEAR}, 0 for unknown dates)"),
        metavar="YYYY",
        help="only this year (0: games of unknown date); repeatable",
    )
    p.add_argument(
        "--month",
        action="append",
        dest="months",
        type=cli.whole_number(0, 12, "a month (1-12, 0 for unknown dates)"),
        metavar="M",
        help="only this month (1-12; 0: games of unknown date); repeatable",
    )
    # Within the partitions, the games the SQL views' filters keep (`queries.filters`), of every variant.
    cli.add_game_filters(p, GAME_FILTERS)


def selection(args: argparse.Namespace) -> Selection:
    """The partitions and games the options choose (bounds that cross: `InputError`)."""
    return Selection(types=args.types, years=args.years, months=args.months, games=cli.game_filters(args))


class Interrupts:
    """Ctrl-C during an export: raises KeyboardInterrupt (so that the export drops what it wrote) and
    remembers it, since DuckDB turns it into its own error when it lands during a query."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True
        raise KeyboardInterrupt


def run_export(export: Callable[[], T], report: Callable[[T], None], interrupted: str) -> int:
    """Runs `export()`, then `report(result)`, as `cli.run` does; returns the exit code. `interrupted`
    says what an interrupted export left (the caller knows)."""

    def command() -> int:
        interrupts = Interrupts()
        signal.signal(signal.SIGINT, interrupts)
        try:
            result = export()
        except BaseException:
            if interrupts.seen:
                raise KeyboardInterrupt from None
            raise
        # The output is complete: Ctrl-C now would only lose the summary line.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        report(result)
        return 0

    return cli.run(command, interrupted)
