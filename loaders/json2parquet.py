"""Load JSON games into the BGN Parquet lake: BGN JSON-lines and study JSON, checked as PGN is.

python -m loaders.json2parquet INPUT... [--lake DIR|s3://bucket/prefix]

INPUT: a file (.json, .jsonl, .ndjson; plain, .bz2, .zst, .gz), a directory, a glob, or an s3:// prefix
or glob (`s3://chess-bgn/archive/blitz/2025/*/*.json.bz2`). All the files given are ONE load (one commit,
files cut by partition, not by input); each file is recorded with its fingerprint: skipped when already
loaded, its rejects in <lake>/rejects/ with their file and line. See docs/exports.md.
"""

from __future__ import annotations

import argparse
import sys

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from loaders.pgn2parquet import add_load_arguments, load_all
from warehouse.ingest.json_files import JsonSource, json_inputs


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(
        prog="python -m loaders.json2parquet",
        description="Load BGN JSON-lines and study JSON games into the BGN Parquet lake. Every move is "
        "replayed; games that cannot be read, replayed, or that disagree with their replay go to "
        "<lake>/rejects/ with their line, offset and a reason.",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="JSON file (.json, .jsonl, .ndjson; plain, .bz2, .zst or .gz), directory, glob, or s3:// "
        "prefix or glob",
    )
    add_load_arguments(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    def command() -> int:
        name = args.inputs[0] if len(args.inputs) == 1 else f"{len(args.inputs)} inputs"
        return load_all(args, [(name, json_inputs(args.inputs))], JsonSource)

    return cli.run(command, "nothing was added to the lake")


if __name__ == "__main__":
    sys.exit(main())
