"""SQL library benchmark: games/s and games per CPU-second of every question over a lake of a million games.

    python bench/bench_sql.py [--games 1000000] [--repeat 3] [--threads N] [question ...]

Builds a multi-frame `.pgn.zst` of --games games (bench_load.build_dump: make-bench-dump) and loads it with
`python -m loaders.pgn2parquet` into bench/out/lake-<games>/ (both cached in bench/out/; delete the lake to
reload it after a loader change; a cached lake of an older layout is upgraded in place), then times each
question of sql/ (or those named) through `warehouse.query`, best of --repeat runs, and prints its wall and
CPU seconds (the process's, every DuckDB thread included), games/s and games per CPU-second, with the
machine's load average: CPU seconds grow when other processes share the cores. Beside each question it
times a baseline, a scan of one integer column of every ply (`BASELINE`), and prints the question's CPU
over the baseline's: a figure that does not drift with the machine's speed. Not a test: it prints
figures, it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from duckdb import DuckDBPyConnection

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's warehouse, when run as a script

from bench_load import OUT, build_dump  # noqa: E402  (bench/ is on the path of a script run from it)

from warehouse.lake.layout import LAYOUT  # noqa: E402
from warehouse.lake.location import Lake  # noqa: E402
from warehouse.queries.sql import connect, query, questions  # noqa: E402


def build_lake(games: int) -> Path:
    """bench/out/lake-<games>/, loaded from bench_load's dump of as many games; each built when missing, the
    lake upgraded when it is of an older layout."""
    lake = OUT / f"lake-{games}"
    if not (lake / "games").is_dir():
        command = [sys.executable, "-m", "loaders.pgn2parquet", str(build_dump(games)), "--lake", str(lake)]
        subprocess.run([*command, "--progress", "never"], cwd=ROOT, check=True)
    elif Lake.open(lake, any_layout=True).layout() != LAYOUT:
        subprocess.run([sys.executable, "-m", "loaders.upgrade", "--lake", str(lake)], cwd=ROOT, check=True)
    return lake


# The same-run baseline: a plain scan of one integer column of every ply through the views, the least a
# per-move question reads. This VM's speed drifts by up to 2x within a day; a question's CPU over the
# baseline's, measured beside it, does not.
BASELINE = "select count(ply) from plies"


def timed(
    run: Callable[[DuckDBPyConnection], object], lake: Path, threads: int | None, repeat: int
) -> tuple[float, float]:
    """Best (wall seconds, CPU seconds) of `repeat` runs of `run` over a fresh connection."""
    runs = []
    for _ in range(repeat):
        con = connect(lake)
        if threads:
            con.execute(f"set threads = {threads}")
        wall, cpu = time.perf_counter(), time.process_time()
        run(con)
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
        con.close()
    return min(runs)


def main() -> None:
    description = __doc__.split("\n\n")[0]
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, help="DuckDB threads (default: DuckDB's, one per core)")
    parser.add_argument("names", nargs="*", metavar="question", help="the questions to time (default: all)")
    args = parser.parse_args()
    if unknown := set(args.names) - set(questions()):
        parser.error(f"no question {', '.join(sorted(unknown))}; there are: {', '.join(questions())}")
    lake = build_lake(args.games)
    con = connect(lake)
    games, plies = con.sql("select count(*), sum(n_plies) from games").fetchall()[0]
    threads = args.threads or con.sql("select current_setting('threads')").fetchall()[0][0]
    con.close()
    sizes = [
        sum(path.stat().st_size for path in (lake / table).rglob("*.parquet")) for table in ("games", "plies")
    ]
    print(
        f"lake {lake}: {games:,} games, {plies:,} plies, Parquet: games/ {sizes[0] / 2**20:,.0f} MiB, "
        f"plies/ {sizes[1] / 2**20:,.0f} MiB"
    )
    print(f"{os.cpu_count()} cores, DuckDB threads {threads}, load average before {os.getloadavg()[0]:.2f}")
    print(f"{'query':<24}{'wall s':>8}{'CPU s':>8}{'games/s':>12}{'games/CPU-s':>14}{'x baseline':>12}")
    baselines = []
    for name in args.names or questions():
        # The baseline beside each question, so that both see the machine alike.
        baselines.append(timed(lambda con: con.sql(BASELINE).fetchall(), lake, args.threads, args.repeat)[1])
        wall, cpu = timed(lambda con, name=name: query(name, con=con), lake, args.threads, args.repeat)
        print(
            f"{name:<24}{wall:>8.2f}{cpu:>8.2f}{games / wall:>12,.0f}{games / cpu:>14,.0f}"
            f"{cpu / baselines[-1]:>12.2f}"
        )
    print(
        f"baseline ({BASELINE}): {min(baselines):.2f}-{max(baselines):.2f} CPU s, "
        f"{games / max(baselines):,.0f}-{games / min(baselines):,.0f} games/CPU-s"
    )
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
