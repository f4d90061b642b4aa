"""Spark load benchmark: games/s of `loaders.spark_pgn2parquet` in local[1] and local[2] on the same dump,
beside the local loader (`loaders.pgn2parquet --jobs 1`).

    python bench/bench_spark.py [--games 200000] [--masters 'local[1]' 'local[2]']

The dump is bench_load's (../shared/tools/make-bench-dump, cached in bench/out/): multi-frame zstd with
64 MB frames, so a Spark load runs a task per frame. Each load writes a fresh lake with the game_id check
off (the dump repeats real games). Two figures per run: the load itself (its record's seconds: planning,
the tasks, the commit) and the whole command (JVM start included). Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench_load import ROOT, build_dump, run_measured


def load_seconds(lake: Path) -> tuple[int, float]:
    """Games seen and seconds of the lake's one load, from its record."""
    (record,) = [json.loads(p.read_text()) for p in (lake / "_loads").glob("*.json")]
    return record["games_seen"], record["seconds"]


def measure(command: list[str], dump: Path) -> tuple[int, float, float]:
    """(games, load seconds, command wall seconds) of one load of `dump` into a fresh lake."""
    with tempfile.TemporaryDirectory() as tmp:
        lake = Path(tmp) / "lake"
        start = time.perf_counter()
        run_measured([sys.executable, "-m", *command, str(dump), "--lake", str(lake), "--allow-duplicates"])
        wall = time.perf_counter() - start
        games, seconds = load_seconds(lake)
    return games, seconds, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200_000)
    ap.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    args = ap.parse_args()
    dump = build_dump(args.games)
    runs = [("pgn2parquet --jobs 1", ["loaders.pgn2parquet", "--progress", "never", "--jobs", "1"])]
    runs += [(f"spark_pgn2parquet {m}", ["loaders.spark_pgn2parquet", "--master", m]) for m in args.masters]
    print(f"dump: {dump.relative_to(ROOT)}, {dump.stat().st_size / 1e6:.1f} MB")
    print(f"{'loader':32s} {'games':>9s} {'load s':>7s} {'games/s':>9s} {'wall s':>7s} {'games/s wall':>13s}")
    for name, command in runs:
        games, seconds, wall = measure(command, dump)
        print(
            f"{name:32s} {games:9,} {seconds:7.1f} {games / seconds:9,.0f} {wall:7.1f} {games / wall:13,.0f}"
        )


if __name__ == "__main__":
    main()
