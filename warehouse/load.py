"""Loading one PGN input into the lake: read with the Rust core, skip known games, stage, commit, publish.

Every load reconciles: games seen = written + rejected + duplicates, checked against the rows actually
written before the load commits. An input already loaded (same SHA-256) writes nothing unless forced.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa

from warehouse import _core
from warehouse.errors import InputError, LoadError
from warehouse.inputs import STDIN, file_sha256, fingerprint, input_stem
from warehouse.lake.commit import commit, discard, new_op_id, recover, writer_lock
from warehouse.lake.dedup import PartitionIndex
from warehouse.lake.layout import REJECTS, Partition, staged
from warehouse.lake.location import Lake
from warehouse.lake.parquet import PartitionWriter
from warehouse.lake.positions import reader_openings
from warehouse.lake.records import PGN, LoadRecord, Records, now
from warehouse.lake.storage import is_utf8, printable

# Games per Arrow batch handed from the Rust reader to the writer (`--batch-games`).
BATCH_GAMES = 8192


class ReconciliationError(RuntimeError):
    """Counts that do not add up: a bug, never a user error."""


@dataclass
class LoadResult:
    """What one load did: its record (committed, unless the input was already in the lake), the earlier
    load of the same input when nothing was written, and what recovery did before it."""

    record: LoadRecord
    already_loaded: LoadRecord | None = None
    recovered: list[str] = field(default_factory=list)


# Characters that JSON leaves unescaped but some readers split lines at (Python's str.splitlines): escaped,
# so that every reject is one line for any reader.
_LINE_BREAKS = {ord(c): f"\\u{ord(c):04x}" for c in "\x85\u2028\u2029"}


class RejectsWriter:
    """Streams rejects to a staged JSON-lines file."""

    def __init__(self, lake: Lake, op_id: str, rel: str, source: str):
        self.lake, self.op_id, self.rel, self.source, self.count = lake, op_id, rel, source, 0
        self.by_kind: Counter[str] = Counter()
        self._out: pa.NativeFile | None = None

    def add(self, rejects: list[_core.Reject]) -> None:
        if not rejects:
            return
        if self._out is None:
            path = staged(self.op_id, self.rel)
            self.lake.make_parent(path)
            self._out = self.lake.fs.open_output_stream(self.lake.path(path))
        for offset, length, kind, reason, raw in rejects:
            self.by_kind[kind] += 1
            row = {
                "source_file": self.source,
                "source_offset": offset,
                "source_length": length,
                "kind": kind,
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


Progress = Callable[["_core.PgnReader"], None]


class Translation(Protocol):
    """An input in another format, loaded as the PGN text it is turned into (warehouse/import_json.py):
    the records, rejects and `source_*` columns name and locate the input, not the PGN."""

    format: str  # what the input is read as (`warehouse.lake.records.JSON`)
    compression: str
    size: int | None
    sha256: str | None
    # Games refused before any PGN was made (their offsets in the input).
    early_rejects: list[_core.Reject]

    def pgn_path(self) -> str:
        """The PGN text to read (made on the first call)."""

    def adapt(self, batch: pa.RecordBatch) -> tuple[pa.RecordBatch, list[_core.Reject]]:
        """A batch read from the PGN as the input's games: offsets in the input, fields checked against
        the input's (the games that disagree come back as rejects)."""

    def locate(self, rejects: list[_core.Reject]) -> list[_core.Reject]:
        """The reader's rejects, located in the input."""


def default_jobs() -> int:
    """Reader threads by default: the cores this process may run on (its CPU affinity, not the
    machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this platform (macOS)
        return max(1, os.cpu_count() or 1)


def load_input(
    path: str,
    lake: Lake,
    *,
    progress: Progress | None = None,
    batch_games: int = BATCH_GAMES,
    force: bool = False,
    dedup: bool = True,
    jobs: int | None = None,
    translation: Translation | None = None,
) -> LoadResult:
    """Loads one input (a path or `-`) into `lake`, unless it is already there (`force` reloads it,
    replacing its earlier load). Raises `InputError` for unreadable inputs, `LoadError` for loads that
    cannot be done, `OSError` when the lake cannot be written, `NotPublished` when that happens after the
    commit, `DamagedRecord` for a lake whose records cannot all be read.

    `jobs` threads parse and replay the games (default: `default_jobs()`); the lake's content (rows,
    values, partitions, counts, rejects and their order) is the same for any number.

    `translation`: `path` is an input of another format, read as the PGN `translation` makes of it."""
    if not is_utf8(path):
        # The name goes to the Rust reader and into the lake's records and columns, all UTF-8 text.
        raise InputError(
            f"{printable(path)}: the file's name is not valid UTF-8; rename it, or give the file on "
            "standard input (`-`)"
        )
    with writer_lock(lake):
        recovered = recover(lake)
        try:
            jobs = default_jobs() if jobs is None else max(1, jobs)
            result = _load_locked(path, lake, progress, batch_games, force, dedup, jobs, translation)
        except _core.PgnInputError as e:  # the Rust reader's refusal of the input: the user's to fix
            raise InputError(str(e)) from e
        result.recovered = recovered
        return result


def _load_locked(
    path: str,
    lake: Lake,
    progress: Progress | None,
    batch_games: int,
    force: bool,
    dedup: bool,
    jobs: int,
    translation: Translation | None,
) -> LoadResult:
    records = Records.read(lake)
    result = new_load_record(path, dedup, PGN if translation is None else translation.format)
    if force and path == STDIN:
        raise LoadError("--force needs the input as a file, not standard input")
    # A fingerprint match is confirmed by the full checksum (one extra read of a file met before);
    # `--force` hashes up front too, to know which load it replaces before deduplicating against it.
    if force or records.same_input(None, result.fingerprint, result.format):
        result.sha256 = file_sha256(path) if result.fingerprint else None
        previous = records.same_input(result.sha256, None, result.format)
        if previous and not force:
            return LoadResult(result, already_loaded=previous[0])
        if previous:
            _replace(result, previous, records)
    pgn = path if translation is None else translation.pgn_path()
    # With the openings, the reader derives each batch's plies and position columns from its replay.
    openings = reader_openings()
    reader = _core.PgnReader(pgn, source_name=path, batch_games=batch_games, jobs=jobs, openings=openings)
    stem = f"{input_stem(path)}-{result.load_id}"
    writer = PartitionWriter(lake, result.load_id, stem, encoders=jobs)
    rejects = RejectsWriter(lake, result.load_id, f"{REJECTS}/{stem}.jsonl", path)
    index = PartitionIndex(lake, exclude=result.removes) if dedup else None
    # Games the translation refused, before the reader or after it.
    refused = 0
    try:
        if translation is not None:
            rejects.add(translation.early_rejects)
        for partition, arrow_batch, batch_rejects in reader:
            if translation is not None:
                batch_rejects = translation.locate(batch_rejects)
            if partition is not None:
                key = Partition(*partition)
                # Several record batches from a parallel reader (runs of its threads' batches): taken
                # without a copy, written together as the one batch of the single-threaded reader.
                parts = pa.table(arrow_batch).to_batches()
                if translation is not None:
                    adapted = []
                    for part in parts:
                        part, disagreeing = translation.adapt(part)
                        rejects.add(disagreeing)
                        refused += len(disagreeing)
                        adapted.append(part)
                    parts = adapted
                if index is not None:
                    parts = [_drop_known(part, key, index, result) for part in parts]
                writer.write(key, *parts)
            rejects.add(batch_rejects)
            if progress is not None:
                progress(reader)
        result.file_rows, result.ply_rows = writer.finish()
        result.rejects_file = rejects.finish()
        result.rejects_by_kind = dict(sorted(rejects.by_kind.items()))
        read_outcome(result, reader, path)
        if translation is not None:
            _translated_outcome(result, translation, refused)
        reconcile(result, writer.rows, rejects.count)
        if not force and (previous := records.same_input(result.sha256, None, result.format)):
            # Same bytes as a committed load, though the fingerprint was not known (stdin) or differed.
            discard(lake, result.load_id)
            return LoadResult(result, already_loaded=previous[0])
    except BaseException:
        writer.close_quietly()
        rejects.close_quietly()
        discard(lake, result.load_id)
        raise
    result.written()
    lake.mark_layout()
    result.dedup_seconds = round(result.dedup_seconds + (index.read_seconds if index else 0.0), 3)
    commit(lake, result, subject=path)
    return LoadResult(result)


def _replace(result: LoadRecord, previous: list[LoadRecord], records: Records) -> None:
    """`--force`: this load retires the earlier loads of the same input and their files."""
    live = records.live_files()
    for old in previous:
        gone = [f for f in old.file_rows if f not in live]
        if gone:
            raise LoadError(
                f"{result.input}: its earlier load {old.load_id} was compacted into other files since; "
                "--force cannot take its games out of them"
            )
        result.replaces.append(old.load_id)
        result.removes += [*old.file_rows, *old.ply_rows]
        if old.rejects_file:
            result.removes.append(old.rejects_file)


def _drop_known(
    part: pa.RecordBatch, partition: Partition, index: PartitionIndex, result: LoadRecord
) -> pa.RecordBatch:
    start = time.perf_counter()
    keep = index.keep(partition, part.column("game_id"))
    duplicates = len(keep) - int(keep.sum())
    if duplicates:
        part = part.filter(pa.array(keep))
        result.games_duplicate += duplicates
    result.dedup_seconds += time.perf_counter() - start
    return part


class ReadOutcome(Protocol):
    """What a read of a whole input tells its load record: the Rust reader, or a Spark task's report."""

    @property
    def compression(self) -> str: ...
    @property
    def input_size(self) -> int | None: ...
    @property
    def games_seen(self) -> int: ...
    @property
    def games_written(self) -> int: ...
    @property
    def games_rejected(self) -> int: ...
    @property
    def sha256(self) -> str | None: ...
    @property
    def damage(self) -> str | None: ...


def new_load_record(path: str, dedup: bool, input_format: str = PGN) -> LoadRecord:
    """The record of a load of `path` (read as `input_format`) about to start, its counts at zero."""
    return LoadRecord(
        load_id=new_op_id(),
        input=path,
        format=input_format,
        fingerprint=fingerprint(path),
        dedup=dedup,
        games_seen=0,
        games_written=0,
        games_rejected=0,
        started=now(),
        loader_version=_core.__version__,
    )


def read_outcome(result: LoadRecord, reader: ReadOutcome, path: str) -> None:
    result.compression = reader.compression
    result.size = reader.input_size
    result.games_seen = reader.games_seen
    result.games_rejected = reader.games_rejected
    result.games_written = reader.games_written - result.games_duplicate
    result.damage = reader.damage
    # The reader hashes what it read; a damaged file stops it early, so hash that file whole here.
    result.sha256 = reader.sha256 or result.sha256 or (file_sha256(path) if result.fingerprint else None)


def _translated_outcome(result: LoadRecord, translation: Translation, refused: int) -> None:
    """The counts of an input read as PGN, its games refused before and after the reader included; the
    input's compression, size and checksum rather than the PGN's."""
    early = len(translation.early_rejects)
    result.games_seen += early
    result.games_rejected += early + refused
    result.games_written -= refused
    result.compression = translation.compression
    result.size = translation.size
    result.sha256 = translation.sha256


def reconcile(result: LoadRecord, rows: int, reject_lines: int) -> None:
    r = result
    if not r.reconciles() or rows != r.games_written or reject_lines != r.games_rejected:
        raise ReconciliationError(
            f"{r.input}: counts do not reconcile: seen {r.games_seen}, written {r.games_written} "
            f"({rows} rows), rejected {r.games_rejected} ({reject_lines} lines), "
            f"duplicates {r.games_duplicate}"
        )
