"""Loading one PGN input into the lake: read with the Rust core, skip known games, stage, commit, publish.

Every load reconciles: games seen = written + rejected + duplicates, checked against the rows actually
written before the load commits. An input already loaded (same SHA-256) writes nothing unless forced.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa

from warehouse import _core
from warehouse.commit import commit, discard, recover, writer_lock
from warehouse.dedup import PartitionIndex
from warehouse.lake import PARTITION_COLUMNS, REJECTS, Lake, PartitionWriter, partition_dir, staged
from warehouse.loads import Records, file_sha256, fingerprint
from warehouse.storage import is_utf8, printable

PgnInputError = _core.PgnInputError


class LoadError(ValueError):
    """A load the user asked for that cannot be done (one line, no trace)."""


class ReconciliationError(RuntimeError):
    """Counts that do not add up: a bug, never a user error."""


@dataclass
class LoadResult:
    """What one load did; also the content of its load record (`_loads/<load_id>.json`)."""

    load_id: str
    input: str
    compression: str = ""
    size: int | None = None
    sha256: str | None = None
    fingerprint: str | None = None
    games_seen: int = 0
    games_written: int = 0
    games_rejected: int = 0
    games_duplicate: int = 0
    dedup: bool = True
    files: list[str] = field(default_factory=list)
    file_rows: dict[str, int] = field(default_factory=dict)
    rejects_file: str | None = None
    replaces: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    damage: str | None = None
    started: str = ""
    finished: str = ""
    seconds: float = 0.0
    dedup_seconds: float = 0.0
    loader_version: str = _core.__version__
    kind: str = "load"
    # Not part of the record: set when nothing was written because the input is already in the lake.
    already_loaded: dict | None = None
    recovered: list[str] = field(default_factory=list)

    def record(self) -> dict:
        record = asdict(self)
        del record["already_loaded"], record["recovered"]
        return record


# Characters that JSON leaves unescaped but some readers split lines at (Python's str.splitlines): escaped,
# so that every reject is one line for any reader.
_LINE_BREAKS = {ord(c): f"\\u{ord(c):04x}" for c in "\x85\u2028\u2029"}


class _Rejects:
    """Streams rejects to a staged JSON-lines file."""

    def __init__(self, lake: Lake, op_id: str, rel: str, source: str):
        self.lake, self.op_id, self.rel, self.source, self.count = lake, op_id, rel, source, 0
        self._out: pa.NativeFile | None = None

    def add(self, rejects: list[tuple[int, int, str, str]]) -> None:
        if not rejects:
            return
        if self._out is None:
            path = staged(self.op_id, self.rel)
            self.lake.make_parent(path)
            self._out = self.lake.fs.open_output_stream(self.lake.path(path))
        for offset, length, reason, raw in rejects:
            row = {
                "source_file": self.source,
                "source_offset": offset,
                "source_length": length,
                "reason": reason,
                # The text up to the reader's cap (64 KiB); the whole game is at offset, length.
                "raw": raw,
                "raw_truncated": len(raw.encode("utf-8", "surrogatepass")) < length,
            }
            line = json.dumps(row, ensure_ascii=False).translate(_LINE_BREAKS)
            self._out.write((line + "\n").encode("utf-8"))
        self.count += len(rejects)

    def finish(self) -> str | None:
        if self._out is None:
            return None
        self._out.close()
        return self.rel

    def close_quietly(self) -> None:
        if self._out is not None and not self._out.closed:
            with contextlib.suppress(OSError):
                self._out.close()


def input_stem(path: str) -> str:
    """A file-name-safe name for an input: `lichess_db_2024-01` for `…/lichess_db_2024-01.pgn.zst`."""
    if path == "-":
        return "stdin"
    name = Path(path).name
    name = re.sub(r"(\.(pgn|zst|zstd|bz2|gz|txt))+$", "", name, flags=re.IGNORECASE)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "input"


def new_op_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]


Progress = Callable[["_core.PgnReader"], None]


def load_input(
    path: str,
    lake: Lake,
    *,
    progress: Progress | None = None,
    batch_games: int = 8192,
    force: bool = False,
    dedup: bool = True,
) -> LoadResult:
    """Loads one input (a path or `-`) into `lake`, unless it is already there (`force` reloads it,
    replacing its earlier load). Raises `PgnInputError` for unreadable inputs, `LoadError` for loads that
    cannot be done, `OSError` when the lake cannot be written, `NotPublished` when that happens after the
    commit, `DamagedRecord` for a lake whose records cannot all be read."""
    if not is_utf8(path):
        # The name goes to the Rust reader and into the lake's records and columns, all UTF-8 text.
        raise LoadError(
            f"{printable(path)}: the file's name is not valid UTF-8; rename it, or give the file on "
            "standard input (`-`)"
        )
    with writer_lock(lake):
        recovered = recover(lake)
        result = _load_locked(path, lake, progress, batch_games, force, dedup)
        result.recovered = recovered
        return result


def _load_locked(
    path: str, lake: Lake, progress: Progress | None, batch_games: int, force: bool, dedup: bool
) -> LoadResult:
    started = time.time()
    records = Records.read(lake)
    result = LoadResult(load_id=new_op_id(), input=path, fingerprint=fingerprint(path), dedup=dedup)
    if force and path == "-":
        raise LoadError("--force needs the input as a file, not standard input")
    # A fingerprint match is confirmed by the full checksum (one extra read of a file met before);
    # `--force` hashes up front too, to know which load it replaces before deduplicating against it.
    if force or records.same_input(None, result.fingerprint):
        result.sha256 = file_sha256(path) if result.fingerprint else None
        previous = records.same_input(result.sha256, None)
        if previous and not force:
            result.already_loaded = previous[0]
            return result
        if previous:
            _replace(result, previous, records)
    reader = _core.PgnReader(path, source_name=path, batch_games=batch_games)
    stem = f"{input_stem(path)}-{result.load_id}"
    writer = PartitionWriter(lake, result.load_id, stem)
    rejects = _Rejects(lake, result.load_id, f"{REJECTS}/{stem}.jsonl", path)
    index = PartitionIndex(lake, exclude=result.removes) if dedup else None
    try:
        for arrow_batch, batch_rejects in reader:
            batch = pa.record_batch(arrow_batch)
            if batch.num_rows:
                key = tuple(batch.column(name)[0].as_py() for name in PARTITION_COLUMNS)
                part = batch.drop_columns(list(PARTITION_COLUMNS))
                if index is not None:
                    part = _drop_known(part, partition_dir(*key), index, result)
                writer.write(key, part)
            rejects.add(batch_rejects)
            if progress is not None:
                progress(reader)
        result.file_rows = writer.finish()
        result.rejects_file = rejects.finish()
        _read_outcome(result, reader, path)
        _reconcile(result, writer.rows, rejects.count)
        if not force and (previous := records.same_input(result.sha256, None)):
            # Same bytes as a committed load, though the fingerprint was not known (stdin) or differed.
            discard(lake, result.load_id)
            result.already_loaded = previous[0]
            return result
    except BaseException:
        writer.close_quietly()
        rejects.close_quietly()
        discard(lake, result.load_id)
        raise
    result.files = list(result.file_rows)
    result.started = _iso(started)
    result.finished = _iso(time.time())
    result.seconds = round(time.time() - started, 3)
    result.dedup_seconds = round(result.dedup_seconds + (index.read_seconds if index else 0.0), 3)
    commit(lake, result.record())
    return result


def _replace(result: LoadResult, previous: list[dict], records: Records) -> None:
    """`--force`: this load retires the earlier loads of the same input and their files."""
    live = records.live_files()
    for old in previous:
        gone = [f for f in old.get("file_rows") or {} if f not in live]
        if gone:
            raise LoadError(
                f"{result.input}: its earlier load {old['load_id']} was compacted into other files since; "
                "--force cannot take its games out of them"
            )
        result.replaces.append(old["load_id"])
        result.removes += list(old.get("file_rows") or {})
        if old.get("rejects_file"):
            result.removes.append(old["rejects_file"])


def _drop_known(
    part: pa.RecordBatch, partition: str, index: PartitionIndex, result: LoadResult
) -> pa.RecordBatch:
    start = time.perf_counter()
    keep = index.keep(partition, part.column("game_id"))
    duplicates = len(keep) - int(keep.sum())
    if duplicates:
        part = part.filter(pa.array(keep))
        result.games_duplicate += duplicates
    result.dedup_seconds += time.perf_counter() - start
    return part


def _read_outcome(result: LoadResult, reader: _core.PgnReader, path: str) -> None:
    result.compression = reader.compression
    result.size = reader.input_size
    result.games_seen = reader.games_seen
    result.games_rejected = reader.games_rejected
    result.games_written = reader.games_written - result.games_duplicate
    result.damage = reader.damage
    # The reader hashes what it read; a damaged file stops it early, so hash that file whole here.
    result.sha256 = reader.sha256 or result.sha256 or (file_sha256(path) if result.fingerprint else None)


def _reconcile(result: LoadResult, rows: int, reject_lines: int) -> None:
    r = result
    if r.games_seen != r.games_written + r.games_rejected + r.games_duplicate or (
        rows != r.games_written or reject_lines != r.games_rejected
    ):
        raise ReconciliationError(
            f"{r.input}: counts do not reconcile: seen {r.games_seen}, written {r.games_written} "
            f"({rows} rows), rejected {r.games_rejected} ({reject_lines} lines), "
            f"duplicates {r.games_duplicate}"
        )


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="microseconds")
