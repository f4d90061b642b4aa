"""Convert PGN (plain, .zst, .bz2, .gz, or `-` for stdin) into the BGN Parquet lake.

python -m loaders.pgn2parquet lichess_db_standard_rated_2024-01.pgn.zst [--lake DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from warehouse.lake import Lake, default_lake
from warehouse.load import LoadResult, PgnInputError, load_input


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m loaders.pgn2parquet",
        description="Convert PGN games into the BGN Parquet lake: one row per game, one struct per move. "
        "Games that cannot be read or replayed go to <lake>/rejects/ with their offset and a reason.",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="PGN file: plain, .zst (multi-frame, as lichess publishes), .bz2 or .gz — the format is "
        "read from the file's first bytes; `-` reads standard input",
    )
    p.add_argument(
        "--lake",
        type=Path,
        default=None,
        help="lake directory (default: $CHESS_LAKE, else ./lake)",
    )
    p.add_argument(
        "--batch-games",
        type=int,
        default=8192,
        help="games per Arrow batch handed from the Rust reader to the writer (default: 8192)",
    )
    p.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="progress bar on stderr: auto shows it when stderr is a terminal (default: auto)",
    )
    return p.parse_args(argv)


class ProgressBar:
    """One line on stderr: share of the compressed input read, games, games/s and ETA."""

    def __init__(self, name: str):
        self.name, self.start, self.last = name, time.monotonic(), 0.0

    def __call__(self, reader) -> None:
        now = time.monotonic()
        if now - self.last < 0.25:
            return
        self.last = now
        elapsed = max(now - self.start, 1e-9)
        done, size = reader.raw_bytes_read, reader.input_size
        games = reader.games_seen
        line = f"{self.name}: {games:,} games  {games / elapsed:,.0f} games/s  {done / 1e6:,.1f} MB"
        if size:
            share = min(done / size, 1.0)
            eta = elapsed * (1 - share) / share if share > 0 else 0
            line += f" of {size / 1e6:,.1f} MB  {share:6.1%}  ETA {_hms(eta)}"
        sys.stderr.write("\r" + line[:150].ljust(150))
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\r" + " " * 150 + "\r")


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def summary(r: LoadResult) -> str:
    rate = r.games_seen / r.seconds if r.seconds else 0.0
    text = (
        f"{r.input}: {r.games_seen:,} games seen = {r.games_written:,} written + "
        f"{r.games_rejected:,} rejected, {len(r.files)} files, {r.seconds:.1f} s ({rate:,.0f} games/s)"
    )
    if r.rejects_file:
        text += f"\n  rejects: {r.rejects_file}"
    if r.damage:
        text += f"\n  warning: {r.damage}; the games before the damage were kept"
    return text


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    lake = Lake(args.lake or default_lake())
    show = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    status = 0
    for path in args.inputs:
        bar = ProgressBar(path) if show else None
        try:
            result = load_input(path, lake, progress=bar, batch_games=args.batch_games)
        except PgnInputError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 2
            continue
        except KeyboardInterrupt:
            if bar:
                bar.close()
            print(f"interrupted: nothing of {path} was added to the lake", file=sys.stderr)
            return 130
        except OSError as e:
            print(f"error: {path}: {e.strerror or e} ({e.filename or lake.root})", file=sys.stderr)
            status = 1
            continue
        if bar:
            bar.close()
        print(summary(result))
    return status


if __name__ == "__main__":
    sys.exit(main())
