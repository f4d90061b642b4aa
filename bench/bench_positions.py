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
    CPU seconds, games per CPU-second, bytes per game; built without the explorer's pre-aggregate, then
    with it (the difference: its cost), and its bytes;
  - the same searches with the index: the first on a new connection (cold: no metadata read yet in the
    process; the OS's file cache is warm), then the best of --repeat, and the index lookup's share;
  - the explorer (`warehouse.positions.explorer.explore`) at plies 0, 2, 10, 14 and 30 of a line: without the
    index (the replay scan), then with it, cold and warm (its pre-aggregate where it holds the position),
    warm by the row path (`pre_aggregate=False`: the games' moves), and `sql/explorer.sql` alone (DuckDB
    reading the index: the duckdb CLI's path), wall and the process's CPU seconds, best of --repeat;
  - the replay kernel (`_core.position_keys` over every ply of 50,000 games): plies/CPU-s;
  - bytes per game, zstd Parquet as written: plies.key, games.final_key, the opening columns.
--explorer-only: the index's builds and the explorer with it alone. Not a test: it prints figures, it asserts
nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's warehouse, when run as a script

from bench_load import run_measured  # noqa: E402  (bench/ is on the path of a script run from it)
from bench_sql import build_lake  # noqa: E402

from warehouse import _core  # noqa: E402
from warehouse.lake.location import Lake  # noqa: E402
from warehouse.positions import aggregate, index  # noqa: E402
from warehouse.positions.book import Filters, build  # noqa: E402
from warehouse.positions.explorer import explore  # noqa: E402
from warehouse.positions.search import position_key, search  # noqa: E402
from warehouse.queries.sql import connect, query  # noqa: E402

# Positions of a line the bench dump's games play (1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. Ng5 d5 5. exd5 Na5
# 6. Nxf7 Kxf7 7. d6 Ke8), each before ply 2, 9 and 14 (as python-chess gives them): plies 2 and 9 are
# stored keys, ply 14 needs the replay scan or the index.
PROBES = {
    2: "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    9: "r1bqkb1r/ppp2ppp/2n2n2/3Pp1N1/2B5/8/PPPP1PPP/RNBQK2R b KQkq - 0 5",
    14: "r1bqkb1r/ppp3pp/3P1n2/n3p3/2B5/8/PPPP1PPP/RNBQK2R w KQ - 1 8",
}

# Positions of a line the dump's games play (1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. Nc3 Bc5 5. Ng5 O-O 6. O-O h6
# 7. Nf3 d6 8. d3 Bg4 9. h3 Bh5 10. Be3 Bb4 11. a3 Bxc3 12. bxc3 Re8 13. Bb3 d5 14. exd5 Nxd5 15. c4 Nf6),
# before plies 0, 2, 10, 14 and 30 (as python-chess gives them), for the explorer.
EXPLORER_PROBES = {
    0: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    2: "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    10: "r1bq1rk1/pppp1ppp/2n2n2/2b1p1N1/2B1P3/2N5/PPPP1PPP/R1BQK2R w KQ - 8 6",
    14: "r1bq1rk1/ppp2pp1/2np1n1p/2b1p3/2B1P3/2N2N2/PPPP1PPP/R1BQ1RK1 w - - 0 8",
    30: "r2qr1k1/ppp2pp1/2n2n1p/4p2b/2P5/PB1PBN1P/2P2PP1/R2Q1RK1 w - - 1 16",
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


def best_of(repeat: int, run: Callable[[], object]) -> tuple[float, float]:
    """Best wall and CPU seconds of `repeat` runs of `run`."""
    runs = []
    for _ in range(repeat):
        wall, used = time.perf_counter(), cpu()
        run()
        runs.append((time.perf_counter() - wall, cpu() - used))
    return min(runs)


def explorer_games(moves: pl.DataFrame) -> int:
    return int(moves["games"].sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--no-twice", dest="twice", action="store_false", help="no book on a lake twice as large"
    )
    parser.add_argument("--book-only", action="store_true", help="the book's figures alone")
    parser.add_argument(
        "--explorer-only",
        action="store_true",
        help="the index's build (with its pre-aggregate and without) and the explorer with it alone",
    )
    args = parser.parse_args()
    lake = build_lake(args.games)
    con = connect(lake)
    ((games,),) = con.sql("select count(*) from games").fetchall()
    print(f"{lake}: {games:,} games; load average {os.getloadavg()[0]:.2f}")

    for max_ply in [] if args.explorer_only else BOOK_DEPTHS:
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
    for rss_lake in (
        [] if args.explorer_only else [lake, build_lake(2 * args.games)] if args.twice else [lake]
    ):
        with tempfile.TemporaryDirectory(dir=rss_lake.parent) as out:
            command = [sys.executable, "-m", "loaders.book", "--lake", str(rss_lake), f"{out}/book.bin"]
            wall, used, rss = run_measured([*command, "--max-ply", "30", "--min-games", "5"])
        print(f"book command on {rss_lake.name}: peak RSS {rss:,} MB, {wall:.1f} s wall, {used:.2f} s CPU")
    if args.book_only:
        return

    for ply, fen in {} if args.explorer_only else PROBES.items():
        for deep in (False, True):
            best, found = float("inf"), 0
            for _ in range(args.repeat):
                start = time.perf_counter()
                found = len(search(fen, lake, deep=deep, index=False, con=con))
                best = min(best, time.perf_counter() - start)
            print(
                f"search ply {ply:2} {'deep' if deep else 'stored'}, no index: {found:,} games, {best:.3f} s"
            )

    for ply, fen in {} if args.explorer_only else EXPLORER_PROBES.items():
        played = explorer_games(explore(fen, lake, con=con, index=False))
        wall, used = best_of(args.repeat, lambda fen=fen: explore(fen, lake, con=con, index=False))
        print(f"explorer ply {ply:2}, no index (replay): {played:,} games, {wall:.3f} s ({used:.2f} CPU-s)")

    # Without the explorer's pre-aggregate (no position is that frequent), then with it (the default).
    for frequent_games in (sys.maxsize, aggregate.FREQUENT_GAMES):
        wall, used = time.perf_counter(), cpu()
        record = index.build(Lake.open(lake), frequent_games=frequent_games)
        wall, used = time.perf_counter() - wall, cpu() - used
        size = sum((lake / rel).stat().st_size for rel in record.index_files)
        extra = sum((lake / rel).stat().st_size for rel in record.explorer_files)
        print(
            f"index: {record.positions:,} positions, {len(record.index_files)} files, {wall:.2f} s wall, "
            f"{used:.2f} s CPU, {games / used:,.0f} games/CPU-s, {size / games:.1f} B/game; the explorer's "
            f"pre-aggregate of positions {frequent_games:,} games reach: {extra:,} bytes"
        )
    for ply, fen in {} if args.explorer_only else PROBES.items():
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

    for ply, fen in EXPLORER_PROBES.items():
        cold = connect(lake)
        wall, used = time.perf_counter(), cpu()
        played = explorer_games(explore(fen, lake, con=cold))
        first = time.perf_counter() - wall, cpu() - used
        warm = best_of(args.repeat, lambda fen=fen: explore(fen, lake, con=con))
        rows = best_of(args.repeat, lambda fen=fen: explore(fen, lake, con=con, pre_aggregate=False))
        con.execute("set variable explorer_fen = $fen", {"fen": fen})
        sql = best_of(args.repeat, lambda: query("explorer", con=con))
        print(
            f"explorer ply {ply:2} with the index: {played:,} games, cold {first[0]:.3f} s "
            f"({first[1]:.2f} CPU-s), warm {warm[0]:.3f} s ({warm[1]:.2f} CPU-s); the row path (no "
            f"pre-aggregate) warm {rows[0]:.3f} s ({rows[1]:.2f} CPU-s); "
            f"sql/explorer.sql {sql[0]:.3f} s ({sql[1]:.2f} CPU-s)"
        )
    con.execute("reset variable explorer_fen")
    if args.explorer_only:
        return

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
