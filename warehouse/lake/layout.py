"""Where things are in a lake, relative to its root (`/`-separated, no leading slash):

    _layout.json                  which layout the lake follows (`LAYOUT`): {"layout": 5}
    games/type=<type>/year=<yyyy>/month=<m>/<input>-<load>-<n>.parquet
    plies/type=<type>/year=<yyyy>/month=<m>/<input>-<load>-<n>.parquet
                                  the plies of exactly the games of the `games/` file of the same name
    rejects/<input>-<load>.jsonl
    _index/positions/<op>/<bucket>.parquet
                                  the optional position index (`warehouse.positions.index`), when built
    _loads/<op>.json              the commit record of an operation (a load or a compaction)
    _staging/<op>/...             files of an operation not yet published, at the same relative paths
    _lock                         local lakes: held by the one writer at work

Files are written under `_staging/`, which no reader's `games/**/*.parquet` glob reaches, and moved to their
final place only after the operation's record has been written (see `warehouse.lake.commit`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pyarrow as pa

GAMES, PLIES, REJECTS, LOADS, STAGING, LOCK = "games", "plies", "rejects", "_loads", "_staging", "_lock"
LAYOUT_FILE, INDEX = "_layout.json", "_index"
# What the lake's root holds: none of them may be a symbolic link (see `Lake.open`).
ENTRIES = (LAYOUT_FILE, LOCK, GAMES, PLIES, REJECTS, LOADS, STAGING, INDEX)

# The lake's layout version. 1: `games/` only, no layout file (lakes written before November 2026).
# 2: `games/` with `game_key`, `plies/` beside it, `_layout.json`. 3: `plies.think` and `plies.mates`, and
# `variant` statistics in both tables (what the SQL views' questions and variant choice read).
# 4: `plies.analysed`, and the games with an engine evaluation in row groups of their own in both tables.
# 5: `plies.material` and `plies.phase`, and the games' castling, phase and final material columns
# (`crates/bgn-core/src/material.rs`).
LAYOUT = 5
# What each older layout lacks, for the one line that names the upgrade.
BEFORE = {
    1: "before the plies/ table",
    2: "before plies.think and plies.mates",
    3: "before plies.analysed",
    4: "before plies.material and plies.phase",
}

# The values of the `type` partition (docs/schema.md).
SPEEDS = ("ultrabullet", "bullet", "blitz", "rapid", "classical", "correspondence", "unknown")
# The hive partition columns, as readers type them.
PARTITION_SCHEMA = pa.schema([("type", pa.string()), ("year", pa.int32()), ("month", pa.int32())])
PARTITION_COLUMNS = tuple(PARTITION_SCHEMA.names)
# A file of `games/` in its partition's folder: the type, year and month.
PARTITION_FILE = re.compile(rf"{GAMES}/type=([^/]+)/year=(-?[0-9]{{1,9}})/month=(-?[0-9]{{1,9}})/[^/]+")


class Partition(NamedTuple):
    """One partition: the games (and their plies) of one speed and month."""

    type: str
    year: int
    month: int

    @classmethod
    def of_file(cls, rel: str) -> Partition | None:
        """The partition of the `games/` file `rel` (`games/type=blitz/year=2025/month=5/x.parquet`), from
        its folders as hive names them; None for a path of no partition folder."""
        found = PARTITION_FILE.fullmatch(rel)
        return None if found is None else cls(found[1], int(found[2]), int(found[3]))

    @property
    def dir(self) -> str:
        """The partition's folder of `games/` relative to the lake's root."""
        return f"{GAMES}/type={self.type}/year={self.year}/month={self.month}"


def plies_twin(games_file: str) -> str:
    """The `plies/` file holding the plies of the games of `games_file` (`games/...` → `plies/...`)."""
    if not games_file.startswith(f"{GAMES}/"):
        raise ValueError(f"{games_file!r} is not a file of {GAMES}/")
    return PLIES + games_file[len(GAMES) :]


def games_twin(plies_file: str) -> str:
    """The `games/` file whose games' plies `plies_file` holds (`plies/...` → `games/...`)."""
    if not plies_file.startswith(f"{PLIES}/"):
        raise ValueError(f"{plies_file!r} is not a file of {PLIES}/")
    return GAMES + plies_file[len(PLIES) :]


def staging_dir(op_id: str) -> str:
    """Operation `op_id`'s staging folder: its files until they are published, and its temporary ones."""
    return f"{STAGING}/{op_id}"


def staged(op_id: str, rel: str) -> str:
    """Where operation `op_id` writes the file that will live at `rel`."""
    return f"{staging_dir(op_id)}/{rel}"


def record_path(op_id: str) -> str:
    """The commit record of operation `op_id`."""
    return f"{LOADS}/{op_id}.json"


def inside_lake(path: object) -> bool:
    """A relative path that stays inside the lake: publishing moves and deletes exactly these."""
    return (
        isinstance(path, str)
        and bool(path)
        and not path.startswith("/")
        and ".." not in path.split("/")
        and "\0" not in path
    )
