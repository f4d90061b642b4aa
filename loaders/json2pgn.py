"""JSON games (BGN JSON-lines, study JSON) to PGN, through the lake's reading: every move replayed.

python -m loaders.json2pgn INPUT... OUT.pgn[.bz2|.zst]     # OUT `-`: standard output

The inputs load into a temporary lake as `loaders.json2parquet` loads them (every game, duplicates too),
which is then exported as `loaders.parquet2pgn` exports. Each refused game is one line on stderr
(`INPUT: line N: reason`); the games written are the others.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse.errors import InputError
from warehouse.exports.pgn import export_pgn
from warehouse.ingest.json_files import json_inputs, load_json_files
from warehouse.lake.location import Lake
from warehouse.lake.storage import filesystem
from warehouse.output import refuse_existing


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
    with tempfile.TemporaryDirectory(prefix="json2pgn-") as workdir:
        lake = Lake.open(f"{workdir}/lake")
        loaded = load_json_files(inputs, lake, dedup=False)
        if loaded.refused:
            raise InputError(loaded.refused[0])
        seen, written = loaded.record.games_seen, loaded.record.games_written
        for reject in read_rejects(Path(workdir) / "lake"):
            print(f"{reject['source_file']}: {reject['reason']}", file=sys.stderr)
        games = export_pgn(lake, args.out).games if written else 0
    print(f"{args.out}: {games:,} games of {seen:,} ({seen - written:,} refused)", file=sys.stderr)
    return 0


def read_rejects(lake: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted((lake / "rejects").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").split("\n")
        if line.strip()
    ]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: convert(args), f"nothing was written to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
