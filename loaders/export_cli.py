"""What the export commands share: the lake and selection options, and how a run ends.

Exit codes: 0 done; 2 a user error (a bad option or path, a missing lake, a selection matching nothing,
an output that exists, a failing disk or server), one line on stderr; 130 interrupted (Ctrl-C), one line
saying what was left; 1 only for a bug, with its traceback.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import NoReturn, TypeVar

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


def interrupted_while_starting(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C before an export starts (the libraries below take ~0.5 s to load): nothing is written yet."""
    sys.stderr.write("interrupted: nothing was written\n")
    os._exit(EXIT_INTERRUPTED)


# Installed before the imports below, so that Ctrl-C while they load is one line too.
signal.signal(signal.SIGINT, interrupted_while_starting)

from warehouse.export_out import OutputError  # noqa: E402
from warehouse.lake import default_lake  # noqa: E402
from warehouse.lake_scan import SPEEDS, LakeError, Selection  # noqa: E402
from warehouse.storage import StorageError  # noqa: E402

T = TypeVar("T")
# What a user can get wrong; anything else is a bug and keeps its traceback.
USER_ERRORS = (LakeError, StorageError, OutputError)
MAX_YEAR = 9999


class ArgumentParser(argparse.ArgumentParser):
    """argparse with its errors as one line (`error: …`, exit 2) instead of the usage and the error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER_ERROR, f"error: {message} (see --help)\n")


def location(text: str) -> str:
    """A path or URL argument: not empty, and UTF-8 (pyarrow's filesystems take only UTF-8 paths; a name
    of other bytes reaches Python as surrogate escapes)."""
    if not text:
        raise argparse.ArgumentTypeError("empty path")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise argparse.ArgumentTypeError(
            f"{shown}: not a UTF-8 name, which the exports cannot write"
        ) from None
    return text


def bounded(low: int, high: int | None, what: str) -> Callable[[str], int]:
    """An integer option's type: `low` ≤ value (≤ `high`)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is not {what}")
        return value

    return parse


def speed(text: str) -> str:
    if text not in SPEEDS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a speed ({', '.join(SPEEDS)})")
    return text


def add_selection_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--lake",
        default=None,
        type=location,
        help="lake directory or s3://bucket/prefix (default: $CHESS_LAKE, else ./lake); S3 credentials, "
        "region and endpoint come from the AWS_* environment variables",
    )
    p.add_argument(
        "--type",
        action="append",
        dest="types",
        type=speed,
        metavar="TYPE",
        help=f"only games of this speed ({', '.join(SPEEDS)}); repeat for several",
    )
    p.add_argument(
        "--year",
        action="append",
        dest="years",
        type=bounded(0, MAX_YEAR, f"a year (0-{MAX_YEAR}, 0 for unknown dates)"),
        metavar="YYYY",
        help="only this year (0: games of unknown date); repeatable",
    )
    p.add_argument(
        "--month",
        action="append",
        dest="months",
        type=bounded(0, 12, "a month (1-12, 0 for unknown dates)"),
        metavar="M",
        help="only this month (1-12; 0: games of unknown date); repeatable",
    )


def lake_location(lake: str | None) -> str:
    return lake or location(default_lake())


def selection(args: argparse.Namespace) -> Selection:
    return Selection(types=args.types, years=args.years, months=args.months)


class Interrupts:
    """Ctrl-C during an export: raises KeyboardInterrupt (so that the export drops what it wrote) and
    remembers it, since DuckDB turns it into its own error when it lands during a query."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True
        raise KeyboardInterrupt


def run_export(export: Callable[[], T], report: Callable[[T], None], interrupted: str) -> int:
    """Runs `export()`, then `report(result)`; returns the exit code. A user error is one line on stderr;
    an interrupt is `interrupted: <interrupted>` (what the export left, which the caller knows)."""
    interrupts = Interrupts()
    signal.signal(signal.SIGINT, interrupts)
    try:
        result = export()
    except BaseException as e:
        if interrupts.seen:
            print(f"interrupted: {interrupted}", file=sys.stderr)
            return EXIT_INTERRUPTED
        if isinstance(e, USER_ERRORS):
            print(f"error: {e}", file=sys.stderr)
        elif isinstance(e, OSError):  # the disk or the network, not the export
            print(f"error: {os_error_text(e)}", file=sys.stderr)
        else:
            raise
        return EXIT_USER_ERROR
    # The output is complete: Ctrl-C now would only lose the summary line.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    report(result)
    return 0


def os_error_text(e: OSError) -> str:
    """One line: `path: reason` for the system's errors; the first line of pyarrow's (S3) messages."""
    if e.strerror:
        return f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    return str(e).splitlines()[0]
