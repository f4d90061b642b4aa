"""The position columns of a batch of games and its plies: derived by the Rust core from one replay.

A `PgnReader` given the chess-openings table (`reader_openings`) derives them as it replays each game;
`derive` takes games read back from the lake (the layout upgrade, `bgn check --full`)
through `_core.derive_plies`, which feeds the same builder (`crates/bgn-core/src/plies.rs`) from the stored
squares, so they cannot disagree. From the replay come:
- `plies.key`: the key before each of the first `KEYED_PLIES` plies (null after; docs/positions.md);
- `games.final_key`: the key of the game's final position;
- `games.opening_eco`, `opening_name`, `opening_code`: the deepest position of the game (final one
  included) that the chess-openings table names (`warehouse.lake.openings`), beside the `opening` struct
  of the tags, which stays as the source wrote it;
- the rest of `plies` (`warehouse.lake.plies`).
"""

from __future__ import annotations

import functools

import pyarrow as pa

from warehouse import _core
from warehouse.lake.openings import opening_table
from warehouse.lake.plies import PLIES, plies_of, plies_schema

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
    """`games` with the position columns (`GAME_FIELDS`, last), and its plies: those the reader derived
    when the batch carries them (`PLIES`), else derived from its moves (position columns replaced)."""
    if PLIES not in games.schema.names:
        games = pa.record_batch(_core.derive_plies(games, reader_openings()))
    return games.drop_columns([PLIES]), plies_of(games)


def derived_schemas(games: pa.Schema) -> tuple[pa.Schema, pa.Schema]:
    """The schemas of what `derive` makes of games of schema `games`: the games', and their plies'."""
    kept = [f for f in games if f.name not in (*GAME_COLUMNS, PLIES)]
    return pa.schema([*kept, *GAME_FIELDS]), plies_schema(games.field("moves").type.value_type)


@functools.cache
def reader_openings() -> pa.RecordBatch:
    """The opening table as the core takes it (`PgnReader(openings=)`, `derive_plies`): `key` (sorted),
    `eco`, `name`, `code`."""
    return opening_table().select(["key", "eco", "name", "code"]).combine_chunks().to_batches()[0]
