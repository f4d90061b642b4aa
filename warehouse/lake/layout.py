"""Where things are in a lake, relative to its root (`/`-separated, no leading slash):

    games/type=<type>/year=<yyyy>/month=<m>/<input>-<load>-<n>.parquet
    rejects/<input>-<load>.jsonl
    _loads/<op>.json              the commit record of an operation (a load or a compaction)
    _staging/<op>/...             files of an operation not yet published, at the same relative paths
    _lock                         local lakes: held by the one writer at work

Files are written under `_staging/`, which no reader's `games/**/*.parquet` glob reaches, and moved to their
final place only after the operation's record has been written (see `warehouse.lake.commit`).
"""

from __future__ import annotations

from typing import NamedTuple

import pyarrow as pa

GAMES, REJECTS, LOADS, STAGING, LOCK = "games", "rejects", "_loads", "_staging", "_lock"

# The values of the `type` partition (docs/schema.md).
SPEEDS = ("ultrabullet", "bullet", "blitz", "rapid", "classical", "correspondence", "unknown")
# The hive partition columns, as readers type them.
PARTITION_SCHEMA = pa.schema([("type", pa.string()), ("year", pa.int32()), ("month", pa.int32())])
PARTITION_COLUMNS = tuple(PARTITION_SCHEMA.names)


class Partition(NamedTuple):
    """One folder of `games/`: the games of one speed and month."""

    type: str
    year: int
    month: int

    @property
    def dir(self) -> str:
        """The partition's folder relative to the lake's root."""
        return f"{GAMES}/type={self.type}/year={self.year}/month={self.month}"


def staged(op_id: str, rel: str) -> str:
    """Where operation `op_id` writes the file that will live at `rel`."""
    return f"{STAGING}/{op_id}/{rel}"


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
