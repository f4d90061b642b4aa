"""What every command shares: its options' parsing and how a run ends.

Exit codes: 0 done; 2 a user error (a bad option or path, a missing lake, an unreadable input, a
selection matching nothing, an output that exists, a failing disk or server: a `WarehouseError` or an
`OSError`), one line `error: …` on stderr; 130 interrupted (Ctrl-C), one line `interrupted: …` saying
what was left; 1 only for a bug, with its traceback. `check` adds 1 for a lake with problems.

Import this module before any other of the project's: Ctrl-C while the libraries load (~0.5 s) is then one
line too.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import NoReturn

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


def interrupted_while_starting(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C before a command starts: nothing is done yet."""
    sys.stderr.write("interrupted: nothing was done\n")
    os._exit(EXIT_INTERRUPTED)


# Installed before the imports below; `run` puts Python's own handler back.
signal.signal(signal.SIGINT, interrupted_while_starting)

from warehouse.errors import NotPublished, WarehouseError, describe  # noqa: E402
from warehouse.lake.storage import printable  # noqa: E402


class OneLineParser(argparse.ArgumentParser):
    """argparse with its errors as one line (`error: …`, exit 2) instead of the usage and the error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER_ERROR, f"error: {message} (see --help)\n")


def location(text: str) -> str:
    """A path or URL argument: not empty, and UTF-8 (pyarrow's filesystems take only UTF-8 paths; a name
    of other bytes reaches Python as surrogate escapes)."""
    if not text:
        raise argparse.ArgumentTypeError("empty path")
    shown = printable(text)
    if shown != text:
        raise argparse.ArgumentTypeError(f"{shown}: not a UTF-8 name; rename it")
    return text


def whole_number(low: int, high: int | None = None, what: str | None = None) -> Callable[[str], int]:
    """An argparse `type` for a whole number from `low` (to `high`): anything else is a usage error,
    never clamped or passed on to fail later. `what` says what the number is, for the message."""
    if what is None:
        what = f"a whole number from {low:,} to {high:,}" if high is not None else f"at least {low:,}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is not {what}")
        return value

    return parse


def add_lake_argument(parser: argparse.ArgumentParser) -> None:
    """`--lake`, the same for every command (None: `warehouse.lake.default_lake()`)."""
    parser.add_argument(
        "--lake",
        default=None,
        type=location,
        help="lake directory or s3://bucket/prefix (default: $CHESS_LAKE, else ./lake); S3 credentials, "
        "region and endpoint come from the AWS_* environment variables",
    )


def add_game_filters(parser: argparse.ArgumentParser) -> None:
    """The options that choose games by speed, mean Elo, date and player (`--type`, `--min-rating`,
    `--max-rating`, `--since`, `--until`, `--player`)."""
    parser.add_argument("--type", help="only games of this speed (blitz, rapid…)")
    rating = whole_number(0)
    parser.add_argument("--min-rating", type=rating, help="mean Elo of the two players at least this")
    parser.add_argument("--max-rating", type=rating, help="mean Elo of the two players at most this")
    parser.add_argument("--since", type=dt.date.fromisoformat, help="games from this date (YYYY-MM-DD)")
    parser.add_argument("--until", type=dt.date.fromisoformat, help="games up to this date, included")
    parser.add_argument("--player", help="only the games of this player (either side)")


def paragraph(doc: str | None) -> str:
    """The second paragraph of a module's docstring (the first after its title), for `--help`."""
    return (doc or "").split("\n\n")[1]


def error(message: str) -> None:
    """A user error's line on stderr."""
    print(f"error: {message}", file=sys.stderr)


def run(command: Callable[[], int], interrupted: str) -> int:
    """Runs a command's body and returns its exit code, ending user errors and Ctrl-C in one line (see the
    module's doc). `interrupted` says what Ctrl-C leaves, unless the `KeyboardInterrupt` says it itself."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return command()
    except KeyboardInterrupt as e:
        print(f"interrupted: {e.args[0] if e.args else interrupted}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except NotPublished as e:
        if e.interrupted:
            print(f"interrupted: {e}", file=sys.stderr)
            return EXIT_INTERRUPTED
        error(str(e))
        return EXIT_USER_ERROR
    except (WarehouseError, OSError) as e:  # OSError: the disk or the network, not the command
        error(describe(e))
        return EXIT_USER_ERROR
