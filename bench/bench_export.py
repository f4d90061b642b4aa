"""Export benchmark: games/s of the BGN JSON (bz2) and PGN exports, and bytes per game of each format.

    python bench/bench_export.py [--games 200000]

Speed: the bench dump of bench_load.py (real lichess games, clocks on every move) is loaded into a lake,
then exported by the command-line tools, each in its own process: wall time, CPU time, peak RSS.
Size: on the bundled sample (438 real games, none repeated), bytes per game of the source `.pgn.zst`, the
lake's Parquet files, the `.json.bz2` export and the `.pgn.zst` export. The bench dump repeats its games,
which flatters every compressor, so its sizes are shown apart.
Not a test: it prints figures, it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench_load import ROOT, build_dump, run_measured

SAMPLE = ROOT / "tests" / "data" / "lichess_2025-05_sample.pgn.zst"


def load(source: Path, lake: Path) -> None:
    command = ["-m", "loaders.pgn2parquet", str(source), "--lake", str(lake), "--progress", "never"]
    run_measured([sys.executable, *command])


def size(path: Path, pattern: str) -> int:
    return sum(p.stat().st_size for p in path.rglob(pattern)) if path.is_dir() else path.stat().st_size


def sizes(source: Path, games: int, work: Path) -> dict[str, float]:
    """Bytes per game of `source`, of its lake (`work/lake`) and of its exports (`work/json`, `work/pgn`)."""
    return {
        "source .pgn.zst": source.stat().st_size / games,
        "lake (zstd Parquet)": size(work / "lake" / "games", "*.parquet") / games,
        "export .json.bz2": size(work / "json", "*.json.bz2") / games,
        "export .pgn.zst": size(work / "games.pgn.zst", "*") / games,
    }


def export(work: Path, games: int) -> list[tuple[str, float, float, int]]:
    """Runs both exports of `work/lake`; returns (what, games/s wall, games per CPU-second, peak RSS MB)."""
    rows = []
    for name, module, out in [
        ("JSON export (.json.bz2)", "loaders.parquet2json", work / "json"),
        ("PGN export (.pgn.zst)", "loaders.parquet2pgn", work / "games.pgn.zst"),
    ]:
        wall, cpu, rss = run_measured([sys.executable, "-m", module, "--lake", str(work / "lake"), str(out)])
        rows.append((name, games / wall, games / cpu, rss))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=200_000, help="games in the bench dump (default: 200,000)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sample, dump_work = Path(tmp) / "sample", Path(tmp) / "dump"
        load(SAMPLE, sample / "lake")
        export(sample, 438)
        print("bytes per game, bundled sample (438 real games):")
        for name, value in sizes(SAMPLE, 438, sample).items():
            print(f"  {name:<22} {value:>8,.0f}")
        dump = build_dump(args.games)
        load(dump, dump_work / "lake")
        print(f"\nexport speed, {args.games:,}-game bench dump, {os.cpu_count()} cores:")
        print(f"  {'what':<26} {'games/s wall':>13} {'games/CPU-s':>12} {'peak RSS MB':>12}")
        for name, wall, cpu, rss in export(dump_work, args.games):
            print(f"  {name:<26} {wall:>13,.0f} {cpu:>12,.0f} {rss:>12,}")
        print("\nbytes per game, bench dump (its games repeat: every compressor looks better):")
        for name, value in sizes(dump, args.games, dump_work).items():
            print(f"  {name:<22} {value:>8,.0f}")


if __name__ == "__main__":
    main()
