"""Bringing a lake of layout 1 to 4 to layout 5 in place (`bgn upgrade`, `python -m loaders.upgrade`).

Layout 1 has `games/` only; layout 2 adds `game_key` to every game, `blast` to every move (null: layout 1
held no variant game) and the `plies/` table; layout 3 adds `plies.think` and `plies.mates`, and `variant`
statistics in both tables' files; layout 4 adds `plies.analysed` and writes analysed games in row groups
of their own (each old row group becomes two: its analysed games, then the others); layout 5 adds the
material and phase columns (`crates/bgn-core/src/material.rs`) to both tables. Every live `games/`
file is rewritten (from layout 1: with its key, `warehouse._core.game_keys`, the loader's own function, and
`blast`) beside a new `plies/` twin, both derived and written as a load writes them, verified (read back,
the same `game_id`s in the order written), and the swap is one commit (`warehouse.lake.commit`) that also
publishes `_layout.json`: a crash or Ctrl-C before it leaves the lake as it was, one after it is finished by
the next writer (this command, a load, a compaction).
The games keep their stored SAN: loads since layout 2 store it only where it differs from the position's.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from warehouse import _core
from warehouse.lake.commit import commit, discard, new_op_id, recover, writer_lock
from warehouse.lake.layout import LAYOUT, LAYOUT_FILE, plies_twin, staged
from warehouse.lake.location import Lake, layout_text
from warehouse.lake.parquet import by_analysis, open_parquet_writer, read_columns, row_group_tables
from warehouse.lake.positions import derive
from warehouse.lake.records import Records, UpgradeRecord, now

# The move field of layout 2 that layout 1 lacks: what an atomic capture's explosion removed.
BLAST = pa.field("blast", pa.string())


class UpgradeMismatch(RuntimeError):
    """A rewritten file does not hold the games it replaces: nothing is committed."""


def with_key(games: pa.RecordBatch) -> pa.RecordBatch:
    """`games` of layout 1 with the `game_key` column of layout 2, after `game_id`."""
    keys = pa.array(_core.game_keys(games.column("game_id")))
    at = games.schema.get_field_index("game_id") + 1
    return games.add_column(at, pa.field("game_key", pa.int64(), nullable=False), keys)


def with_blast(games: pa.RecordBatch) -> pa.RecordBatch:
    """`games` of layout 1 with the null `blast` field of layout 2 in every move, after `promote`."""
    lines: pa.ListArray = games.column("variations")
    line: pa.StructArray = lines.values
    line_fields = [line.type.field(i) for i in range(line.type.num_fields)]
    line_arrays = [line.field(i) for i in range(line.type.num_fields)]
    at = line.type.get_field_index("moves")
    line_arrays[at] = _moves_with_blast(line_arrays[at])
    line_fields[at] = line_fields[at].with_type(line_arrays[at].type)
    new_line = pa.StructArray.from_arrays(line_arrays, fields=line_fields)
    columns = {"moves": _moves_with_blast(games.column("moves")), "variations": _list_of(lines, new_line)}
    arrays = [
        columns.get(name, column) for name, column in zip(games.schema.names, games.columns, strict=True)
    ]
    fields = [field.with_type(array.type) for field, array in zip(games.schema, arrays, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def _moves_with_blast(moves: pa.ListArray) -> pa.ListArray:
    move: pa.StructArray = moves.values
    fields = [move.type.field(i) for i in range(move.type.num_fields)]
    arrays = [move.field(i) for i in range(move.type.num_fields)]
    at = move.type.get_field_index("promote") + 1
    fields.insert(at, BLAST)
    arrays.insert(at, pa.nulls(len(move), pa.string()))
    return _list_of(moves, pa.StructArray.from_arrays(arrays, fields=fields))


def _list_of(lists: pa.ListArray, values: pa.Array) -> pa.ListArray:
    """`lists` with `values` for its values (the same length, new fields)."""
    item = lists.type.value_field.with_type(values.type)
    return pa.ListArray.from_arrays(lists.offsets, values, type=pa.list_(item))


def upgrade_file(lake: Lake, op_id: str, source: str, final: str, layout: int | None) -> tuple[int, int]:
    """Stages the games of `source`, a file of layout `layout`, as the `games/` file `final` of operation
    `op_id`, and their plies as its twin; returns the games and the plies written."""
    target = staged(op_id, final)
    games_out: pq.ParquetWriter | None = None
    plies_out: pq.ParquetWriter | None = None
    ids: list[pa.Array] = []
    rows = ply_rows = 0
    try:
        # A row group at a time (`row_group_tables`).
        batches = (b for group in row_group_tables(lake, source) for b in group.to_batches())
        for batch in batches:
            for _, part in by_analysis(with_blast(with_key(batch)) if layout == 1 else batch):
                games, plies = derive(part)
                games_out = games_out or open_parquet_writer(lake, target, games.schema)
                plies_out = plies_out or open_parquet_writer(
                    lake, staged(op_id, plies_twin(final)), plies.schema
                )
                # One row group each, of one kind of games (`by_analysis`), in both files.
                games_out.write_batch(games, row_group_size=max(games.num_rows, 1))
                plies_out.write_batch(plies, row_group_size=max(plies.num_rows, 1))
                ids.append(part.column("game_id"))
                rows += games.num_rows
                ply_rows += plies.num_rows
    finally:
        for writer in (games_out, plies_out):
            if writer is not None:
                writer.close()
    written = read_columns(lake, target, ["game_id"])["game_id"]
    if not written.equals(pa.chunked_array(ids, pa.string())):
        raise UpgradeMismatch(f"{target}: the rewritten games differ from those of {source}")
    return rows, ply_rows


def upgrade(lake: Lake) -> UpgradeRecord | None:
    """Upgrades `lake` to layout `LAYOUT` in one commit; returns the record, or None when the lake already
    is of that layout."""
    with writer_lock(lake):
        recover(lake)  # may finish an interrupted upgrade
        layout = lake.layout()
        if layout == LAYOUT:
            return None
        records = Records.read(lake)
        record = UpgradeRecord(load_id=new_op_id(), started=now(), layout=LAYOUT, layout_file=LAYOUT_FILE)
        op_id = record.load_id
        try:
            for n, source in enumerate(sorted(records.live_files()), 1):
                final = f"{source.rsplit('/', 1)[0]}/upgrade-{op_id}-{n}.parquet"
                rows, ply_rows = upgrade_file(lake, op_id, source, final, layout)
                record.file_rows[final] = rows
                record.ply_rows[plies_twin(final)] = ply_rows
                # Layout 2's plies twin goes with its games file (layout 1 had none).
                record.removes += [source] if layout == 1 else [source, plies_twin(source)]
            lake.write_text(staged(op_id, LAYOUT_FILE), layout_text())
        except BaseException:
            discard(lake, op_id)
            raise
        record.written()
        commit(lake, record, subject="upgrade")
        return record
