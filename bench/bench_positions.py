"""Positions benchmark over a lake of a million games: book build speed, FEN search latency without and with
the position index, the index's build speed and size, the kernel's plies/s, and the bytes per game of the
stored keys.

    python bench/bench_positions.py [--games 1000000] [--repeat 3]

The lake is bench_sql's (bench/out/lake-<games>/, built when missing from bench_load's dump; delete it to
reload after a loader change: a lake loaded before the position columns existed has no keys). Prints:
  - the book (`warehouse.positions.book.build`) to depth 30 with --min-games 5, the issue's case: CPU
    seconds (the process's, every thread included) and wall seconds of the run of least CPU of --repeat,
    games per CPU-second; then the same at other depths (9: the stored keys' depth before; 20, 40, every ply);
  - the peak RSS of `python -m loaders.book` writing that book (.bin), on this lake and on one twice as large
    (bench/out/lake-<2 x games>/, built when missing; --no-twice skips it), with the default memory budget;
  - search by FEN (`warehouse.positions.search`) of positions at plies 2, 9 (stored keys) and 14 (replay
    scan), without the index: wall seconds with and without the scan (`deep`), best of --repeat, on a warm
    connection;
  - the position index (`warehouse.positions.index.build`, rebuilt: it replaces the lake's index): wall and
    CPU seconds, games per CPU-second, bytes per game;
  - the same searches with the index: the first on a new connection (cold: no metadata read yet in the
    process; the OS's file cache is warm), then the best of --repeat, and the index lookup's share;
  - the replay kernel (`_core.position_keys` over every ply of 50,000 games): plies/CPU-s;
  - bytes per game, zstd Parquet as written: plies.key, games.final_key, the opening columns.
Not a test: it prints figures, it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's warehouse, when run as a script

from bench_load import run_measured  # noqa: E402  (bench/ is on the path of a script run from it)
from bench_sql import build_lake  # noqa: E402

from warehouse import _core  # noqa: E402
from warehouse.lake.location import Lake  # noqa: E402
from warehouse.positions import index  # noqa: E402
from warehouse.positions.book import Filters, build  # noqa: E402
from warehouse.positions.search import position_key, search  # noqa: E402
from warehouse.sql import connect  # noqa: E402

# Positions of a line the bench dump's games play (1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. Ng5 d5 5. exd5 Na5
# 6. Nxf7 Kxf7 7. d6 Ke8), each before ply 2, 9 and 14 (as python-chess gives them): plies 2 and 9 are
# stored keys, ply 14 needs the replay scan or the index.
PROBES = {
    2: "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    9: "r1bqkb1r/ppp2ppp/2n2n2/3Pp1N1/2B5/8/PPPP1PPP/RNBQK2R b KQkq - 0 5",
    14: "r1bqkb1r/ppp3pp/3P1n2/n3p3/2B5/8/PPPP1PPP/RNBQK2R w KQ - 1 8",
}


# The book's depths measured: the issue's 30 first; 9, the stored keys' depth the book stopped at before; the
# last, every ply of every game.
BOOK_DEPTHS = (30, 9, 20, 40, 1_000)


def cpu() -> float:
    times = os.times()
    return times.user + times.system


def bytes_per_game(lake: Path, table: str, columns: tuple[str, ...]) -> dict[str, float]:
    sizes = dict.fromkeys(columns, 0)
    games = 0
    for path in (lake / table).rglob("*.parquet"):
        meta = pq.read_metadata(path)
        names = [meta.schema.column(i).path for i in range(meta.num_columns)]
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for i, name in enumerate(names):
                if name in sizes:
                    sizes[name] += group.column(i).total_compressed_size
        if table == "games":
            games += meta.num_rows
    return {name: size for name, size in sizes.items()} | {"games": games}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--no-twice", dest="twice", action="store_false", help="no book on a lake twice as large"
    )
    parser.add_argument("--book-only", action="store_true", help="the book's figures alone")
    args = parser.parse_args()
    lake = build_lake(args.games)
    con = connect(lake)
    ((games,),) = con.sql("select count(*) from games").fetchall()
    print(f"{lake}: {games:,} games; load average {os.getloadavg()[0]:.2f}")

    for max_ply in BOOK_DEPTHS:
        runs = []
        for _ in range(args.repeat):
            wall, used = time.perf_counter(), cpu()
            book = build(con, Filters(min_games=5), max_ply=max_ply)
            runs.append((cpu() - used, time.perf_counter() - wall))
        used, wall = min(runs)
        print(
            f"book to ply {max_ply:,}, --min-games 5: {book.num_rows:,} rows, {wall:.2f} s wall, "
            f"{used:.2f} s CPU, {games / used:,.0f} games/CPU-s"
        )
    for rss_lake in [lake, build_lake(2 * args.games)] if args.twice else [lake]:
        with tempfile.TemporaryDirectory(dir=rss_lake.parent) as out:
            command = [sys.executable, "-m", "loaders.book", "--lake", str(rss_lake), f"{out}/book.bin"]
            wall, used, rss = run_measured([*command, "--max-ply", "30", "--min-games", "5"])
        print(f"book command on {rss_lake.name}: peak RSS {rss:,} MB, {wall:.1f} s wall, {used:.2f} s CPU")
    if args.book_only:
        return

    for ply, fen in PROBES.items():
        for deep in (False, True):
            best, found = float("inf"), 0
            for _ in range(args.repeat):
                start = time.perf_counter()
                found = len(search(fen, lake, deep=deep, index=False, con=con))
                best = min(best, time.perf_counter() - start)
            print(
                f"search ply {ply:2} {'deep' if deep else 'stored'}, no index: {found:,} games, {best:.3f} s"
            )

    wall, used = time.perf_counter(), cpu()
    record = index.build(Lake.open(lake))
    wall, used = time.perf_counter() - wall, cpu() - used
    size = sum((lake / rel).stat().st_size for rel in record.index_files)
    print(
        f"index: {record.positions:,} positions, {len(record.index_files)} files, {wall:.2f} s wall, "
        f"{used:.2f} s CPU, {games / used:,.0f} games/CPU-s, {size / games:.1f} B/game"
    )
    for ply, fen in PROBES.items():
        cold = connect(lake)
        start = time.perf_counter()
        found = len(search(fen, lake, con=cold))
        first = time.perf_counter() - start
        best = lookup = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            search(fen, lake, con=con)
            best = min(best, time.perf_counter() - start)
            start = time.perf_counter()
            opened = index.PositionIndex.open(Lake.open(lake))
            assert opened is not None
            opened.lookup(position_key(fen))
            lookup = min(lookup, time.perf_counter() - start)
        print(
            f"search ply {ply:2} with the index: {found:,} games, cold {first:.3f} s, warm {best:.3f} s "
            f"(index lookup {lookup:.3f} s)"
        )

    path = next((lake / "games").rglob("*.parquet"))
    # DuckDB reads the nested moves of a big row group, which pyarrow's reader refuses to chunk.
    sample = con.sql(f"select game_id, moves, start_fen, variant from read_parquet('{path}') limit 50000")
    batch = sample.to_arrow_table().combine_chunks().to_batches()[0]
    plies = len(batch.column("moves").flatten())
    start = cpu()
    _core.position_keys(batch, 1 << 30)
    print(f"kernel: {plies:,} plies, {plies / (cpu() - start) / 1e6:.1f} M plies/CPU-s")

    plies_sizes = bytes_per_game(lake, "plies", ("key",))
    games_sizes = bytes_per_game(lake, "games", ("final_key", "opening_eco", "opening_name", "opening_code"))
    n = games_sizes.pop("games")
    for name, size in {
        **{f"plies.{k}": v for k, v in plies_sizes.items() if k != "games"},
        **games_sizes,
    }.items():
        print(f"{name}: {size / n:.1f} B/game")


if __name__ == "__main__":
    main()
