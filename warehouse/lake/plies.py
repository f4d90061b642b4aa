"""The `plies` table: one row per mainline ply, taken apart from a batch of games without a copy.

DuckDB reads one field of a top-level column without decoding the others, but not one field of a
`list<struct>`: a per-move question over `games.moves` decodes all its fields. `plies` holds the same
mainline moves flat, so such a question reads only the columns it names. It is derived, not parsed: the
Rust core (`crates/bgn-core/src/plies.rs`) builds each game's plies beside its moves, as the reader replays
it or from stored games (`warehouse.lake.positions`), in the batch's `plies` column; here the moves'
fields (`games.moves`' own arrays) and those of `plies` become the table's columns. Loads (Spark's
tasks too) and the layout upgrade derive it so, and compaction and dedup rewrite a file's plies with its
games (`warehouse.lake.rewrite`), so the two tables cannot disagree.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from warehouse import _core

# The column of a batch of games that carries their plies (the fields below, a list per game) to the writer.
PLIES = "plies"
# The fields of `games.moves` that `plies` carries (docs/schema.md); `san`, `nags` and `comment` stay in
# `games` only.
MOVE_FIELDS = ("p", "f", "t", "x", "c", "castle", "promote", "blast", "nag", "eval_cp", "eval_mate", "clk")
# The game's `variant`, repeated on each of its plies (Parquet's dictionary and run lengths make it ~free),
# so that a per-move question filters on the rules without a join.
VARIANT = pa.field("variant", pa.string(), nullable=False)
# The game's `result` (W, B, D or *), repeated on each of its plies as `variant` is (~1.2 B/game: a run a
# game), so that a per-move question scoring positions by their game's result (material_by_phase,
# material_imbalances) is one scan of plies, not a join with `games` through every ply.
RESULT = pa.field("result", pa.string())
# The plies whose position `key` is stored (null after): the openings, where books, the explorer and most
# searches look. Deeper positions cost a replay scan (`warehouse.positions`); docs/positions.md measures
# why not more: keys barely compress after the opening, and the lake must stay within 2x its source.
KEYED_PLIES: int = _core.KEYED_PLIES
# The mover's think time, stored so that a question on it reads one column: derived, it needs the mover's
# clock two plies earlier (a lag, which DuckDB streams on one thread) and the game's increment (a join).
THINK = pa.field("think", pa.decimal128(9, 1))
# Whether the move checkmates (its game's `mate`, on its last ply): a mating move has no `c`, and finding
# it otherwise takes a join with `games` through every ply of the mated games. One bit, in runs.
MATES = pa.field("mates", pa.bool_(), nullable=False)
# Whether the ply's game is analysed (its `has_eval`: an engine evaluation on some move), repeated on each
# ply. Loads write analysed games in row groups of their own (`warehouse.lake.parquet`; a small file's games
# in one), so this column's statistics let a question on analysed games (lichess writes NAGs only then)
# skip the others' row groups.
ANALYSED = pa.field("analysed", pa.bool_(), nullable=False)
# The material on the board after the move, packed: each side's pawns, knights, bishops, rooks and
# queens, four bits each (white's in bits 0-19, black's in 20-39; `sql/views` unpacks it). It changes on
# captures and promotions only, so it costs little in runs; null for variants other than Standard and
# Chess960 (`crates/bgn-core/src/material.rs` documents both).
MATERIAL = pa.field("material", pa.int64())
# The phase after the move by lichess's Divider: 0 opening, 1 middlegame, 2 endgame.
PHASE = pa.field("phase", pa.int8())


def plies_of(games: pa.RecordBatch) -> pa.RecordBatch:
    """The plies of `games` (a batch holding `moves` and `PLIES`), in the games' order, then by ply:
    `game_key`, `ply` (the move's 0-based index in the mainline, as `variations.ply` counts), the move's
    fields, `think` (the seconds the mover spent on it: its clock before, after its previous move or
    `tc_base`, minus `clk`, plus `tc_inc`; null where one is unknown), `mates` (the last move of a game
    ending in mate), `analysed` (the game's `has_eval`), the game's `variant` and `result`, then `key`: the
    PolyGlot key of the position before the move for the first `KEYED_PLIES`, null after, and `material`
    and `phase` after the move (`crates/bgn-core/src/material.rs`)."""
    moves: pa.StructArray = games.column("moves").flatten()
    plies: pa.StructArray = games.column(PLIES).flatten()
    # The game's key from `games` itself, which a source may have rewritten after the read (JSON imports).
    game = pc.list_parent_indices(games.column("moves"))
    columns = [games.column("game_key").take(game), plies.field("ply")]
    columns += [moves.field(name) for name in MOVE_FIELDS]
    columns += [plies.field(f.name) for f in (THINK, MATES, ANALYSED, VARIANT)]
    columns.append(games.column("result").take(game))  # from `games`, as the key: no replay needed
    columns += [plies.field(name) for name in ("key", MATERIAL.name, PHASE.name)]
    return pa.RecordBatch.from_arrays(columns, schema=plies_schema(games.column("moves").type.value_type))


def plies_schema(move: pa.StructType) -> pa.Schema:
    """The schema of `plies` for games whose `moves` elements are `move`."""
    fields = [pa.field("game_key", pa.int64(), nullable=False), pa.field("ply", pa.int32(), nullable=False)]
    fields += [move.field(name) for name in MOVE_FIELDS]
    derived = [THINK, MATES, ANALYSED, VARIANT, RESULT, pa.field("key", pa.int64()), MATERIAL, PHASE]
    return pa.schema([*fields, *derived])
