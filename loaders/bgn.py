"""`bgn`: one command for all of them, `bgn <command> [options]`, each the `main(argv)` of its module.

`bgn --help` lists the commands; `bgn <command> --help` is that command's help, its usage naming
`bgn <command>`. A command is one line of `COMMANDS`.
"""

from __future__ import annotations

import importlib
import sys
from typing import NamedTuple

from loaders import cli


class Command(NamedTuple):
    """A subcommand: the `module:function` it runs (function `main` when not named), its leading arguments,
    and its line in `bgn --help`."""

    target: str
    help: str
    args: tuple[str, ...] = ()


# The subcommands, by the words the user types (`export pgn`: two words).
COMMANDS: dict[str, Command] = {
    "load": Command("loaders.pgn2parquet", "convert PGN (.pgn, .zst, .bz2, .gz, -) into a lake"),
    "import": Command("loaders.json2parquet", "load BGN JSON-lines or study JSON into a lake"),
    "list": Command("loaders.query:list_main", "the library's questions, each with what it asks"),
    "query": Command("loaders.query", "answer a question of the library (bgn list) over a lake"),
    "search": Command("loaders.positions", "the games that reach a position (FEN)"),
    "explore": Command("loaders.explore", "the moves played from a position, with their scores"),
    "book": Command("loaders.book", "an opening book (Parquet, TSV, PolyGlot .bin) from a lake"),
    "serve": Command("loaders.serve", "the explorer as a local web page (127.0.0.1)"),
    "graph": Command("loaders.opening_graph", "the opening tree as .dot and SVG"),
    "index": Command("loaders.position_index", "build the optional position index (fast deep searches)"),
    "openings": Command("loaders.openings", "export the opening code map and the ECO book"),
    "export json": Command("loaders.parquet2json", "the lake as BGN JSON-lines (bz2)"),
    "export study": Command("loaders.parquet2json", "the lake as study JSON", ("--format", "study")),
    "export pgn": Command("loaders.parquet2pgn", "the lake as PGN"),
    "json2pgn": Command("loaders.json2pgn", "BGN or study JSON to PGN, without a lake"),
    "check": Command("loaders.check", "verify a lake (--full: every file's pages)"),
    "compact": Command("loaders.compact", "merge a lake's small files"),
    "upgrade": Command("loaders.upgrade", "upgrade a lake of an older layout in place"),
    "spark-load": Command("loaders.spark_pgn2parquet", "convert PGN into a lake on Spark"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {command.help}" for name, command in COMMANDS.items()]
    return (
        "usage: bgn <command> [options]  (bgn <command> --help for its options)\n\ncommands:\n"
        + "\n".join(lines)
    )


def find(argv: list[str]) -> tuple[str, list[str]] | None:
    """The command `argv` starts with (its longest name) and the arguments after it."""
    for words in (2, 1):
        name = " ".join(argv[:words])
        if len(argv) >= words and name in COMMANDS:
            return name, argv[words:]
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    found = find(argv)
    if found is None:
        cli.error(f"unknown command {' '.join(argv[:2])!r}; the commands:\n{usage()}")
        return cli.EXIT_USER_ERROR
    name, rest = found
    command = COMMANDS[name]
    module, _, function = command.target.partition(":")
    cli.invoked_as(f"bgn {name}")
    status: int | None = getattr(importlib.import_module(module), function or "main")([*command.args, *rest])
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
