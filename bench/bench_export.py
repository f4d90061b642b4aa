"""Export benchmark: games/s of the BGN JSON (bz2, zstd), PGN and study JSON (`--lines`) exports, and bytes
per game of each format.

    python bench/bench_export.py [--games 200000] [--lake LAKE]

Speed: the bench dump of bench_load.py (real lichess games, clocks on every move) is loaded into a lake
(or `--lake`, a lake of it loaded before), then exported by the command-line tools, each in its own
process: wall time, CPU time, peak RSS. Beside each, the compressor alone on the same bytes, in the same
run: the `bzip2` / `zstd` command (one core) compressing the export's own text (decompressed from it).
Size: on the bundled sample (438 real games, none repeated), bytes per game of the source `.pgn.zst`, the
lake's Parquet files, the `.json.bz2` export and the `.pgn.zst` export. The bench dump repeats its games,
which flatters every compressor, so its sizes are shown apart.
Not a test: it prints figures, it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
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


def sizes(source: Path, games: int, lake: Path, work: Path) -> dict[str, float]:
    """Bytes per game of `source`, of its lake and of its exports (in `work`)."""
    return {
        "source .pgn.zst": source.stat().st_size / games,
        "lake (zstd Parquet)": size(lake / "games", "*.parquet") / games,
        "export .json.bz2": size(work / "json", "*.json.bz2") / games,
        "export .json.zst": size(work / "json-zst", "*.json.zst") / games,
        "export .pgn.zst": size(work / "games.pgn.zst", "*") / games,
    }


# What each export run writes: (what, module, output under the work folder, extra options, compressor).
EXPORTS = [
    ("JSON export (.json.bz2)", "loaders.parquet2json", "json", [], ["bzip2", "-9"]),
    ("JSON export (.json.zst)", "loaders.parquet2json", "json-zst", ["--compression", "zst"], ["zstd", "-6"]),
    ("PGN export (.pgn.zst)", "loaders.parquet2pgn", "games.pgn.zst", [], ["zstd", "-6"]),
    (
        "study export (.jsonl.zst)",
        "loaders.parquet2json",
        "study.jsonl.zst",
        ["--format", "study", "--lines"],
        ["zstd", "-6"],
    ),
]


def export(lake: Path, work: Path, games: int) -> list[tuple[str, float, float, int, float]]:
    """Runs the exports of `lake` into `work`; returns (what, games/s wall, games per CPU-second, peak RSS
    MB, the compressor's games per CPU-second alone on the same text)."""
    rows = []
    for name, module, out, options, compressor in EXPORTS:
        command = [sys.executable, "-m", module, "--lake", str(lake), str(work / out), *options]
        wall, cpu, rss = run_measured(command)
        rows.append((name, games / wall, games / cpu, rss, games / compressor_cpu(work / out, compressor)))
    return rows


def compressor_cpu(out: Path, compressor: list[str]) -> float:
    """CPU seconds of `compressor` (one core) compressing the text of the export `out` (a file or a folder
    of files), decompressed into a temporary file first."""
    files = sorted(p for p in out.rglob("*") if p.is_file()) if out.is_dir() else [out]
    with tempfile.NamedTemporaryFile(dir=out.parent) as text:
        for path in files:
            subprocess.run([compressor[0], "-dc", str(path)], stdout=text, check=True)
        text.flush()
        return run_measured([*compressor, "-c", text.name])[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=200_000, help="games in the bench dump (default: 200,000)")
    p.add_argument("--lake", type=Path, help="a lake of the bench dump loaded before (default: loaded now)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sample, dump_work = Path(tmp) / "sample", Path(tmp) / "dump"
        load(SAMPLE, sample / "lake")
        export(sample / "lake", sample, 438)
        print("bytes per game, bundled sample (438 real games):")
        for name, value in sizes(SAMPLE, 438, sample / "lake", sample).items():
            print(f"  {name:<22} {value:>8,.0f}")
        dump = build_dump(args.games)
        lake = args.lake or dump_work / "lake"
        if not args.lake:
            load(dump, lake)
        dump_work.mkdir(exist_ok=True)
        print(f"\nexport speed, {args.games:,}-game bench dump, {os.cpu_count()} cores:")
        print(
            f"  {'what':<26} {'games/s wall':>13} {'games/CPU-s':>12} {'peak RSS MB':>12} "
            f"{'compressor alone, games/CPU-s':>30} {'export CPU / compressor CPU':>28}"
        )
        for name, wall, cpu, rss, alone in export(lake, dump_work, args.games):
            print(
                f"  {name:<26} {wall:>13,.0f} {cpu:>12,.0f} {rss:>12,} {alone:>30,.0f} {alone / cpu:>28.2f}"
            )
        print("\nbytes per game, bench dump (its games repeat: every compressor looks better):")
        for name, value in sizes(dump, args.games, lake, dump_work).items():
            print(f"  {name:<22} {value:>8,.0f}")


if __name__ == "__main__":
    main()
