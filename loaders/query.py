"""Answer a question of the SQL library: bgn query NAME [--lake L] [--var NAME=VALUE]… [--format F] [-o FILE]

The whole answer, every row: a table on a terminal, else CSV, or the --format asked (table, csv, json:
one object a line, parquet); -o writes it to a new file. The lake read is named on stderr. `bgn list`
lists the questions; each is a file of sql/ (its header says the grain, the definitions and the columns),
which the duckdb CLI runs too.
"""

from __future__ import annotations

import argparse
import io
import sys

import polars as pl

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse.errors import InputError
from warehouse.lake.location import Lake
from warehouse.output import output_file
from warehouse.queries.sql import connect, query, question_asked, questions

FORMATS = ("table", "csv", "json", "parquet")
Value = str | int | float


def variable(text: str) -> tuple[str, Value]:
    """`NAME=VALUE` of --var: a whole number or a decimal is a number, anything else text."""
    name, equals, value = text.partition("=")
    if not equals or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE")
    for number in (int, float):
        try:
            return name, number(value)
        except ValueError:
            pass
    return name, value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m loaders.query", description=cli.paragraph(__doc__))
    p.add_argument("name", metavar="NAME", help="the question (bgn list names them)")
    cli.add_lake_argument(p)
    p.add_argument(
        "--var",
        action="append",
        default=[],
        type=variable,
        metavar="NAME=VALUE",
        help="a variable the question reads (variant=Atomic, explorer_fen=…; see its file's header)",
    )
    p.add_argument("--format", choices=FORMATS, help="default: table on a terminal, else csv")
    p.add_argument("-o", "--out", type=cli.location, metavar="FILE", help="a new file (default: stdout)")
    args = p.parse_args(argv)
    if args.name not in questions():
        p.error(f"no question {args.name!r}; there are: {', '.join(questions())}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "nothing was written")


def run(args: argparse.Namespace) -> int:
    lake = Lake.open_existing(args.lake)
    if args.lake is not None:
        print(f"lake: {lake.location}", file=sys.stderr)
    con = connect(lake.location)
    for name, value in args.var:
        con.execute(f"set variable {name} = $value", {"value": value})
    answer = query(args.name, con=con)
    shown = args.format or ("table" if args.out is None and sys.stdout.isatty() else "csv")
    if shown == "table":
        # Every row, every column, whole strings: the answer, not a preview of it.
        with pl.Config(
            tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, fmt_str_lengths=1000, tbl_hide_dataframe_shape=True
        ):
            text = f"{answer}\n{len(answer):,} rows\n"
        data = text.encode()
    else:
        data = encoded(answer, shown)
    if args.out is not None:
        with output_file(args.out, lake) as file:
            file.write(data)
    elif shown == "parquet" and sys.stdout.isatty():
        raise InputError("--format parquet: not to a terminal; give -o FILE or redirect standard output")
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0


def encoded(answer: pl.DataFrame, format: str) -> bytes:
    """The answer as a file of `format` (csv, json, parquet) holds it."""
    buffer = io.BytesIO()
    if format == "csv":
        answer.write_csv(buffer)
    elif format == "json":
        answer.write_ndjson(buffer)
    else:
        answer.write_parquet(buffer)
    return buffer.getvalue()


def list_main(argv: list[str] | None = None) -> int:
    """`bgn list`: every question, with what it asks (the first line of its file)."""
    cli.OneLineParser(prog="bgn list", description="The questions of the SQL library.").parse_args(argv)

    def listing() -> int:
        names = questions()
        width = max(map(len, names))
        print("\n".join(f"{name:<{width}}  {question_asked(name)}" for name in names))
        return 0

    return cli.run(listing, "nothing was written")


if __name__ == "__main__":
    sys.exit(main())
