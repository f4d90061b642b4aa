"""The lake back to PGN: tags, moves, NAGs, comments with `[%eval]`/`[%clk]`, variations.

The text of a batch of games is written by the Rust core (`_core.pgn_texts`, crates/bgn-core/src/
export_pgn.rs): one buffer a batch, no Python object per game or move. Evals and clocks are written as
lichess writes them (the Rust core, as for the BGN and study JSON exports).

Tag order: the Seven Tag Roster (Event, Site, Date, Round, White, Black, Result, with PGN's `?`,
`????.??.??` and `*` when unknown), then the `headers` map in file order (UTCDate, UTCTime, SetUp, …), then
the tags kept in columns: WhiteTitle, BlackTitle, WhiteElo, BlackElo, WhiteRatingDiff, BlackRatingDiff,
Variant (all but standard games), ECO, Opening, TimeControl, Termination, FEN. For a lichess game that is
lichess's own order. A Termination the column holds in lichess's words (`Normal` for chess.com's `X won
by checkmate`) is written as the source wrote it, kept in `headers`. The study export's tags are these
(the Rust core's `GameTags`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import duckdb
import numpy as np
import pyarrow as pa

from warehouse import _core
from warehouse.exports.bgn_json import ExportResult
from warehouse.exports.lake_scan import ALL, ScanProgress, Selection, scan, with_san
from warehouse.lake.layout import PARTITION_COLUMNS, Partition
from warehouse.lake.location import Lake
from warehouse.output import write_blocks

COLUMNS = [
    "game_id", "event", "site", "round", "result", "players", "termination", "time_control", "opening",
    "variant", "start_fen", "comment", "headers", "moves", "variations", "source_file", "source_offset",
]  # fmt: skip


# What the PGN export reads: COLUMNS, of the moves only the fields `fill_san` and the PGN text use.
MOVE_FIELDS = ["p", "f", "t", "castle", "promote", "san", "nags", "eval_cp", "eval_mate", "clk", "comment"]
READ_COLUMNS = [
    *(c for c in COLUMNS if c not in ("moves", "variations")),
    *(f"moves.list.element.{f}" for f in MOVE_FIELDS),
    *(f"variations.list.element.{f}" for f in ("id", "parent", "ply", "comment")),
    *(f"variations.list.element.moves.list.element.{f}" for f in MOVE_FIELDS),
]


def pgn_games(lake: Lake, selection: Selection = ALL) -> Iterator[tuple[str, int, str]]:
    """`(source_file, source_offset, PGN text)` of every selected game, in lake order.

    :raises LakeError: at once (not on the first `next`), when `lake` is not a lake or a non-empty
        `selection` matches none of its partitions.
    """
    return texts(scan(lake, READ_COLUMNS, selection))


def keyed_pgn(con: duckdb.DuckDBPyConnection, game_keys: pa.Array) -> Iterator[str]:
    """The PGN text of each game of `con`'s lake (a `warehouse.connect` connection) whose `game_key` is in
    `game_keys`, by partition, then date and id."""
    con.register("pgn_game_keys", pa.table({"game_key": game_keys}))
    try:
        games = con.sql(
            f"select {', '.join([*PARTITION_COLUMNS, *COLUMNS])} from games where game_key in "
            "(select game_key from pgn_game_keys) order by type, year, month, datetime, game_id"
        ).to_arrow_table()
    finally:
        con.unregister("pgn_game_keys")
    return (text for _, _, text in texts(by_partition(games)))


def by_partition(games: pa.Table) -> Iterator[tuple[Partition, pa.RecordBatch]]:
    """The batches of `games` (sorted by type, year, month) with their partition, as `texts` takes them."""
    partition_columns = list(PARTITION_COLUMNS)
    partitions = games.select(partition_columns).to_pylist()
    start = 0
    for end in range(1, len(partitions) + 1):
        if end == len(partitions) or partitions[end] != partitions[start]:
            key = Partition(**partitions[start])
            for batch in games.slice(start, end - start).drop_columns(partition_columns).to_batches():
                yield key, batch
            start = end


def texts(batches: Iterator[tuple[Partition, pa.RecordBatch]]) -> Iterator[tuple[str, int, str]]:
    """`(source_file, source_offset, PGN text)` of every game of `batches`."""
    for texts, batch in pgn_batches(batches):
        sources = zip(
            batch.column("source_file").to_pylist(), batch.column("source_offset").to_pylist(), strict=True
        )
        for (source, offset), text in zip(sources, texts.to_pylist(), strict=True):
            yield source, offset, text


def pgn_batches(
    batches: Iterator[tuple[Partition, pa.RecordBatch]],
) -> Iterator[tuple[pa.Array, pa.RecordBatch]]:
    """Each batch's games as PGN (a string array, one text a game, written by the Rust core:
    `_core.pgn_texts`), beside the batch."""
    # The lake leaves out the SAN the position gives: filled back before the moves are written.
    for _, batch in with_san(batches):
        yield pa.array(_core.pgn_texts(batch)), batch


def pgn_blocks(batches: Iterator[tuple[Partition, pa.RecordBatch]]) -> Iterator[tuple[int, memoryview]]:
    """`(games, their PGN)` of each batch: one buffer a batch, no Python object a game."""
    for texts, _ in pgn_batches(batches):
        ends = np.frombuffer(texts.buffers()[1], dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
        yield len(texts), memoryview(texts.buffers()[2])[ends[0] : ends[-1]]


def export_pgn(
    lake: Lake,
    out: str | os.PathLike[str],
    selection: Selection = ALL,
    progress: ScanProgress | None = None,
) -> ExportResult:
    """Writes the selected games of `lake` as one PGN file `out` (local or s3://; `.bz2` / `.zst` names are
    compressed), or to standard output when `out` is `-`. The file appears at `out` only when complete
    (see `output.OutputFile`). `progress`: as `lake_scan.scan` calls it.

    :raises OutputError: when `out` exists, is inside `lake`, or another export is writing it.
    :raises LakeError: when `lake` is not a lake, or a non-empty `selection` matches none of its partitions.
    """
    batches = scan(lake, READ_COLUMNS, selection, progress=progress)  # the lake's errors before any output
    result = ExportResult()
    result.games, result.bytes, path = write_blocks(out, pgn_blocks(batches), lake)
    result.files += [path] if path else []
    return result
