"""The progress line a long command draws on stderr (`--progress`): a load's (compressed bytes of its
inputs read) and an export's (games of the lake read), with games/s and the time left."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from warehouse.ingest.load import Reading

WIDTH = 150


def add_progress_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="progress bar on stderr: auto shows it when stderr is a terminal (default: auto)",
    )


def shows_progress(args: argparse.Namespace) -> bool:
    return bool(args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty()))


class _Line:
    """One line on stderr, redrawn at most four times a second, cleared by `close`."""

    def __init__(self, name: str):
        self.name, self.start, self.last = name, time.monotonic(), 0.0

    def draw(self, counted: str, games: int, amount: str, done: float, total: float | None) -> None:
        """`counted` (the games), their rate, `amount` (what was read), and the share `done` is of `total`
        with the time left."""
        now = time.monotonic()
        if now - self.last < 0.25:
            return
        self.last = now
        elapsed = max(now - self.start, 1e-9)
        line = f"{self.name}: {counted}  {games / elapsed:,.0f} games/s" + (f"  {amount}" if amount else "")
        if total:
            share = min(done / total, 1.0)
            eta = elapsed * (1 - share) / share if share > 0 else 0
            line += f"  {share:6.1%}  ETA {_hms(eta)}"
        sys.stderr.write("\r" + line[:WIDTH].ljust(WIDTH))
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\r" + " " * WIDTH + "\r")


class ProgressBar(_Line):
    """A load's line: games, games/s, the share of its inputs' compressed bytes read and ETA."""

    def __call__(self, reader: Reading) -> None:
        done, size = reader.raw_bytes_read, reader.input_size
        amount = f"{done / 1e6:,.1f} MB" + (f" of {size / 1e6:,.1f} MB" if size else "")
        self.draw(f"{reader.games_seen:,} games", reader.games_seen, amount, done, size)


class ExportBar(_Line):
    """An export's line: the lake's games read of those to read (a filter's kept games are fewer), games
    read per second, share and ETA."""

    def __call__(self, done: int, total: int) -> None:
        self.draw(f"{done:,} of {total:,} games read", done, "", done, total)


@contextmanager
def export_bar(args: argparse.Namespace, out: str) -> Iterator[ExportBar | None]:
    """The export's line when `--progress` shows one (else None), cleared however the export ends."""
    bar = ExportBar(out) if shows_progress(args) else None
    try:
        yield bar
    finally:
        if bar is not None:
            bar.close()


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
