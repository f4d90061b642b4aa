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
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, NoReturn, TypeVar

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130
T = TypeVar("T")


def interrupted_while_starting(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C before a command starts: nothing is done yet."""
    sys.stderr.write("interrupted: nothing was done\n")
    os._exit(EXIT_INTERRUPTED)


# Installed before the imports below; `run` puts Python's own handler back.
signal.signal(signal.SIGINT, interrupted_while_starting)

# Before numpy loads (the imports below): its OpenBLAS starts a thread a core that spins ~0.1 CPU-s, and no
# command multiplies matrices. A 438-game load took 0.76x the CPU without them (eight interleaved pairs,
# 2026-11-29). The user's own setting stands.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from warehouse import extras  # noqa: E402
from warehouse.errors import InputError, NotPublished, WarehouseError, describe  # noqa: E402
from warehouse.lake.storage import printable  # noqa: E402
from warehouse.queries import filters  # noqa: E402


def use_jemalloc() -> None:
    """pyarrow's buffers (Parquet encoding, compute) from jemalloc where pyarrow has it, unless the user
    chose a pool (`ARROW_DEFAULT_MEMORY_POOL`). Its default, mimalloc, gave freed pages back to the system
    and faulted fresh ones in again: with jemalloc a 200,000-game `--jobs 2` load took 0.95x the CPU and
    0.96x the wall, `--jobs 1` 0.98x, a BGN import 0.99x, each at a lower peak RSS (interleaved runs,
    2026-11-29). The system's pool did as well as jemalloc."""
    if "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
        return
    import pyarrow as pa

    with contextlib.suppress(NotImplementedError):  # a pyarrow built without jemalloc (Windows)
        pa.set_memory_pool(pa.jemalloc_memory_pool())


use_jemalloc()

# The command as the user typed it, when a dispatcher ran this one (`bgn load`): the name every parser shows
# in its usage instead of its own `python -m …` (see `invoked_as`).
INVOKED_AS: str | None = None


def invoked_as(name: str) -> None:
    """Names the command the parsers made from now on show (`bgn load`), for a dispatcher."""
    global INVOKED_AS
    INVOKED_AS = name


def command_name() -> str:
    """The command as the user typed it: `bgn load`, `python -m loaders.pgn2parquet`, or the script's name."""
    if INVOKED_AS is not None:
        return INVOKED_AS
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    return f"python -m {spec.name}" if spec is not None else os.path.basename(sys.argv[0])


class OneLineParser(argparse.ArgumentParser):
    """argparse with its errors as one line (`error: …`, exit 2) instead of the usage and the error, and
    its usage naming the command the user typed (`INVOKED_AS`, else its own `prog`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if INVOKED_AS is not None:
            kwargs["prog"] = INVOKED_AS
        super().__init__(*args, **kwargs)

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


def shared(parse: Callable[[str], T]) -> Callable[[str], T]:
    """An argparse `type` of one of the parsers the Python functions share (`queries.filters`): the value
    it refuses is a usage error (one line, exit 2), in its words."""

    def argument(text: str) -> T:
        try:
            return parse(text)
        except InputError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    argument.__name__ = parse.__name__  # what argparse names in its message
    return argument


def add_game_filters(parser: argparse.ArgumentParser, names: tuple[str, ...] = filters.NAMES) -> None:
    """The options of the game filters `names` (`queries.filters`), read as every command reads them."""
    options: dict[str, dict[str, Any]] = {
        "type": {"type": shared(filters.speed), "help": f"only games of this speed ({filters.SPEED_RULE})"},
        "min_rating": {"type": whole_number(0), "help": "mean Elo of the two players at least this"},
        "max_rating": {"type": whole_number(0), "help": "mean Elo of the two players at most this"},
        "since": {"type": shared(filters.date), "help": "games from this date (YYYY-MM-DD)"},
        "until": {"type": shared(filters.date), "help": "games up to this date, included"},
        "player": {"type": shared(filters.player), "help": "only the games of this player (either side)"},
    }
    for name in names:
        parser.add_argument(f"--{name.replace('_', '-')}", **options[name])


def game_filters(args: argparse.Namespace) -> filters.GameFilters:
    """The game filters of the options `add_game_filters` added (bounds that cross: `InputError`)."""
    return filters.GameFilters(**{name: getattr(args, name) for name in filters.NAMES if hasattr(args, name)})


# The position a command's FEN defaults to.
STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
# `--line` of the commands that take a position: moves played from their FEN (`warehouse.positions.line`,
# python-chess: the `chess` extra, imported only when a line is given).
LINE_HELP = "moves played from the FEN (else the start), in SAN as PGN writes them: '1. e4 c5 2. Nf3'"


def position(fen: str, line: str | None, chess960: bool = False) -> str:
    """The FEN of the position after `line`'s moves from `fen`; `fen` itself without a line.

    :raises InputError: for a line that cannot be played from `fen` (see `position_after`)."""
    if line is None:
        return fen
    from warehouse.positions.line import position_after  # python-chess: the `chess` extra

    return position_after(fen, line, chess960)


def add_lake_argument(parser: argparse.ArgumentParser) -> None:
    """`--lake`, the same for every command (None: `warehouse.lake.default_lake()`)."""
    parser.add_argument(
        "--lake",
        default=None,
        type=location,
        help="lake directory or s3://bucket/prefix (default: $CHESS_LAKE, else ./lake if it exists); S3 "
        "credentials, region and endpoint come from the AWS_* environment variables",
    )


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
    except BrokenPipeError:
        return reader_gone()
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
    except ModuleNotFoundError as e:
        line = extras.missing(e, command_name())
        if line is None:
            raise
        error(line)
        return EXIT_USER_ERROR
    except Exception as e:
        damage = duckdb_damage(e)
        if damage is None:
            raise
        error(str(damage))
        return EXIT_USER_ERROR


def reader_gone() -> int:
    """Standard output's reader left (`bgn query … | head`): nothing more to say, and nothing is wrong.
    Later writes, and Python's flush at exit, go to /dev/null instead of raising again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0


def duckdb_damage(error: Exception) -> WarehouseError | None:
    """The `DamagedFile` a DuckDB error stands for when it says that a file of the lake is damaged; None
    for any other error (a bug, which keeps its traceback). Asked only of a command that loaded DuckDB."""
    if "duckdb" not in sys.modules:
        return None
    from warehouse.queries.sql import damaged_file

    return damaged_file(error)
