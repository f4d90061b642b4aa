"""A load's reopened partitions merged before it commits: one staged file a partition (up to `FILE_GAMES`).

The writer (`PartitionWriter`) keeps `MAX_OPEN_PARTITIONS` partitions' files open; past it, it closes the
least recently written, and more games of that partition start another file. Inputs that cycle through more
partitions than that (study files named by game id, an archive of decades) leave several small files per
partition, each paying the Parquet footer and dictionaries (~15-20 KB). Before the load commits, the staged
files of each such partition are rewritten into one (more only past `FILE_GAMES` games), with their `plies/`
twins, as compaction rewrites files (`warehouse.lake.rewrite`): read a row group at a time with the plies of
its games, the games in the order the writer wrote them within each kind (analysed or not), in row groups
of one kind of at most `ROW_GROUP_GAMES` games or `ROW_GROUP_BYTES` (a small file's games in one), each
with a plies row group of the same games. Every merged pair is checked against the writer's counts (games,
plies, row groups paired) before the files it replaces are deleted. All of it happens inside the load's
staging folder before its record is written, so a crash at any moment leaves all of the load or nothing,
as for any load.

Not compaction's `rewrite`: its content hash of every row, read and read back (polars' `hash_rows` on the
nested columns), took more CPU than the whole load of study files (+5.4 CPU-s on 7.7 for 2,329 games).
"""

from __future__ import annotations

from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from warehouse.lake.layout import plies_twin, staging_dir
from warehouse.lake.location import Lake
from warehouse.lake.parquet import FILE_GAMES, read_parquet
from warehouse.lake.rewrite import RewriteMismatch, RewrittenFile, groups, row_groups

# The suffix of a merged file in the staging folder until the files it replaces are deleted.
MERGING = ".merging"


def staging_lake(lake: Lake, op_id: str) -> Lake:
    """The staging folder of operation `op_id` seen as a lake: its files at their final paths (`games/…`),
    where the rewriting machinery (`warehouse.lake.rewrite`) finds them."""
    root = staging_dir(op_id)
    return Lake(lake.fs, lake.path(root), f"{lake.location}/{root}")


def merge_reopened(
    lake: Lake,
    op_id: str,
    file_rows: dict[str, int],
    ply_rows: dict[str, int],
    target: int | None = None,
    jobs: int = 1,
) -> tuple[dict[str, int], dict[str, int]]:
    """Merges the staged files of each partition the writer wrote more than one file of (with their
    `plies/` twins) into files of up to `target` games (default `FILE_GAMES`): consecutive files packed,
    as compaction packs them (`groups`), a file the writer closed full left as it is. Returns the
    load's files and their rows (`file_rows`, `ply_rows` as the writer returned them) once merged. A
    merged file takes the name of the first file it replaces. A load that never reopened a partition
    merges nothing. `jobs` files are merged at once (pyarrow decodes and encodes without the GIL).

    :raises RewriteMismatch: when a merged file does not hold the games and plies the writer counted in
        the files it replaces: nothing is committed.
    """
    target = FILE_GAMES if target is None else target
    by_partition: dict[str, list[str]] = defaultdict(list)
    for final in file_rows:
        by_partition[final.rsplit("/", 1)[0]].append(final)
    if all(len(files) < 2 for files in by_partition.values()):
        return file_rows, ply_rows
    staging = staging_lake(lake, op_id)
    merges: list[list[str]] = []
    for files in by_partition.values():
        # In the order the writer started them (`<stem>-<n>.parquet`, one stem a load), but for the files
        # the writer closed full (`FILE_GAMES`), which stay as they are.
        small = sorted((f for f in files if file_rows[f] < target), key=lambda f: (len(f), f))
        merges += groups([(f, file_rows[f]) for f in small], target)

    def merge(group: list[str]) -> None:
        games, plies = sum(file_rows[f] for f in group), sum(ply_rows[plies_twin(f)] for f in group)
        _merge(staging, group, games, plies)

    with ThreadPoolExecutor(max(1, jobs), thread_name_prefix="merge") as pool:
        running = [pool.submit(merge, group) for group in merges]
        try:
            for done in running:
                done.result()
        except BaseException:
            pool.shutdown(cancel_futures=True)  # the merges not started never start; the load is discarded
            raise
    replaced = {rel: group[0] for group in merges for rel in group}  # each file → the file it went into
    if not replaced:
        return file_rows, ply_rows
    # The files replaced go, then each merged pair takes its first one's name.
    for rel in replaced:
        staging.delete(rel)
        staging.delete(plies_twin(rel))
    for rel in set(replaced.values()):
        for name in (rel, plies_twin(rel)):
            staging.move(name + MERGING, name)
    out_files: dict[str, int] = {}
    out_plies: dict[str, int] = {}
    for rel, rows in file_rows.items():
        into = replaced.get(rel, rel)
        out_files[into] = out_files.get(into, 0) + rows
        out_plies[plies_twin(into)] = out_plies.get(plies_twin(into), 0) + ply_rows[plies_twin(rel)]
    return out_files, out_plies


def _merge(staging: Lake, files: list[str], games: int, plies: int) -> None:
    """Writes the staged `files` (of one partition, `games/` files with their `plies/` twins) into the
    first one's name + `MERGING`, and its twin's (`RewrittenFile`); checks that they hold `games` games and
    `plies` plies (the writer's counts), row group for row group paired."""
    target = files[0] + MERGING
    out = RewrittenFile(staging, target, plies_twin(target))
    try:
        for games_group, plies_group in row_groups(staging, files):
            out.add(games_group, plies_group)
        out.close()
    except BaseException:
        out.abandon()
        raise
    with read_parquet(staging, target) as g, read_parquet(staging, plies_twin(target)) as p:
        written = g.metadata.num_rows, p.metadata.num_rows, g.num_row_groups
        if written != (games, plies, p.num_row_groups):
            raise RewriteMismatch(
                f"{staging.location}/{target}: {written[0]} games, {written[1]} plies in {written[2]} and "
                f"{p.num_row_groups} row groups, merged from {len(files)} files of {games} games and "
                f"{plies} plies"
            )
