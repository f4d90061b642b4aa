"""Verifying a lake (`bgn-check`, `python -m warehouse.check`; the command's options are in `loaders.check`).

Checks that every data file is readable (its footer and `game_id` column; every column with `--full`),
that all files share one schema, that the files on disk are exactly those the committed records list,
with the rows they list, that every live load reconciles (seen = written + rejected + duplicates, its
rejects file holding one line per reject), that every record of `_loads/` can be read, and that no
`game_id` appears twice. Prints one line per problem and exits 1 when there is any, 0 otherwise; 2 when
the lake cannot be opened (missing, a file, a folder holding no lake).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.lake.commit import staging_ops
from warehouse.lake.dedup import encode_ids
from warehouse.lake.layout import GAMES, record_path
from warehouse.lake.location import Lake
from warehouse.lake.records import Records


def check(lake: Lake, *, full: bool = False) -> tuple[list[str], dict[str, int]]:
    """Problems found (one line each), and what was checked."""
    records, damaged = Records.scan(lake)
    live = records.live_files()
    on_disk = sorted(lake.relative(i.path) for i in lake.files(GAMES) if i.path.endswith(".parquet"))
    problems = [str(e) for e in damaged]
    problems += list(_interrupted(lake))
    problems += [f"{f}: in games/ but in no committed record" for f in on_disk if f not in live]
    problems += [f"{f}: listed by a committed record but missing" for f in live if f not in set(on_disk)]
    schemas: dict[str, str] = {}
    ids: list[pa.Array] = []
    rows = 0
    for rel in on_disk:
        try:
            meta = pq.read_metadata(lake.path(rel), filesystem=lake.fs)
            columns = None if full else ["game_id"]
            table = pq.read_table(lake.path(rel), columns=columns, filesystem=lake.fs)
        except (OSError, pa.ArrowException) as e:
            problems.append(f"{rel}: unreadable: {str(e).splitlines()[0]}")
            continue
        schemas.setdefault(meta.schema.to_arrow_schema().to_string(show_schema_metadata=False), rel)
        if rel in live and meta.num_rows != live[rel]:
            problems.append(f"{rel}: {meta.num_rows} rows, its record says {live[rel]}")
        rows += meta.num_rows
        ids.append(table["game_id"].combine_chunks())
    if len(schemas) > 1:
        first, *others = schemas.values()
        problems += [f"{rel}: schema differs from {first}'s" for rel in others]
    problems += list(_reconcile_loads(lake, records, rows))
    problems += list(_duplicate_ids(ids))
    stats = {"files": len(on_disk), "games": rows, "loads": len(records.loads)}
    return problems, stats


def _interrupted(lake: Lake) -> Iterator[str]:
    for op_id in staging_ops(lake):
        if lake.exists(record_path(op_id)):
            yield (
                f"operation {op_id} committed but not fully published (interrupted): "
                "run the loader or `python -m warehouse.compact` to finish it"
            )


def _reconcile_loads(lake: Lake, records: Records, rows: int) -> Iterator[str]:
    written = 0
    for r in records.loads:
        if not r.reconciles():
            yield f"load {r.load_id}: seen {r.games_seen} != written + rejected + duplicates"
        if sum(r.file_rows.values()) != r.games_written:
            yield f"load {r.load_id}: its files' rows do not add up to its {r.games_written} games"
        written += r.games_written
        if r.rejects_file:
            try:
                lines = lake.read_text(r.rejects_file).count("\n")
            except OSError:
                yield f"load {r.load_id}: rejects file {r.rejects_file} is missing"
                continue
            if lines != r.games_rejected:
                yield f"load {r.load_id}: {lines} rejects on file, {r.games_rejected} in its record"
    if written != rows:
        yield f"the lake holds {rows} games, its live loads wrote {written}"


def _duplicate_ids(ids: list[pa.Array]) -> Iterator[str]:
    if not ids:
        return
    keys, _kinds, others = encode_ids(pa.concat_arrays(ids))
    for values in keys.values():
        ordered = np.sort(values)
        repeats = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
        if len(repeats):
            yield f"{len(repeats)} game_id values appear more than once"
    if len(set(others)) != len(others):
        yield "some game_id values appear more than once"


if __name__ == "__main__":
    # `python -m warehouse.check`, as the docs have it; the command itself is in loaders/.
    from loaders.check import main

    sys.exit(main())
