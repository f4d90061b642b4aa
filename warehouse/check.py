"""Verifying a lake (`bgn check`, `python -m warehouse.check`; the command's options are in `loaders.check`).

Checks that every data file is readable (its footer and `game_id` column; every column with `--full`, each
page against its checksum where the file has them: `warehouse.lake.parquet.READ_OPTIONS`), that the files
of each table share one schema, that the files on disk of both tables are exactly those the committed
records list, with the rows they list, that every `plies/` file has its `games/` twin and every `games/`
file its `plies/` twin, holding as many plies as its games' `n_plies` add up to (with `--full`: exactly the
plies its games' moves give, and the games' position columns, `warehouse.lake.positions`, what their moves
give), that every live load reconciles (seen = written + rejected + duplicates, its rejects file holding
one line per reject), that every record of `_loads/` can be read, and that no `game_id` appears twice.
Prints one line per problem and exits 1 when there is any, 0 otherwise; 2 when the lake cannot be opened
(missing, a file, a folder holding no lake).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.errors import DamagedFile
from warehouse.lake.commit import staging_ops
from warehouse.lake.dedup import encode_ids
from warehouse.lake.layout import GAMES, PLIES, games_twin, plies_twin, record_path
from warehouse.lake.location import Lake
from warehouse.lake.parquet import plain_schema, read_columns
from warehouse.lake.positions import GAME_COLUMNS, derive
from warehouse.lake.records import Records


def check(lake: Lake, *, full: bool = False) -> tuple[list[str], dict[str, int]]:
    """Problems found (one line each), and what was checked."""
    records, damaged = Records.scan(lake)
    problems = [str(e) for e in damaged]
    problems += list(_interrupted(lake))
    games = _files(lake, GAMES, records.live_files(), problems)
    plies = _files(lake, PLIES, records.live_plies(), problems)
    schemas: dict[str, dict[str, str]] = {GAMES: {}, PLIES: {}}
    ids: list[pa.Array] = []
    rows = 0
    for rel in games:
        columns = None if full else ["game_id", "game_key", "n_plies"]
        table = _read(lake, rel, games[rel], columns, schemas[GAMES], problems)
        if table is None:
            continue
        rows += table.num_rows
        ids.append(table["game_id"].combine_chunks())
        twin = plies_twin(rel)
        if twin not in plies:
            problems.append(f"{rel}: its plies file {twin} is missing")
            continue
        ply_table = _read(lake, twin, plies[twin], None if full else ["game_key"], schemas[PLIES], problems)
        if ply_table is not None:
            problems += _disagreements(rel, table, twin, ply_table, full)
    twins = {plies_twin(rel) for rel in games}
    problems += [
        f"{rel}: its games file {games_twin(rel)} is missing (the SQL views leave these plies out)"
        for rel in plies
        if rel not in twins
    ]
    for found in schemas.values():
        if len(found) > 1:
            first, *others = found.values()
            problems += [f"{rel}: schema differs from {first}'s" for rel in others]
    problems += list(_reconcile_loads(lake, records, rows))
    problems += list(_duplicate_ids(ids))
    stats = {"files": len(games), "plies_files": len(plies), "games": rows, "loads": len(records.loads)}
    return problems, stats


def _files(lake: Lake, table: str, live: dict[str, int], problems: list[str]) -> dict[str, int]:
    """The Parquet files of `table` on disk with the rows their records list; reports the files on disk
    that no record lists, and the files listed but missing."""
    on_disk = lake.parquet_files(table)
    problems += [f"{f}: in {table}/ but in no committed record" for f in on_disk if f not in live]
    problems += [f"{f}: listed by a committed record but missing" for f in live if f not in set(on_disk)]
    return {rel: live.get(rel, -1) for rel in on_disk}


def _read(
    lake: Lake, rel: str, listed: int, columns: list[str] | None, schemas: dict[str, str], problems: list[str]
) -> pa.Table | None:
    """`columns` of the file `rel` (all: None), its schema noted in `schemas`, its rows checked against
    the `listed` ones (-1: listed nowhere); None when unreadable."""
    try:
        meta = pq.read_metadata(lake.path(rel), filesystem=lake.fs)
        table = read_columns(lake, rel, columns)
        # Dictionary indices in range, and the like: a bit flipped in a file without page checksums can
        # decode as an index past its dictionary, which the comparisons below would raise on.
        table.validate(full=True)
    except DamagedFile as e:
        problems.append(f"{rel}: unreadable: {e.reason}")
        return None
    except (OSError, pa.ArrowException) as e:
        problems.append(f"{rel}: unreadable: {str(e).splitlines()[0]}")
        return None
    schemas.setdefault(meta.schema.to_arrow_schema().to_string(show_schema_metadata=False), rel)
    if listed >= 0 and meta.num_rows != listed:
        problems.append(f"{rel}: {meta.num_rows} rows, its record says {listed}")
    return table


def _disagreements(rel: str, games: pa.Table, twin: str, plies: pa.Table, full: bool) -> list[str]:
    """How the plies file `twin` disagrees with the games of `rel`: its plies must be, in order, each
    game's key repeated `n_plies` times (with `full`, exactly `warehouse.lake.plies.plies_of` the games)."""
    counts = games["n_plies"].to_numpy()
    if plies.num_rows != counts.sum():
        return [f"{twin}: {plies.num_rows} plies, the games of {rel} have {counts.sum()}"]
    expected_keys = np.repeat(games["game_key"].to_numpy(), counts)
    if not np.array_equal(plies["game_key"].to_numpy(), expected_keys):
        return [f"{twin}: its plies are not those of the games of {rel}, in their order (game_key)"]
    if full:
        missing = [name for name in GAME_COLUMNS if name not in games.column_names]
        if missing:
            return [f"{rel}: no {', '.join(missing)} (written before the position columns): reload its games"]
        try:
            derived = [derive(b) for b in games.to_batches()]
        except ValueError as e:  # a move its position does not allow (a damaged file without checksums)
            return [f"{rel}: its moves do not replay: {str(e).splitlines()[0]}"]
        expected = pa.Table.from_batches([p for _, p in derived], plies.schema)
        plain = plain_schema(plies.schema)
        if not expected.cast(plain).equals(plies.cast(plain)):
            return [f"{twin}: its plies differ from the moves of the games of {rel}"]
        positions = pa.Table.from_batches([g.select(GAME_COLUMNS) for g, _ in derived])
        if games.num_rows and not positions.equals(games.select(GAME_COLUMNS)):
            return [
                f"{rel}: its position columns ({', '.join(GAME_COLUMNS)}) differ from what its moves give"
            ]
    return []


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
