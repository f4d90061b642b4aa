"""The lake as BGN JSON-lines, bz2, laid out as the BGN archive:
``<out>/<type>/<year>/<month>/G.<n>.<type>.json.bz2``.

One game a line, BGN's names, absent values omitted (never null); the shape is docs/exports.md and the
JSON Schema docs/bgn.schema.json. DuckDB writes each line from a batch of games (see `export_sql`); only
games with variations (rare outside annotated collections) are finished in Python, which nests their
alternate lines into the moves they replace.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from warehouse import export_sql
from warehouse.export_out import OutputFile, staged_directory, thread_pool
from warehouse.lake.layout import Partition
from warehouse.lake.location import Lake
from warehouse.lake.storage import filesystem
from warehouse.lake_scan import ALL, Selection, grouped, scan

GAMES_PER_FILE = 200_000
EMPTY_ANNOTATION = "{}"
COLUMNS = [
    "type", "game_id", "site", "event", "round", "datetime", "result", "termination", "time_control",
    "opening", "players", "variant", "start_fen", "comment", "moves", "variations",
]  # fmt: skip

# One move: `move_head` is the object up to its `a` list; `move_ann` the annotation objects: the first holds
# the first NAG, eval, clock and comment (`{}` when none), each further NAG gets an object of its own.
# `move_json` always writes `"a":[...]`; `drop_empty_a` removes the empty ones from a game's joined moves
# afterwards, which costs one pass instead of evaluating every annotation twice (SQL macros are inlined,
# `nullif(x, '')` would compute x twice). The pattern cannot occur inside a JSON string, where `"` is `\"`.
MOVE_MACROS = r"""
create or replace macro move_head(m) as
    '{"p":"' || m.p || '","f":"' || m.f || '","t":"' || m.t || '"'
    || coalesce(',"x":"' || m.x || '"', '') || coalesce(',"c":' || m.c, '')
    || coalesce(',"castle":"' || m.castle || '"', '') || coalesce(',"promote":"' || m.promote || '"', '');

create or replace macro move_ann(m) as
    '{' || concat_ws(',',
        '"nag":' || m.nag,
        '"eval":["' || eval_text(m.eval_cp, m.eval_mate) || '"]',
        '"clk":["' || clk_text(m.clk) || '"]',
        '"comment":' || to_json(m.comment)
    ) || '}'
    || if(len(m.nags) > 1,
        ',' || array_to_string(list_transform(m.nags[2:], lambda n: '{"nag":' || n || '}'), ','), '');

create or replace macro move_json(m) as move_head(m) || ',"a":[' || move_ann(m) || ']}';

create or replace macro drop_empty_a(text) as replace(text, ',"a":[{}]}', '}');

create or replace macro moves_json(moves) as
    '[' || drop_empty_a(array_to_string(list_transform(moves, lambda m: move_json(m)), ',')) || ']';

create or replace macro move_parts(moves) as
    list_transform(moves, lambda m: {'head': move_head(m), 'ann': move_ann(m)});
"""

# A game's JSON text up to `"moves":`.
HEAD = r"""
'{' || concat_ws(',',
    '"id":' || to_json(game_id),
    '"site":' || to_json(site),
    '"event":' || to_json(event),
    '"round":' || to_json(round),
    '"type":' || to_json(type),
    '"result":' || to_json(result),
    '"datetime":"' || strftime(datetime, '%Y-%m-%dT%H:%M:%SZ') || '"',
    '"timeControl":' || to_json(time_control),
    '"termination":' || to_json(termination),
    '"variant":' || if(variant = 'Standard', null, to_json(variant)),
    '"fen":' || to_json(start_fen),
    '"opening":{' || nullif(concat_ws(',',
        '"ECO":' || to_json(opening.eco),
        '"verbose":' || to_json(opening.verbose),
        '"generic":' || to_json(opening.generic)
    ), '') || '}',
    '"players":[' || array_to_string(list_transform(players, lambda p: '{' || concat_ws(',',
        if(p.name is null, null, '"handle":{'
            || if(site like 'https://lichess.org/%', '"domain":"org.lichess",', '')
            || '"value":' || to_json(p.name) || '}'),
        '"ELO_' || type || '":' || p.elo,
        '"ratingDiff":' || p.rating_diff,
        '"title":' || to_json(p.title)
    ) || '}'), ',') || ']',
    '"comment":' || to_json(comment)
) || ',"moves":'
"""

# Every game's line, its moves without their variations; then, over the games that have variations only,
# the parts that `assemble` nests (their lambdas would cost the whole batch: DuckDB evaluates both sides
# of an `if`).
LINES = f"select {HEAD} || moves_json(moves) || '}}' as line from games"
PARTS = f"""
select {HEAD} as head, move_parts(moves) as mainline, list_transform(variations, lambda v: {{
    'id': v.id, 'parent': v.parent, 'ply': v.ply, 'comment': to_json(v.comment), 'moves': move_parts(v.moves)
}}) as variations
from games
"""


def connect() -> duckdb.DuckDBPyConnection:
    con = export_sql.connect()
    con.execute(MOVE_MACROS)
    return con


def json_lines(con: duckdb.DuckDBPyConnection, batch: pa.Table) -> list[str]:
    """One BGN JSON text per game of `batch` (which holds `COLUMNS`), in order."""
    lines: list[str] = export_sql.run(con, batch, LINES).column("line").to_pylist()
    branching = pc.indices_nonzero(pc.greater(pc.list_value_length(batch.column("variations")), 0))
    if len(branching):
        parts = export_sql.run(con, batch.take(branching), PARTS).to_pylist()
        for i, game in zip(branching.to_pylist(), parts, strict=True):
            lines[i] = game["head"] + assemble(game["mainline"], game["variations"]) + "}"
    return lines


def assemble(mainline: list[dict[str, Any]], variations: list[dict[str, Any]]) -> str:
    """The `moves` array of a game with variations: each line goes, as `{"alt": [line, ...]}` in `a`, on
    the move it replaces; a line's starting comment is `{"precomment": ...}` in its first move's `a`."""
    children = export_sql.branches(variations)

    def pieces(line: export_sql.Line) -> list[str | export_sql.Line]:
        out: list[str | export_sql.Line] = ["["]
        for ply, part in enumerate(line["moves"]):
            extra = [] if part["ann"] == EMPTY_ANNOTATION else [part["ann"]]
            if ply == 0 and line["comment"]:
                extra.append('{"precomment":' + line["comment"] + "}")
            alts = children.get((line["id"], ply), [])
            out.append(("," if ply else "") + part["head"])
            if extra or alts:
                out.append(',"a":[' + ",".join(extra))
                if alts:
                    out.append(("," if extra else "") + '{"alt":[')
                    for n, alt in enumerate(alts):
                        out.extend([",", alt] if n else [alt])
                    out.append("]}")
                out.append("]")
            out.append("}")
        out.append("]")
        return out

    return "".join(export_sql.unfold({"id": 0, "moves": mainline, "comment": None}, pieces))


@dataclass
class ExportResult:
    """What an export wrote: games, files (paths on their filesystem) and their total size."""

    games: int = 0
    files: list[str] = field(default_factory=list)
    bytes: int = 0


class ArchiveWriter:
    """Writes lines into ``<root>/<type>/<year>/<month>/G.<n>.<type>.json.bz2``, `games_per_file` a file;
    `names` are the files' paths under `root`."""

    def __init__(self, fs: pafs.FileSystem, root: str, games_per_file: int, pool: ThreadPoolExecutor):
        self.fs, self.root, self.games_per_file, self.pool = fs, root, games_per_file, pool
        self.games = self.bytes = 0
        self.names: list[str] = []
        self.file: OutputFile | None = None
        self.partition: Partition | None = None
        self.in_file = 0
        self.numbers: dict[Partition, int] = {}

    def write(self, partition: Partition, lines: list[str]) -> None:
        start = 0
        while start < len(lines):
            if self.file is None or partition != self.partition or self.in_file >= self.games_per_file:
                self._next_file(partition)
            assert self.file is not None
            take = lines[start : start + self.games_per_file - self.in_file]
            self.file.write(("\n".join(take) + "\n").encode())
            self.in_file += len(take)
            self.games += len(take)
            start += len(take)

    def _next_file(self, partition: Partition) -> None:
        self.close()
        n = self.numbers[partition] = self.numbers.get(partition, -1) + 1
        kind, year, month = partition
        name = f"{kind}/{year}/{month}/G.{n}.{kind}.json.bz2"
        path = f"{self.root}/{name}"
        self.file, self.partition, self.in_file = OutputFile(self.fs, path, self.pool, path), partition, 0
        self.names.append(name)

    def close(self) -> None:
        if self.file is not None:
            file, self.file = self.file, None
            self.bytes += file.close()

    def abort(self) -> None:
        if self.file is not None:
            file, self.file = self.file, None
            file.abort()


def export_json(
    lake: Lake,
    out: str | os.PathLike[str],
    games_per_file: int = GAMES_PER_FILE,
    selection: Selection = ALL,
) -> ExportResult:
    """Writes the selected games of `lake` as BGN JSON-lines under `out` (local or s3://), which must be
    empty or absent. Streams group by group of batches (bounded memory); bz2 is compressed on every core.

    The files are staged out of `out` and published at the end (see `export_out.staged_directory`): an
    export that fails or is interrupted leaves `out` as it was; one killed leaves a staging folder the
    next export into `out` clears.

    :raises OutputError: when `out` is a file, holds files, or another export is writing it.
    :raises LakeError: when `lake` is not a lake, or a non-empty `selection` matches none of its partitions.
    """
    if games_per_file < 1:
        raise ValueError(f"games per file must be at least 1, got {games_per_file}")
    batches = scan(lake, COLUMNS, selection)  # the lake's errors before any output is made
    fs, root = filesystem(out)
    staging = staged_directory(fs, root, str(out))
    con = connect()
    try:
        with thread_pool() as pool:
            writer = ArchiveWriter(fs, staging.root, games_per_file, pool)
            try:
                for group in grouped(batches):
                    lines = json_lines(con, group.table)
                    for partition, start, stop in group.spans:
                        writer.write(partition, lines[start:stop])
                writer.close()
            finally:
                writer.abort()
        staging.publish()
    except BaseException:
        staging.discard()
        raise
    return ExportResult(writer.games, [f"{root}/{name}" for name in writer.names], writer.bytes)
