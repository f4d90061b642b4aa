"""Convert PGN (plain, .zst, .bz2, .gz, or `-` for stdin) into the BGN Parquet lake.

python -m loaders.pgn2parquet lichess_db_standard_rated_2024-01.pgn.zst [--lake DIR|s3://bucket/prefix]

Each INPUT is one load; a folder, glob or S3 prefix is one load of its PGN files (one commit, files cut by
partition, not by input). An `s3://` input is read as stored, streamed to the reader (nothing on disk).
An input already in the lake (same SHA-256) is skipped; games already in the lake (same game_id) are
skipped and counted as duplicates. How loads commit, dedup and recover: docs/operations.md.
"""

from __future__ import annotations

import argparse
import sys

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from loaders.progress import ProgressBar, add_progress_argument, shows_progress
from warehouse.cores import default_jobs
from warehouse.errors import DamagedRecord, NotPublished, WarehouseError, describe
from warehouse.ingest.inputs import PGN_NAME, input_files
from warehouse.ingest.load import BATCH_GAMES, LoadResult, PgnSource, SourceKind, load_inputs
from warehouse.lake.location import Lake
from warehouse.lake.parquet import ROW_GROUP_GAMES
from warehouse.lake.records import LoadedInput, LoadRecord


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(
        prog="python -m loaders.pgn2parquet",
        description="Convert PGN games into the BGN Parquet lake: one row per game, one struct per move. "
        "Games that cannot be read or replayed go to <lake>/rejects/ with their offset and a reason.",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="PGN file: plain, .zst (multi-frame, as lichess publishes), .bz2 or .gz — the format is "
        "read from the file's first bytes; `-` reads standard input; an s3:// object; a folder, glob or "
        "s3:// prefix: its .pgn files (plain or .zst/.bz2/.gz), loaded as one load",
    )
    add_load_arguments(p)
    return p.parse_args(argv)


def add_load_arguments(p: argparse.ArgumentParser) -> None:
    """The options every loader takes: the lake, --force, --allow-duplicates, --batch-games, --jobs,
    --progress."""
    cli.add_lake_argument(p)
    p.add_argument(
        "--force",
        action="store_true",
        help="load an input even if it is already in the lake, replacing the files of its earlier load",
    )
    p.add_argument(
        "--allow-duplicates",
        action="store_true",
        help="skip the game_id check (for speed benchmarks on dumps that repeat games): games already in "
        "the lake are written again, and `python -m warehouse.maintenance.check` will report them",
    )
    p.add_argument(
        "--batch-games",
        type=cli.whole_number(1, ROW_GROUP_GAMES),
        default=BATCH_GAMES,
        help="games per Arrow batch handed from the Rust reader to the writer, 1 to "
        f"{ROW_GROUP_GAMES:,}, the most games in a row group (default: {BATCH_GAMES})",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=cli.whole_number(1, 1024),
        default=None,
        help="threads that parse and replay games (the lake's content is the same for any number); "
        f"default: the cores this process may use ({default_jobs()} here)",
    )
    add_progress_argument(p)


def grand_total(results: list[LoadResult], inputs: int) -> str:
    """The last line of a load of several inputs: their games added up (those already loaded count none)."""
    records = [r.record for r in results if r.already_loaded is None]
    files = [i for r in records for i in r.input_files()]
    skipped = sum(len(_skipped(r)) for r in results)
    seen, written = sum(r.games_seen for r in records), sum(r.games_written for r in records)
    rejected, duplicates = sum(r.games_rejected for r in records), sum(r.games_duplicate for r in records)
    seconds = sum(r.seconds for r in records)
    counts = f"{len(files):,} loaded" + (f", {skipped:,} already in the lake" if skipped else "")
    failed = inputs - len(files) - skipped
    counts += f", {failed:,} failed" if failed else ""
    return (
        f"total of {inputs:,} inputs ({counts}): {seen:,} games seen = {written:,} "
        f"written + {rejected:,} rejected"
        + (f" + {duplicates:,} duplicates" if duplicates else "")
        + f", {sum(len(r.files) for r in records)} files, {seconds:.1f} s"
    )


def summary(result: LoadResult) -> str:
    """A load's lines: each input skipped as already loaded, then what was loaded (each input of a load
    of several, then the load's files and time), its rejects and damage."""
    r = result.record
    lines = [_already_loaded(path, old) for path, old in _skipped(result)]
    if result.already_loaded is not None:
        return "\n".join(lines)
    inputs = r.input_files()
    if len(inputs) > 1:
        lines += [_counts(i.input, i) for i in inputs]
        lines.append(
            f"{r.input}: one load of {len(inputs):,} inputs, {len(r.files)} files, {r.seconds:.1f} s"
        )
    else:
        rate = r.games_seen / r.seconds if r.seconds else 0.0
        lines.append(f"{_counts(r.input, r)}, {len(r.files)} files, {r.seconds:.1f} s ({rate:,.0f} games/s)")
    text = "\n".join(lines)
    if r.replaces:
        text += f"\n  replaced load {', '.join(r.replaces)} of the same input"
    if r.rejects_file:
        kinds = ", ".join(f"{n:,} {kind}" for kind, n in r.rejects_by_kind.items())
        text += f"\n  rejects: {r.rejects_file} ({kinds})"
    for i in inputs:
        if i.damage:
            where = f" of {i.input}" if len(inputs) > 1 else ""
            text += f"\n  warning: {i.damage}; the games before the damage{where} were kept"
    return text


def _skipped(result: LoadResult) -> list[tuple[str, LoadRecord]]:
    """The inputs of a load found already loaded, each with its earlier load (a Spark load's, of one
    input, names only `already_loaded`)."""
    if result.skipped or result.already_loaded is None:
        return result.skipped
    return [(result.record.input, result.already_loaded)]


def _already_loaded(path: str, old: LoadRecord) -> str:
    when = old.finished.isoformat()[:19] if old.finished else "?"
    return (
        f"{path}: already loaded (load {old.load_id} of {when}, same SHA-256): nothing written; "
        "--force reloads it"
    )


def _counts(name: str, r: LoadedInput | LoadRecord) -> str:
    duplicates = f" + {r.games_duplicate:,} duplicates" if r.games_duplicate else ""
    return (
        f"{name}: {r.games_seen:,} games seen = {r.games_written:,} written + "
        f"{r.games_rejected:,} rejected{duplicates}"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    loads = [(given, input_files(given, PGN_NAME) or [given]) for given in args.inputs]
    return cli.run(lambda: load_all(args, loads), "nothing was added to the lake")


def load_all(
    args: argparse.Namespace, loads: list[tuple[str, list[str]]], source: SourceKind = PgnSource
) -> int:
    """Each load in turn (what was given, and its input files), read by `source`: an error with one load
    (or one of its inputs) is its line, and the next loads."""
    lake = Lake.open(args.lake, creating=True)
    show = shows_progress(args)
    status = 0
    loaded: list[LoadResult] = []
    for name, paths in loads:
        try:
            result = load_one(name, paths, lake, args, ProgressBar(name) if show else None, source)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"nothing of {name} was added to the lake") from None
        except DamagedRecord:  # every input would meet it: stop at once
            raise
        except NotPublished as e:
            if e.interrupted:
                raise
            cli.error(str(e))
            status = cli.EXIT_USER_ERROR
            continue
        except OSError as e:
            cli.error(f"{name}: {describe(e, lake.location)}; nothing of it was added to the lake")
            status = cli.EXIT_USER_ERROR
            continue
        except WarehouseError as e:
            cli.error(str(e))
            status = cli.EXIT_USER_ERROR
            continue
        for line in result.recovered:
            print(f"{lake.location}: {line}", file=sys.stderr)
        for line in result.refused:
            cli.error(f"{line}; nothing of it was added to the lake")
            status = cli.EXIT_USER_ERROR
        print(summary(result))
        loaded.append(result)
    inputs = sum(len(paths) for _, paths in loads)
    if inputs > 1:
        print(grand_total(loaded, inputs))
    return status


def load_one(
    name: str,
    paths: list[str],
    lake: Lake,
    args: argparse.Namespace,
    bar: ProgressBar | None,
    source: SourceKind = PgnSource,
) -> LoadResult:
    """One load into the lake, its progress bar cleared however the load ends."""
    try:
        return load_inputs(
            paths,
            lake,
            name=name,
            progress=bar,
            batch_games=args.batch_games,
            force=args.force,
            dedup=not args.allow_duplicates,
            jobs=args.jobs,
            source=source,
        )
    finally:
        if bar:
            bar.close()


if __name__ == "__main__":
    sys.exit(main())
