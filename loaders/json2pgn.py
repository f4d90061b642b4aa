"""JSON games (BGN JSON-lines, study JSON) to PGN, every move replayed as a JSON import replays it.

python -m loaders.json2pgn INPUT... OUT.pgn[.bz2|.zst]     # OUT `-`: standard output

The inputs are read as `loaders.json2parquet` reads them (every game, duplicates too), and each batch of
games the reader replays is written as `loaders.parquet2pgn` writes a lake's, with no lake between: memory
holds a chunk of the inputs (`json_files.CHUNK_BYTES`) and nothing is written but OUT. The games keep
their inputs' order within each speed and month (the reader's batches are a partition's). Each refused game
is one line on stderr (`INPUT: line N: reason`); the games written are the others, and every game read is
one or the other (else nothing is written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

import pyarrow as pa

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse.cores import default_jobs
from warehouse.errors import InputError
from warehouse.exports.pgn import pgn_blocks
from warehouse.ingest.json_files import JsonSource, json_inputs
from warehouse.ingest.load import BATCH_GAMES, ReconciliationError
from warehouse.lake.layout import Partition
from warehouse.lake.storage import filesystem
from warehouse.output import refuse_existing, write_blocks


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(
        prog="python -m loaders.json2pgn",
        description="Convert BGN JSON-lines and study JSON games to PGN, replaying every move; games that "
        "cannot be read or replayed are listed on stderr.",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="as json2parquet: file, directory, glob, s3://")
    p.add_argument("out", metavar="OUT", help="PGN file (.bz2/.zst compressed), new; `-` for standard output")
    return p.parse_args(argv)


def convert(args: argparse.Namespace) -> int:
    inputs = json_inputs(args.inputs)
    if args.out != "-":
        refuse_existing(*filesystem(args.out), args.out)  # before any work
    source = JsonSource(inputs, BATCH_GAMES, default_jobs())
    rejected = 0

    def games() -> Iterator[tuple[Partition, pa.RecordBatch]]:
        nonlocal rejected
        for partition, parts, located in source.batches():
            if source.refused:  # an input that cannot be read: nothing is written (the output is dropped)
                raise InputError(source.refused[0])
            for path, (_, _, _, reason, _) in located:
                print(f"{path}: {reason}", file=sys.stderr)
            rejected += len(located)
            if partition is not None:
                yield from ((partition, part) for part in parts)
        if source.refused:
            raise InputError(source.refused[0])

    written, _, _ = write_blocks(args.out, pgn_blocks(games()), None)
    seen = sum(outcome.games_seen for outcome in source.outcomes())
    if seen != written + rejected:
        raise ReconciliationError(
            f"{args.out}: {seen:,} games read, {written:,} written, {rejected:,} refused"
        )
    print(f"{args.out}: {written:,} games of {seen:,} ({rejected:,} refused)", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Standard output cannot take back what it wrote: an input refused late, or Ctrl-C, leaves the games
    # written before it there (an OUT file is written whole or not at all).
    interrupted = (
        "standard output holds the games written so far"
        if args.out == "-"
        else f"nothing was written to {args.out}"
    )
    return cli.run(lambda: convert(args), interrupted)


if __name__ == "__main__":
    sys.exit(main())
