"""Convert PGN into the BGN Parquet lake on a Spark cluster: one task per input, the same lake as
`python -m loaders.pgn2parquet` writes from the same inputs.

python -m loaders.spark_pgn2parquet 'months/*.pgn.zst' --lake s3://bucket/lake [--master URL]

Or under spark-submit: `spark-submit loaders/spark_pgn2parquet.py INPUT… --lake L`. Every executor needs
bgn-warehouse installed (its wheel); see docs/cluster.md.
"""

from __future__ import annotations

import argparse
import sys

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from loaders.pgn2parquet import summary
from warehouse.lake.location import Lake
from warehouse.lake.parquet import ROW_GROUP_GAMES
from warehouse.load import BATCH_GAMES


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(
        prog="python -m loaders.spark_pgn2parquet",
        description="Convert PGN games into the BGN Parquet lake on a Spark cluster, one task per input. "
        "Games that cannot be read or replayed go to <lake>/rejects/ with their offset and a reason.",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="PGN file, s3://bucket/key (or a prefix), or a glob of either (quoted, expanded by the driver): "
        "plain, .zst, .bz2 or .gz; a path must be one every executor can read",
    )
    cli.add_lake_argument(p)
    p.add_argument(
        "--master",
        default=None,
        help="Spark master URL (local[2], yarn, spark://…); default: spark-submit's, else local[*]",
    )
    p.add_argument(
        "--allow-duplicates",
        action="store_true",
        help="skip the game_id check (for speed benchmarks on dumps that repeat games)",
    )
    p.add_argument(
        "--batch-games",
        type=cli.whole_number(1, ROW_GROUP_GAMES),
        default=BATCH_GAMES,
        help=f"games per Arrow batch handed from the Rust reader to the writer (default: {BATCH_GAMES})",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: load_all(args), "nothing uncommitted was added to the lake")


def load_all(args: argparse.Namespace) -> int:
    from pyspark.sql import SparkSession

    from warehouse.spark_load import expand, spark_load

    lake = Lake.open(args.lake, creating=True)
    paths = expand(args.inputs)  # before the JVM starts: a user error is told at once
    builder = SparkSession.builder.appName("bgn-warehouse spark_pgn2parquet")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    try:
        done = spark_load(spark, paths, lake, dedup=not args.allow_duplicates, batch_games=args.batch_games)
    finally:
        spark.stop()
    for line in done.recovered:
        print(f"{lake.location}: {line}", file=sys.stderr)
    for result in done.results:
        print(summary(result))
    for error in done.errors:
        cli.error(error)
    return cli.EXIT_USER_ERROR if done.errors else 0


if __name__ == "__main__":
    sys.exit(main())
