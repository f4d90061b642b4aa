"""The lake back to PGN: tags, moves, NAGs, comments with `[%eval]`/`[%clk]`, variations.

The text of a batch of games is written by the Rust core (`_core.pgn_texts`, crates/bgn-core/src/
export_pgn.rs): one buffer a batch, no Python object per game or move. Evals and clocks are written as
lichess writes them (the Rust core, as for the JSON export; the study export's SQL in sql/exports/text.sql
writes the same).

Tag order: the Seven Tag Roster (Event, Site, Date, Round, White, Black, Result, with PGN's `?`,
`????.??.??` and `*` when unknown), then the `headers` map in file order (UTCDate, UTCTime, SetUp, …), then
the tags kept in columns: WhiteTitle, BlackTitle, WhiteElo, BlackElo, WhiteRatingDiff, BlackRatingDiff,
Variant (all but standard games), ECO, Opening, TimeControl, Termination, FEN. For a lichess game that is
lichess's own order. A Termination the column holds in lichess's words (`Normal` for chess.com's `X won
by checkmate`) is written as the source wrote it, kept in `headers`. `tag_pairs` is that order for the study
export, which writes its tags itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from warehouse import _core
from warehouse.exports import study_sql
from warehouse.exports.bgn_json import ExportResult
from warehouse.exports.lake_scan import ALL, Selection, scan
from warehouse.lake.layout import PARTITION_COLUMNS, Partition
from warehouse.lake.location import Lake
from warehouse.output import write_blocks

REPEATED_KEY = re.compile(r" \([0-9]+\)$")
# Tags the lake keeps in columns (the Rust core's list): `headers` holds the others.
COLUMN_TAGS = frozenset(_core.COLUMN_TAGS)

RESULTS = {"W": "1-0", "B": "0-1", "D": "1/2-1/2", "*": "*"}
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
    for _, batch in study_sql.with_san(batches):
        yield pa.array(_core.pgn_texts(batch)), batch


def pgn_blocks(batches: Iterator[tuple[Partition, pa.RecordBatch]]) -> Iterator[tuple[int, memoryview]]:
    """`(games, their PGN)` of each batch: one buffer a batch, no Python object a game."""
    for texts, _ in pgn_batches(batches):
        ends = np.frombuffer(texts.buffers()[1], dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
        yield len(texts), memoryview(texts.buffers()[2])[ends[0] : ends[-1]]


def tag_name(key: str) -> str:
    """The tag a `headers` key stands for: a repeated tag is keyed `Date (2)`, `Date (3)`…"""
    return REPEATED_KEY.sub("", key)


def tag_pairs(game: dict[str, Any]) -> list[tuple[str, str]]:
    white, black = (game["players"] + [{}, {}])[:2]
    headers: list[tuple[str, str]] = game["headers"]
    # The first Date goes to the roster; a repeated one stays where it was (readers keep the last).
    first = next((i for i, (name, _) in enumerate(headers) if name == "Date"), None)
    date = "????.??.??" if first is None else headers[first][1]
    rest = [(tag_name(name), value) for i, (name, value) in enumerate(headers) if i != first]
    rest, termination = termination_tag(rest, game["termination"])
    # Tags a column also holds, kept in `headers` as earlier occurrences of a repeated tag or as text
    # the column cannot spell (`WhiteElo "?"`): written first, so that a reader keeping a tag's last
    # value gets the column's, as the source's readers did.
    superseded = [(name, value) for name, value in rest if name in COLUMN_TAGS]
    pairs = [
        *superseded,
        ("Event", unknown(game["event"])),
        ("Site", unknown(game["site"])),
        ("Date", date),
        ("Round", unknown(game["round"])),
        ("White", unknown(white.get("name"))),
        ("Black", unknown(black.get("name"))),
        ("Result", RESULTS[game["result"]]),
        *((name, value) for name, value in rest if name not in COLUMN_TAGS),
    ]
    optional = [
        ("WhiteTitle", white.get("title")),
        ("BlackTitle", black.get("title")),
        ("WhiteElo", number(white.get("elo"))),
        ("BlackElo", number(black.get("elo"))),
        ("WhiteRatingDiff", signed(white.get("rating_diff"))),
        ("BlackRatingDiff", signed(black.get("rating_diff"))),
        ("Variant", game["variant"] if game["variant"] != "Standard" else None),
        ("ECO", game["opening"]["eco"]),
        ("Opening", game["opening"]["verbose"]),
        ("TimeControl", game["time_control"]),
        ("Termination", termination),
        ("FEN", game["start_fen"]),
    ]
    return pairs + [(name, value) for name, value in optional if value is not None]


def termination_tag(
    tags: list[tuple[str, str]], column: str | None
) -> tuple[list[tuple[str, str]], str | None]:
    """The Termination tag as the source wrote it: the column holds lichess's word for it (`Normal` for
    `X won by checkmate`) and `headers` the text, which goes back in the column's place (the tags without
    it, and the text)."""
    last = next((i for i in reversed(range(len(tags))) if tags[i][0] == "Termination"), None)
    if last is None or column is None:
        return tags, column
    written = tags[last][1]
    if written == column or _core.termination(written) != column:
        return tags, column
    return tags[:last] + tags[last + 1 :], written


def unknown(value: str | None) -> str:
    """A Seven Tag Roster value, PGN's `?` when absent (an empty value stays empty)."""
    return "?" if value is None else value


def number(value: int | None) -> str | None:
    return None if value is None else str(value)


def signed(value: int | None) -> str | None:
    """A rating difference as lichess writes it: `+6`, `-6`, `+0`."""
    return None if value is None else f"{value:+d}"


def export_pgn(lake: Lake, out: str | os.PathLike[str], selection: Selection = ALL) -> ExportResult:
    """Writes the selected games of `lake` as one PGN file `out` (local or s3://; `.bz2` / `.zst` names are
    compressed), or to standard output when `out` is `-`. The file appears at `out` only when complete
    (see `output.OutputFile`).

    :raises OutputError: when `out` exists, is inside `lake`, or another export is writing it.
    :raises LakeError: when `lake` is not a lake, or a non-empty `selection` matches none of its partitions.
    """
    batches = scan(lake, READ_COLUMNS, selection)  # the lake's errors before any output is made
    result = ExportResult()
    result.games, result.bytes, path = write_blocks(out, pgn_blocks(batches), lake)
    result.files += [path] if path else []
    return result
