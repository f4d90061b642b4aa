"""The batches the replay kernels (`_core.position_keys`, `find_position`) take, built from the
lake's `plies/` move columns rather than `games.moves` (which DuckDB and pyarrow decode whole)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from warehouse.lake.layout import plies_twin
from warehouse.lake.location import Lake
from warehouse.lake.parquet import read_columns

# The move fields a replay reads.
MOVE_FIELDS = ("p", "f", "t", "promote", "castle")


def moves_list(plies: pa.Table, counts: np.ndarray) -> pa.ListArray:
    """The `moves` lists the kernels replay (`MOVE_FIELDS`, and `san` null: the position gives it) of games
    whose plies are `plies` (`MOVE_FIELDS` columns), `counts[i]` of them for game i, in order."""
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    fields = [plies[f].combine_chunks() for f in MOVE_FIELDS] + [pa.nulls(plies.num_rows, pa.string())]
    return pa.ListArray.from_arrays(
        pa.array(offsets), pa.StructArray.from_arrays(fields, [*MOVE_FIELDS, "san"])
    )


def replay_batch(lake: Lake, rel: str) -> tuple[pa.Table, pa.RecordBatch]:
    """The games of the `games/` file `rel` (`game_key`, `n_plies`) and the batch the replay kernels take
    for them (`moves` from its `plies/` twin's move columns, `start_fen`, `variant`)."""
    games = read_columns(lake, rel, ["game_key", "start_fen", "variant", "n_plies"])
    plies = read_columns(lake, plies_twin(rel), list(MOVE_FIELDS))
    moves = moves_list(plies, games["n_plies"].to_numpy())
    batch = pa.record_batch(
        [moves, games["start_fen"].combine_chunks(), games["variant"].combine_chunks()],
        names=["moves", "start_fen", "variant"],
    )
    return games.select(["game_key", "n_plies"]), batch
