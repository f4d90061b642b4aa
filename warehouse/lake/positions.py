"""The position columns of a batch of games, derived at write time with its plies: one kernel pass.

`_core.named_positions` rebuilds every position of the batch from the stored squares (PolyGlot keys) and
looks each one up among the chess-openings table's keys (`warehouse.lake.openings`). From that one replay
come:
- `plies.key`: the key before each of the first `KEYED_PLIES` plies (null after; docs/positions.md);
- `games.final_key`: the key of the game's final position;
- `games.opening_eco`, `opening_name`, `opening_code`: the deepest position of the game (final one
  included) that the chess-openings table names, beside the `opening` struct of the tags, which stays as
  the source wrote it.

Loads, the layout upgrade and `warehouse.check --full` all derive them here, so they cannot disagree.
"""

from __future__ import annotations

import functools

import pyarrow as pa

from warehouse import _core
from warehouse.lake.openings import opening_table
from warehouse.lake.plies import KEYED_PLIES, Replayed, plies_of, plies_schema

GAME_FIELDS = (
    pa.field("final_key", pa.int64()),
    pa.field("opening_eco", pa.string()),
    pa.field("opening_name", pa.string()),
    pa.field("opening_code", pa.string()),
    # From the same replay (`crates/bgn-core/src/material.rs`): the ply (0-based, as `plies.ply`) and the
    # `castle` letter of each side's first castling; the first ply after which the middlegame, the
    # endgame holds; the packed material (as `plies.material`) after that endgame ply, and after the last
    # move.
    pa.field("white_castled", pa.int32()),
    pa.field("white_castle", pa.string()),
    pa.field("black_castled", pa.int32()),
    pa.field("black_castle", pa.string()),
    pa.field("middlegame_ply", pa.int32()),
    pa.field("endgame_ply", pa.int32()),
    pa.field("endgame_material", pa.int64()),
    pa.field("final_material", pa.int64()),
)
GAME_COLUMNS = tuple(f.name for f in GAME_FIELDS)


def derive(games: pa.RecordBatch) -> tuple[pa.RecordBatch, pa.RecordBatch]:
    """`games` with the position columns (`GAME_FIELDS`, last; replaced when present), and its plies."""
    games = games.drop_columns([name for name in GAME_COLUMNS if name in games.schema.names])
    keys, names = _openings()
    ply_keys, finals, rows, material, phase, summaries = (
        pa.array(a) for a in _core.named_positions(games, KEYED_PLIES, keys)
    )
    # A null row (no named position) takes a null name.
    columns = [finals] + [column.take(rows) for column in names] + summaries.flatten()
    for field, column in zip(GAME_FIELDS, columns, strict=True):
        games = games.append_column(field, column)
    return games, plies_of(games, Replayed(ply_keys, material, phase))


def derived_schemas(games: pa.Schema) -> tuple[pa.Schema, pa.Schema]:
    """The schemas of what `derive` makes of games of schema `games`: the games', and their plies'."""
    kept = [f for f in games if f.name not in GAME_COLUMNS]
    return pa.schema([*kept, *GAME_FIELDS]), plies_schema(games.field("moves").type.value_type)


@functools.cache
def _openings() -> tuple[pa.Int64Array, tuple[pa.Array, ...]]:
    """The opening table's sorted keys, and its `eco`, `name` and `code` columns in the same order."""
    table = opening_table()
    names = tuple(table.column(name).combine_chunks() for name in ("eco", "name", "code"))
    return table.column("key").combine_chunks(), names
