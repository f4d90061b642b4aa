"""The lake back to PGN: tags, moves, NAGs, comments with `[%eval]`/`[%clk]`, variations.

Each move's text (SAN, `$n` NAGs, `{ [%eval 0.17] [%clk 0:03:00] comment }`) is built by DuckDB for a batch
at a time (`export_sql` defines how evals and clocks are written, as lichess writes them); Python numbers
the moves, nests the variations and writes the tags.

Tag order: the Seven Tag Roster (Event, Site, Date, Round, White, Black, Result, with PGN's `?`,
`????.??.??` and `*` when unknown), then the `headers` map in file order (UTCDate, UTCTime, SetUp, …), then
the tags kept in columns: WhiteTitle, BlackTitle, WhiteElo, BlackElo, WhiteRatingDiff, BlackRatingDiff,
Variant (all but standard games), ECO, Opening, TimeControl, Termination, FEN. For a lichess game that is
lichess's own order. A Termination the column holds in lichess's words (`Normal` for chess.com's `X won
by checkmate`) is written as the source wrote it, kept in `headers`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import duckdb
import pyarrow as pa

from warehouse import _core, export_sql
from warehouse.export_json import ExportResult
from warehouse.export_out import write_texts
from warehouse.lake.layout import PARTITION_COLUMNS, Partition
from warehouse.lake.location import Lake
from warehouse.lake_scan import ALL, Selection, grouped, scan

REPEATED_KEY = re.compile(r" \([0-9]+\)$")
# Tags the lake keeps in columns (the Rust core's list): `headers` holds the others.
COLUMN_TAGS = frozenset(_core.COLUMN_TAGS)

RESULTS = {"W": "1-0", "B": "0-1", "D": "1/2-1/2", "*": "*"}
LINE_WIDTH = 79
COLUMNS = [
    "game_id", "event", "site", "round", "result", "players", "termination", "time_control", "opening",
    "variant", "start_fen", "comment", "headers", "moves", "variations", "source_file", "source_offset",
]  # fmt: skip


def connect() -> duckdb.DuckDBPyConnection:
    return export_sql.connect("pgn")


def pgn_games(lake: Lake, selection: Selection = ALL) -> Iterator[tuple[str, int, str]]:
    """`(source_file, source_offset, PGN text)` of every selected game, in lake order.

    :raises LakeError: at once (not on the first `next`), when `lake` is not a lake or a non-empty
        `selection` matches none of its partitions.
    """
    return texts(scan(lake, COLUMNS, selection))


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
    con = connect()
    # The lake leaves out the SAN the position gives: filled back before pgn.sql writes the moves.
    for group in grouped(export_sql.with_san(batches)):
        moves = export_sql.run(con, group.table.select(["moves", "variations"]), "pgn_moves")
        others = group.table.drop_columns(["moves", "variations"]).to_pylist()
        for game, parts in zip(others, moves.to_pylist(), strict=True):
            game.update(parts)
            yield game["source_file"], game["source_offset"], game_pgn(game)


def game_pgn(game: dict[str, Any]) -> str:
    """One game's PGN: tags, a blank line, the movetext, a blank line."""
    result = RESULTS[game["result"]]
    tags = "".join(f'[{name} "{escape(value)}"]\n' for name, value in tag_pairs(game))
    return f"{tags}\n{wrap([*movetext(game), result])}\n\n"


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


def escape(value: str) -> str:
    """A tag value with PGN's escapes for `\\` and `"`."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def movetext(game: dict[str, Any]) -> list[str]:
    """The movetext's tokens (without the result): numbered moves, comments, `(` and `)`."""
    # An empty line `( )` holds nothing python-chess keeps.
    children = export_sql.branches([line for line in game["variations"] if line["moves"]])

    def pieces(item: tuple[export_sql.Line, int]) -> list[str | tuple[export_sql.Line, int]]:
        """A line's tokens, its variations as (line, ply of its first move) to unfold in place."""
        line, first_ply = item
        out: list[str | tuple[export_sql.Line, int]] = [comment(line["comment"])] if line["comment"] else []
        # Black's move gets its number (`5...`) first in a line and after a comment or a variation.
        black_number = True
        for index, text in enumerate(line["moves"]):
            ply = first_ply + index
            # A move and its number are one token, never split across lines.
            if ply % 2 == 0:
                out.append(f"{ply // 2 + 1}. {text}")
            elif black_number:
                out.append(f"{ply // 2 + 1}... {text}")
            else:
                out.append(text)
            alts = children.get((line["id"], index), [])
            for alt in alts:
                out.extend(["(", (alt, ply), ")"])
            black_number = text.endswith("}") or bool(alts)
        return out

    mainline = {"id": 0, "moves": game["moves"], "comment": game["comment"]}
    return export_sql.unfold((mainline, start_ply(game["start_fen"])), pieces)


def start_ply(fen: str | None) -> int:
    """The ply number of the first move: 0 for White's first move, 1 for Black's, from the FEN's side to
    move and fullmove number."""
    if not fen:
        return 0
    fields = fen.split()
    black = len(fields) > 1 and fields[1] == "b"
    fullmove = int(fields[5]) if len(fields) > 5 and fields[5].isdigit() else 1
    return 2 * (max(fullmove, 1) - 1) + int(black)


def comment(text: str) -> str:
    return "{ " + text + " }"


def wrap(tokens: list[str]) -> str:
    """Tokens joined by spaces in lines of at most `LINE_WIDTH` characters where tokens allow (never
    inside a token: a line break in a comment would change its text)."""
    lines: list[str] = []
    current = ""
    for token in tokens:
        if current and len(current) + 1 + len(token) > LINE_WIDTH:
            lines.append(current)
            current = token
        else:
            current = f"{current} {token}" if current else token
    lines.append(current)
    return "\n".join(lines)


def export_pgn(lake: Lake, out: str | os.PathLike[str], selection: Selection = ALL) -> ExportResult:
    """Writes the selected games of `lake` as one PGN file `out` (local or s3://; `.bz2` / `.zst` names are
    compressed), or to standard output when `out` is `-`. The file appears at `out` only when complete
    (see `export_out.OutputFile`).

    :raises OutputError: when `out` exists, is inside `lake`, or another export is writing it.
    :raises LakeError: when `lake` is not a lake, or a non-empty `selection` matches none of its partitions.
    """
    games = pgn_games(lake, selection)  # the lake's errors before any output is made
    result = ExportResult()
    result.games, result.bytes, path = write_texts(out, (text for _, _, text in games), lake)
    result.files += [path] if path else []
    return result
