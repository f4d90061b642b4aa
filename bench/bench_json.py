"""JSON import benchmark: games per CPU-second of `json2parquet` for BGN JSON-lines and for study JSON.

    python bench/bench_json.py [--games 20000]

The bench dump of bench_load.py (real lichess games, clocks on every move) is loaded into a lake and
exported both ways (BGN `.json.bz2`, study JSON-lines); each export is then imported into a new lake by
the command-line tool in its own process: wall time, CPU time (the Rust reader's threads included), peak
RSS. The PGN load of the same dump is shown beside them. Not a test: it prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench_load import build_dump, run_measured


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=20_000, help="games in the bench dump (default: 20,000)")
    args = p.parse_args()
    dump = build_dump(args.games)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = []

        def timed(name: str, *command: str) -> None:
            wall, cpu, rss = run_measured([sys.executable, "-m", *command])
            rows.append((name, args.games / wall, args.games / cpu, rss))

        timed("PGN load (.pgn.zst)", "loaders.pgn2parquet", str(dump), "--lake", str(work / "lake"))
        run_measured(
            [sys.executable, "-m", "loaders.parquet2json", str(work / "bgn"), "--lake", str(work / "lake")]
        )
        study = str(work / "study.jsonl")
        run_measured([sys.executable, "-m", "loaders.parquet2json", "--format", "study", "--lines", study,
                      "--lake", str(work / "lake")])  # fmt: skip
        timed(
            "BGN JSON import (.json.bz2)",
            "loaders.json2parquet",
            str(work / "bgn"),
            "--lake",
            str(work / "b"),
        )
        timed("study JSON import (.jsonl)", "loaders.json2parquet", study, "--lake", str(work / "s"))
        print(f"JSON import, {args.games:,}-game bench dump, {os.cpu_count()} cores:")
        print(f"  {'what':<28} {'games/s wall':>13} {'games/CPU-s':>12} {'peak RSS MB':>12}")
        for name, wall, cpu, rss in rows:
            print(f"  {name:<28} {wall:>13,.0f} {cpu:>12,.0f} {rss:>12,}")


if __name__ == "__main__":
    main()
