"""Loading one PGN input into the lake: read with the Rust core, write partitions, rejects, a record.

Every load reconciles: games seen = games written + games rejected, checked against the rows actually
written before anything is renamed into place.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa

from warehouse import _core
from warehouse.lake import Lake, PartitionWriter, temp_name, write_json

PgnInputError = _core.PgnInputError


@dataclass
class LoadResult:
    """What one load did; also the content of its load record (`_loads/<load_id>.json`)."""

    load_id: str
    input: str
    compression: str
    size: int | None
    sha256: str | None
    games_seen: int = 0
    games_written: int = 0
    games_rejected: int = 0
    files: list[str] = field(default_factory=list)
    rejects_file: str | None = None
    damage: str | None = None
    started: str = ""
    finished: str = ""
    seconds: float = 0.0
    loader_version: str = _core.__version__


class ReconciliationError(RuntimeError):
    """Counts that do not add up: a bug, never a user error."""


class _Rejects:
    """Streams rejects to a hidden JSON-lines file; renamed into place on commit."""

    def __init__(self, path: Path, source: str):
        self.path, self.source, self.count = path, source, 0
        self._out = None

    def add(self, rejects: list[tuple[int, str, str]]) -> None:
        if not rejects:
            return
        if self._out is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = open(temp_name(self.path), "w", encoding="utf-8")  # noqa: SIM115
        for offset, reason, raw in rejects:
            row = {"source_file": self.source, "source_offset": offset, "reason": reason, "raw": raw}
            self._out.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.count += len(rejects)

    def commit(self) -> Path | None:
        if self._out is None:
            return None
        self._out.close()
        os.replace(temp_name(self.path), self.path)
        return self.path

    def abort(self) -> None:
        if self._out is not None:
            self._out.close()
            temp_name(self.path).unlink(missing_ok=True)


def input_stem(path: str) -> str:
    """A file-name-safe name for an input: `lichess_db_2024-01` for `…/lichess_db_2024-01.pgn.zst`."""
    if path == "-":
        return "stdin"
    name = Path(path).name
    name = re.sub(r"(\.(pgn|zst|zstd|bz2|gz|txt))+$", "", name, flags=re.IGNORECASE)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "input"


Progress = Callable[["_core.PgnReader"], None]


def load_input(
    path: str, lake: Lake, *, progress: Progress | None = None, batch_games: int = 8192
) -> LoadResult:
    """Loads one input (a path or `-`) into `lake`. Raises `PgnInputError` for unreadable inputs."""
    started = time.time()
    reader = _core.PgnReader(path, source_name=path, batch_games=batch_games)
    load_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    stem = f"{input_stem(path)}-{load_id}"
    writer = PartitionWriter(lake, stem)
    rejects = _Rejects(lake.rejects / f"{stem}.jsonl", path)
    try:
        for arrow_batch, batch_rejects in reader:
            writer.write(pa.record_batch(arrow_batch))
            rejects.add(batch_rejects)
            if progress is not None:
                progress(reader)
        result = LoadResult(
            load_id=load_id,
            input=path,
            compression=reader.compression,
            size=reader.input_size,
            sha256=reader.sha256,
            games_seen=reader.games_seen,
            games_written=reader.games_written,
            games_rejected=reader.games_rejected,
            damage=reader.damage,
        )
        if result.games_seen != result.games_written + result.games_rejected or (
            writer.rows != result.games_written or rejects.count != result.games_rejected
        ):
            raise ReconciliationError(
                f"{path}: counts do not reconcile: seen {result.games_seen}, written "
                f"{result.games_written} ({writer.rows} rows), rejected {result.games_rejected} "
                f"({rejects.count} lines)"
            )
        files = writer.commit()
        rejects_path = rejects.commit()
    except BaseException:
        writer.abort()
        rejects.abort()
        raise
    result.files = [str(f.relative_to(lake.root)) for f in files]
    result.rejects_file = str(rejects_path.relative_to(lake.root)) if rejects_path else None
    result.started = _iso(started)
    result.finished = _iso(time.time())
    result.seconds = round(time.time() - started, 3)
    write_json(lake.loads / f"{load_id}.json", asdict(result))
    return result


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")
