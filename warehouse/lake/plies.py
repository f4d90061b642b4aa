"""The `plies` table: one row per mainline ply, derived from a batch of games by Arrow kernels alone.

DuckDB reads one field of a top-level column without decoding the others, but not one field of a
`list<struct>`: a per-move question over `games.moves` decodes all its fields. `plies` holds the same
mainline moves flat, so such a question reads only the columns it names. It is derived, not parsed: the
fields are `games.moves`' own arrays (no copy), beside the game's key repeated and the ply's number. Loads,
compaction, the layout upgrade and Spark all derive it here, so the two tables cannot disagree.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa

from warehouse import _core

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
KEYED_PLIES = 10
# The mover's think time, stored so that a question on it reads one column: derived, it needs the mover's
# clock two plies earlier (a lag, which DuckDB streams on one thread) and the game's increment (a join).
THINK = pa.field("think", pa.decimal128(9, 1))
# Whether the move checkmates (its game's `mate`, on its last ply): a mating move has no `c`, and finding
# it otherwise takes a join with `games` through every ply of the mated games. One bit, in runs.
MATES = pa.field("mates", pa.bool_(), nullable=False)
# Whether the ply's game is analysed (its `has_eval`: an engine evaluation on some move), repeated on each
# ply. Loads write analysed games in row groups of their own (`warehouse.lake.parquet`), so this column's
# statistics let a question on analysed games (lichess writes NAGs only then) skip the others' row groups.
ANALYSED = pa.field("analysed", pa.bool_(), nullable=False)
# The material on the board after the move, packed: each side's pawns, knights, bishops, rooks and
# queens, four bits each (white's in bits 0-19, black's in 20-39; `sql/views` unpacks it). It changes on
# captures and promotions only, so it costs little in runs; null for variants other than Standard and
# Chess960 (`crates/bgn-core/src/material.rs` documents both).
MATERIAL = pa.field("material", pa.int64())
# The phase after the move by lichess's Divider: 0 opening, 1 middlegame, 2 endgame.
PHASE = pa.field("phase", pa.int8())


class Replayed(NamedTuple):
    """The per-ply columns of a batch of games that a replay gives (`_core.named_positions`)."""

    key: pa.Array
    material: pa.Array
    phase: pa.Array


def replayed(games: pa.RecordBatch) -> Replayed:
    """The replayed columns of the plies of `games` (no opening lookup)."""
    keys, _, _, material, phase, _ = _core.named_positions(games, KEYED_PLIES, pa.array([], pa.int64()))
    return Replayed(pa.array(keys), pa.array(material), pa.array(phase))


def plies_of(games: pa.RecordBatch, replay: Replayed | None = None) -> pa.RecordBatch:
    """The plies of `games` (which holds `game_key`, `moves`, `tc_base`, `tc_inc`, `mate`, `has_eval`,
    `variant` and `result`), in the games' order, then by ply: `game_key`, `ply` (the move's 0-based index
    in the mainline, as `variations.ply` counts), the move's fields, `think` (`think_of`), `mates`
    (`mates_of`), the game's `variant` and `result`, then `key`: the PolyGlot key of the position before
    the move for the first `KEYED_PLIES`, null after, `material` and `phase` after the move (`replay` when
    the caller has them, as `warehouse.lake.positions.derive`; else replayed from `moves`, `start_fen` and
    `variant`)."""
    moves: pa.ListArray = games.column("moves")
    offsets = moves.offsets.to_numpy()  # of this (possibly sliced) array, into the unsliced values
    lengths = np.diff(offsets)
    game = np.repeat(np.arange(len(games)), lengths)  # each ply's game: its row in `games`
    ply = np.arange(len(game), dtype=np.int64) - (offsets[:-1] - offsets[0])[game]
    keys = games.column("game_key").to_numpy()[game]
    flat: pa.StructArray = moves.flatten()
    columns = [pa.array(keys, pa.int64()), pa.array(ply, pa.int32())]
    columns += [flat.field(name) for name in MOVE_FIELDS]
    columns.append(think_of(games, flat.field("clk"), ply, game))
    columns.append(mates_of(games, lengths))
    columns.append(pa.array(np.repeat(games.column("has_eval").to_numpy(zero_copy_only=False), lengths)))
    columns.append(games.column("variant").take(game))
    columns.append(games.column("result").take(game))
    columns += replay or replayed(games)
    return pa.RecordBatch.from_arrays(columns, schema=plies_schema(moves.type.value_type))


def plies_schema(move: pa.StructType) -> pa.Schema:
    """The schema of `plies` for games whose `moves` elements are `move`."""
    fields = [pa.field("game_key", pa.int64(), nullable=False), pa.field("ply", pa.int32(), nullable=False)]
    fields += [move.field(name) for name in MOVE_FIELDS]
    derived = [THINK, MATES, ANALYSED, VARIANT, RESULT, pa.field("key", pa.int64()), MATERIAL, PHASE]
    return pa.schema([*fields, *derived])


def think_of(games: pa.RecordBatch, clk: pa.Array, ply: np.ndarray, game: np.ndarray) -> pa.Array:
    """The seconds each ply's mover spent on it, `clk` (of the games' plies in a row, by ply; `game` each
    ply's row in `games`) being the mover's clock after it: its clock before (after its previous move, two
    plies earlier; `tc_base` on its first move) - `clk` + `tc_inc`; null where one of them is unknown.
    Exact: computed in integer tenths."""
    tenths, known = _tenths(clk)
    before = np.empty_like(tenths)
    before[2:] = tenths[:-2]
    before_known = np.zeros_like(known)
    before_known[2:] = known[:-2]
    opening = ply < 2  # also every ply whose "two plies earlier" is another game's
    base, base_known = _seconds_in_tenths(games.column("tc_base"))
    before[opening] = base[game[opening]]
    before_known[opening] = base_known[game[opening]]
    inc, inc_known = _seconds_in_tenths(games.column("tc_inc"))
    think = before - tenths + inc[game]
    known &= before_known & inc_known[game]
    return _decimal(think, known, THINK.type)


def _seconds_in_tenths(seconds: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """An integer array of seconds as int64 tenths (0 where null), and where they are known."""
    return seconds.fill_null(0).to_numpy().astype(np.int64) * 10, seconds.is_valid().to_numpy(
        zero_copy_only=False
    )


def mates_of(games: pa.RecordBatch, lengths: np.ndarray) -> pa.Array:
    """For each ply of the games (in a row, by ply), whether it is the last of a game ending in mate."""
    mates = np.zeros(int(lengths.sum()), bool)
    mated = games.column("mate").fill_null(False).to_numpy(zero_copy_only=False) & (lengths > 0)
    mates[(np.cumsum(lengths) - 1)[mated]] = True
    return pa.array(mates)


def _tenths(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A `decimal128(p, 1)` array's values as int64 tenths (0 where null) and where they are known. The
    values are the low halves of the little-endian 128-bit integers (tenths of clocks fit in 64 bits)."""
    known = values.is_valid().to_numpy(zero_copy_only=False)
    if not known.any():  # an array of nulls may have no values buffer
        return np.zeros(len(values), np.int64), known
    words = np.frombuffer(values.buffers()[1], np.int64, 2 * (values.offset + len(values)))
    return np.where(known, words[2 * values.offset :: 2], 0), known


def _decimal(tenths: np.ndarray, known: np.ndarray, decimal: pa.Decimal128Type) -> pa.Array:
    """int64 tenths as a `decimal128(p, 1)` array, null where not `known`: each low half beside its sign."""
    words = np.empty(2 * len(tenths), np.int64)
    words[0::2] = tenths
    words[1::2] = tenths >> 63
    validity = pa.array(known).buffers()[1]
    return pa.Array.from_buffers(decimal, len(tenths), [validity, pa.py_buffer(words)])
