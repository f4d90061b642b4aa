"""Memory of a load whose games are mostly comment text: gigabytes of text from a few hundred KB of .zst.

    python bench/bench_memory.py [--games 45] [--comment-mb 50]

The input of issue 16, item 5 at full size: 45 games of one 50 MB comment each (2.25 GB of text, more than
an Arrow string column's 2 GiB), stored whole, then the same games made illegal (every one rejected). Prints
wall time and peak RSS of each load beside the text's size; the documented bound is in
docs/operations.md (Limits). Not a test: it prints figures, it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import zstandard
from bench_load import run_measured


def write_input(path: Path, games: int, comment_mb: int, *, illegal: bool) -> Path:
    comment = "c" * (comment_mb << 20)
    move = "Ke2" if illegal else "Nf6"
    with path.open("wb") as f, zstandard.ZstdCompressor(level=1, threads=-1).stream_writer(f) as z:
        for i in range(games):
            z.write(f'[Event "{i}"]\n\n1. e4 {{{comment}}} e5 2. Nf3 {move} *\n\n'.encode())
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=45)
    parser.add_argument("--comment-mb", type=int, default=50)
    args = parser.parse_args()
    text_gb = args.games * args.comment_mb / 1024
    with tempfile.TemporaryDirectory() as work:
        for illegal in (False, True):
            source = Path(work) / f"in-{illegal}.pgn.zst"
            write_input(source, args.games, args.comment_mb, illegal=illegal)
            lake = Path(work) / f"lake-{illegal}"
            command = [sys.executable, "-m", "loaders.pgn2parquet", str(source), "--lake", str(lake)]
            wall, cpu, rss = run_measured([*command, "--progress", "never"])
            (record,) = [json.loads(p.read_text()) for p in (lake / "_loads").glob("*.json")]
            rejects = sum(p.stat().st_size for p in (lake / "rejects").glob("*.jsonl"))
            print(
                f"{'rejected' if illegal else 'stored'}: {args.games} games, {text_gb:.2f} GB of text in "
                f"{source.stat().st_size / 1e3:.0f} KB of .zst: {record['games_written']} written, "
                f"{record['games_rejected']} rejected ({rejects / 1e6:.2f} MB of rejects), "
                f"{wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {rss} MB"
            )


if __name__ == "__main__":
    main()
