"""The position columns of a batch of games, derived at write time with its plies: one kernel pass.

`_core.position_keys` rebuilds every position of the batch from the stored squares (PolyGlot keys). From
those keys come:
- `plies.key`: the key before each of the first `KEYED_PLIES` plies (null after; docs/positions.md);
- `games.final_key`: the key of the game's final position;
- `games.opening_eco`, `opening_name`, `opening_code`: the deepest position of the game (final one
  included) that the chess-openings table names (`warehouse.lake.openings`), beside the `opening`
  struct of the tags, which stays as the source wrote it.

Loads, the layout upgrade and `warehouse.check --full` all derive them here, so they cannot disagree.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from warehouse import _core
from warehouse.lake.openings import opening_table
from warehouse.lake.plies import KEYED_PLIES, plies_of

# Every ply: the classification needs all of a game's positions, the plies table stores the first ones.
ALL_PLIES = 1 << 30
GAME_FIELDS = (
    pa.field("final_key", pa.int64()),
    pa.field("opening_eco", pa.string()),
    pa.field("opening_name", pa.string()),
    pa.field("opening_code", pa.string()),
)
GAME_COLUMNS = tuple(f.name for f in GAME_FIELDS)


def derive(games: pa.RecordBatch) -> tuple[pa.RecordBatch, pa.RecordBatch]:
    """`games` with the position columns (`GAME_FIELDS`, last; replaced when present), and its plies."""
    games = games.drop_columns([name for name in GAME_COLUMNS if name in games.schema.names])
    ply_keys, finals = (pa.array(a) for a in _core.position_keys(games, ALL_PLIES))
    offsets = games.column("moves").offsets.to_numpy()
    lengths = np.diff(offsets)
    ply = np.arange(len(ply_keys)) - np.repeat(offsets[:-1] - offsets[0], lengths)
    stored = pa.array(_values(ply_keys), pa.int64(), mask=_nulls(ply_keys) | (ply >= KEYED_PLIES))
    row = classify(ply_keys, finals, lengths)
    table = opening_table()
    columns = [finals] + [_take(table.column(name), row) for name in ("eco", "name", "code")]
    for field, column in zip(GAME_FIELDS, columns, strict=True):
        games = games.append_column(field, column)
    return games, plies_of(games, stored)


def classify(ply_keys: pa.Int64Array, finals: pa.Int64Array, lengths: np.ndarray) -> np.ndarray:
    """For each game, the row of `opening_table()` of its deepest named position (its plies' positions
    then its final one), -1 for none."""
    table_keys = opening_table().column("key").to_numpy()
    ends = np.cumsum(lengths)
    # Each game's positions in a row: those before its plies, then its final one (never an empty run).
    keys = np.insert(_values(ply_keys), ends, _values(finals))
    valid = np.insert(~_nulls(ply_keys), ends, ~_nulls(finals))
    at = np.searchsorted(table_keys, keys).clip(0, len(table_keys) - 1)
    named = valid & (table_keys[at] == keys)
    if len(lengths) == 0:
        return np.zeros(0, np.int64)
    starts = ends - lengths + np.arange(len(lengths))  # each run's first position in `keys`
    deepest = np.maximum.reduceat(np.where(named, np.arange(len(keys)), -1), starts)
    return np.where(deepest >= 0, at[deepest.clip(0)], -1)


def _values(array: pa.Array) -> np.ndarray:
    """The int64 values of `array`, 0 where null (to be masked)."""
    return np.asarray(array.fill_null(0).to_numpy(), dtype=np.int64)


def _nulls(array: pa.Array) -> np.ndarray:
    return np.asarray(array.is_null(), dtype=bool)


def _take(column: pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """`column`'s values at `rows`, null where a row is -1."""
    return column.combine_chunks().take(pa.array(rows.clip(0), mask=rows < 0))
