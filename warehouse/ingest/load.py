"""Loading inputs into the lake: read by a source (PGN by the Rust core, JSON by `json_files`),
skip known games, stage both tables, reconcile, commit, publish. One road for every source.

A load of several inputs (a folder, a glob) is one load: one commit, its files cut by partition and size
(`PartitionWriter`), not by input, a partition the writer closed and reopened merged into one file before
the commit (`merge.merge_reopened`); the record lists each input with its fingerprint and counts. Every load
reconciles: games seen = written + rejected + duplicates, checked against the rows actually written before
the load commits. An input already loaded (same SHA-256) is skipped unless forced.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from warehouse import _core
from warehouse.cores import default_jobs, load_threads
from warehouse.errors import InputError, LoadError
from warehouse.ingest.frame_parts import PartsReader, parts_to_read
from warehouse.ingest.inputs import STDIN, file_sha256, fingerprint, input_stem
from warehouse.ingest.merge import merge_reopened
from warehouse.ingest.s3_feed import Feed, s3_feed
from warehouse.lake.commit import commit, discard, new_op_id, recover, writer_lock
from warehouse.lake.dedup import PartitionIndex
from warehouse.lake.layout import REJECTS, Partition, staged
from warehouse.lake.location import Lake
from warehouse.lake.parquet import PartitionWriter
from warehouse.lake.positions import reader_openings
from warehouse.lake.records import PGN, LoadedInput, LoadRecord, Records, now
from warehouse.lake.storage import is_s3, is_utf8, output_stream, printable

# Games per Arrow batch handed from the Rust reader to the writer (`--batch-games`).
BATCH_GAMES = 8192


class ReconciliationError(RuntimeError):
    """Counts that do not add up: a bug, never a user error."""


@dataclass
class LoadResult:
    """What one load did: its record (committed, unless every input was already in the lake), the
    earlier load of the inputs when nothing was written, each input skipped as already loaded (with its
    load), each input refused (one line each), and what recovery did before it."""

    record: LoadRecord
    already_loaded: LoadRecord | None = None
    skipped: list[tuple[str, LoadRecord]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
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
        """Rejects of the writer's `source`."""
        self.add_located([(self.source, reject) for reject in rejects])

    def add_located(self, rejects: Located) -> None:
        """Rejects, each with the input it is in."""
        if not rejects:
            return
        if self._out is None:
            path = staged(self.op_id, self.rel)
            self.lake.make_parent(path)
            self._out = output_stream(self.lake.fs, self.lake.path(path))
        for source, (offset, length, kind, reason, raw) in rejects:
            self.by_kind[kind] += 1
            row = {
                "source_file": source,
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


class Reading(Protocol):
    """What a progress bar reads of the reader reading now: the Rust reader, or `PartsReader`."""

    @property
    def raw_bytes_read(self) -> int: ...
    @property
    def input_size(self) -> int | None: ...
    @property
    def games_seen(self) -> int: ...


Progress = Callable[[Reading], None]


class LoadReading:
    """What a progress bar reads of a load (`Reading`), whose readers read one input (or one chunk of JSON
    inputs) after the other: every input's games and compressed bytes, those of the inputs read before
    and the current reader's, against the inputs' size (known when all are local files)."""

    def __init__(self, paths: list[str]):
        local = all(os.path.isfile(path) for path in paths)
        self.input_size = sum(os.path.getsize(path) for path in paths) if local else None
        self.games_before = self.raw_before = 0
        self.current: Reading | None = None
        # The compressed bytes of the inputs the current reader's text was made of (a JSON chunk's), which
        # it reads as its own `raw_bytes_read` of `input_size`; None: its input is the load's own.
        self.span: tuple[int, int] | None = None

    def follow(self, reader: Reading, span: tuple[int, int] | None = None) -> LoadReading:
        """Now reading with `reader` (see `span`); returns itself, what the progress bar reads."""
        self.current, self.span = reader, span
        return self

    def done(self) -> None:
        """The current reader read its input whole."""
        if self.current is not None:
            self.games_before += self.current.games_seen
            self.raw_before = self.span[1] if self.span else self.raw_before + self._read()
        self.current = None

    def _read(self) -> int:
        """The current reader's bytes read of its input (a reader of frame parts reads some twice)."""
        assert self.current is not None
        size = self.current.input_size
        return min(self.current.raw_bytes_read, size) if size is not None else self.current.raw_bytes_read

    @property
    def games_seen(self) -> int:
        return self.games_before + (self.current.games_seen if self.current else 0)

    @property
    def raw_bytes_read(self) -> int:
        if self.current is None:
            return self.raw_before
        if self.span is None:
            return self.raw_before + self._read()
        start, end = self.span
        share = self._read() / max(self.current.input_size or 0, 1)
        return start + round((end - start) * share)


# Rejects as a source yields them: each with the input file it is in.
Located: TypeAlias = "list[tuple[str, _core.Reject]]"  # _core.Reject: a stub-only alias


class Source(Protocol):
    """Input files of one format read as the lake's games, batch by batch: the PGN reader's (`PgnSource`)
    or the JSON import's (`warehouse.ingest.json_files.JsonSource`). A load (`load_inputs`) takes every source
    down the same road: dedup, both tables written, rejects, reconciliation, one commit."""

    format: str  # what the inputs are read as (`warehouse.lake.records.PGN`, `JSON`)
    # Inputs refused whole (unreadable, not of the format, damaged where nothing of them may be kept),
    # one line each: nothing of them is written.
    refused: list[str]
    # What a progress bar reads of the load (`LoadReading`: every input's games and bytes; None before the
    # first reader).
    reader: Reading | None
    # Its reader keeps the cores busy: the row groups go to every encoder thread (`load_threads`).
    encode_on_pool: bool

    def batches(self) -> Iterator[tuple[Partition | None, list[pa.RecordBatch], Located]]:
        """Each partition's games (record batches of the lake's games, `source_file` naming each game's
        input) and the rejects read with them."""

    def outcomes(self) -> list[LoadedInput]:
        """Once the batches are read: each input read (not those refused), its compression, size,
        SHA-256 and damage, its games seen and rejected."""


class Inputs:
    """What every source holds: its inputs and how the Rust reader reads them; the inputs it refused and
    those it read (`Source`)."""

    def __init__(self, paths: list[str], batch_games: int, jobs: int):
        self.paths, self.batch_games, self.jobs = paths, batch_games, jobs
        self.refused: list[str] = []
        self.progress = LoadReading(paths)
        self.reader: Reading | None = None
        self.encode_on_pool = False
        self.read: list[LoadedInput] = []

    def outcomes(self) -> list[LoadedInput]:
        return self.read

    def open_reader(self, path: str, source_name: str | None = None, made: bool = False) -> _core.PgnReader:
        """The Rust reader of the PGN at `path` (its games' `source_file`: `source_name`, else `path`), the
        one every source reads with. `made`: a text made for the load, whose inputs are checksummed as they
        are read (the reader takes no SHA-256 of it).

        :raises _core.PgnInputError: for an input the reader refuses.
        """
        # With the openings, the reader derives each batch's plies and position columns from its replay.
        threads = load_threads(self.jobs)
        return _core.PgnReader(
            path,
            source_name=source_name or path,
            batch_games=self.batch_games,
            jobs=threads.reader_jobs,
            own_thread=threads.reader_own_thread,
            openings=reader_openings(),
            checksum=not made,
        )


class PgnSource(Inputs):
    """PGN files read by the Rust reader, one after the other."""

    format = PGN

    def batches(self) -> Iterator[tuple[Partition | None, list[pa.RecordBatch], Located]]:
        read_parts = load_threads(self.jobs).read_frame_parts
        for path in self.paths:
            with contextlib.ExitStack() as held:
                feed: Feed | None = None
                if is_s3(path):
                    try:
                        feed = held.enter_context(s3_feed(path))
                    except InputError as e:  # an object not there, or the server's refusal
                        self.refused.append(str(e))
                        continue
                parts = parts_to_read(path) if read_parts and feed is None else []
                reader: _core.PgnReader | PartsReader
                try:
                    if parts:
                        reader = PartsReader(path, path, self.batch_games, parts)
                        self.encode_on_pool = True
                    else:
                        reader = self.open_reader(feed.path if feed else path, source_name=path)
                except _core.PgnInputError as e:  # the Rust reader's refusal of the input: the user's to fix
                    self.refused.append(str(e))
                    continue
                self.reader = self.progress.follow(reader)
                for partition, arrow_batch, rejects in reader:
                    # Several record batches from a parallel reader (runs of its threads' batches): taken
                    # without a copy, written together as the one batch of the single-threaded reader.
                    parts = pa.table(arrow_batch).to_batches() if partition is not None else []
                    key = Partition(*partition) if partition is not None else None
                    yield key, parts, [(path, reject) for reject in rejects]
                outcome = pgn_outcome(path, reader)
                if feed is not None:
                    feed.check()  # a copy cut short fails the load: it is not the object's end
                    outcome.size = feed.size
                self.read.append(outcome)
                self.progress.done()


def pgn_outcome(path: str, reader: ReadOutcome) -> LoadedInput:
    """What a read of a whole PGN input tells its load: the Rust reader's, or a Spark task's report."""
    return LoadedInput(
        input=path,
        compression=reader.compression,
        size=reader.input_size,
        games_seen=reader.games_seen,
        games_rejected=reader.games_rejected,
        sha256=reader.sha256,
        damage=reader.damage,
    )


class SourceKind(Protocol):
    """A kind of source (`PgnSource`, `json_files.JsonSource`): its format, and how it is made
    for a load's inputs."""

    format: str

    def __call__(self, paths: list[str], batch_games: int, jobs: int) -> Source: ...


def load_input(path: str, lake: Lake, **options: Any) -> LoadResult:
    """Loads one input (a path or `-`) into `lake`: `load_inputs` of it alone."""
    return load_inputs([path], lake, **options)


def load_inputs(
    paths: list[str],
    lake: Lake,
    *,
    name: str | None = None,
    progress: Progress | None = None,
    batch_games: int = BATCH_GAMES,
    force: bool = False,
    dedup: bool = True,
    jobs: int | None = None,
    source: SourceKind = PgnSource,
) -> LoadResult:
    """Loads the inputs (paths, or `-`) into `lake` as ONE load: one commit, files cut by partition and
    size whatever the inputs, each input recorded with its fingerprint and checksum. An input already in
    the lake is skipped (`force` reloads it, replacing its earlier load); the others are read by
    `source(paths, batch_games, jobs)` (default: PGN). `name` says what was given, in the record of
    several inputs and the lake's file names (default: the first path).

    Raises `InputError` when no input can be read (of several, each refused input is a line of
    `LoadResult.refused` and the others load), `LoadError` for loads that cannot be done,
    `OSError` when the lake cannot be written, `NotPublished` when that happens after the commit,
    `DamagedRecord` for a lake whose records cannot all be read.

    `jobs` threads parse and replay the games (default: `default_jobs()`); the lake's content (rows,
    values, partitions, counts, rejects and their order) is the same for any number."""
    if bad := next((p for p in [*paths, name or ""] if not is_utf8(p)), None):
        # The name goes to the Rust reader and into the lake's records and columns, all UTF-8 text.
        raise InputError(
            f"{printable(bad)}: the file's name is not valid UTF-8; rename it, or give the file on "
            "standard input (`-`)"
        )
    with writer_lock(lake):
        recovered = recover(lake)
        jobs = default_jobs() if jobs is None else max(1, jobs)
        options = _Options(name or paths[0], progress, batch_games, force, dedup, jobs, source)
        result = _load_locked(paths, lake, options)
        result.recovered = recovered
        return result


@dataclass
class _Options:
    name: str
    progress: Progress | None
    batch_games: int
    force: bool
    dedup: bool
    jobs: int
    source: SourceKind


def _load_locked(paths: list[str], lake: Lake, o: _Options) -> LoadResult:
    records = Records.read(lake)
    input_format = o.source.format
    result = new_load_record(o.name, o.dedup, input_format)
    if o.force and STDIN in paths:
        raise LoadError("--force needs the input as a file, not standard input")
    known: dict[str, LoadedInput] = {}
    skipped: list[tuple[str, LoadRecord]] = []
    previous: list[LoadRecord] = []
    for path in paths:
        given = LoadedInput(input=path, fingerprint=fingerprint(path))
        # A fingerprint match is confirmed by the full checksum (one extra read of a file met before);
        # `--force` hashes up front too, to know which load it replaces before deduplicating against it.
        if o.force or records.same_input(None, given.fingerprint, input_format):
            given.sha256 = file_sha256(path) if given.fingerprint else None
            earlier = records.same_input(given.sha256, None, input_format)
            if earlier and not o.force:
                skipped.append((path, earlier[0]))
                continue
            previous += [r for r in earlier if r not in previous]
        known[path] = given
    if not known:
        return LoadResult(result, already_loaded=skipped[0][1], skipped=skipped)
    _replace(result, previous, records, [k.sha256 for k in known.values()])
    return _read_and_commit(lake, records, result, known, skipped, o)


def _read_and_commit(
    lake: Lake,
    records: Records,
    result: LoadRecord,
    known: dict[str, LoadedInput],
    skipped: list[tuple[str, LoadRecord]],
    o: _Options,
) -> LoadResult:
    source = o.source(list(known), o.batch_games, o.jobs)
    stem = f"{input_stem(o.name)}-{result.load_id}"
    threads = load_threads(o.jobs)
    writer = PartitionWriter(
        lake,
        result.load_id,
        stem,
        encoders=threads.encoders,
        inline_while_reading=threads.encode_inline_while_reading,
    )
    rejects = RejectsWriter(lake, result.load_id, f"{REJECTS}/{stem}.jsonl", o.name)
    index = PartitionIndex(lake, exclude=result.removes) if o.dedup else None
    duplicates: Counter[str] = Counter()
    try:
        for key, parts, located in source.batches():
            if source.encode_on_pool:
                writer.encode_on_pool()
            if key is not None:
                if index is not None:
                    parts = [_drop_known(part, key, index, result, duplicates) for part in parts]
                writer.write(key, *parts)
            rejects.add_located(located)
            if o.progress is not None and source.reader is not None:
                o.progress(source.reader)
        read = source.outcomes()
        if not read and skipped:  # the others were already loaded: a load of nothing, said as such
            writer.close_quietly()
            rejects.close_quietly()
            discard(lake, result.load_id)
            return LoadResult(result, already_loaded=skipped[0][1], skipped=skipped, refused=source.refused)
        if not read:
            more = f" (and {len(source.refused) - 1} more inputs refused)" if len(source.refused) > 1 else ""
            raise InputError(source.refused[0] + more)
        result.file_rows, result.ply_rows = writer.finish()
        result.rejects_file = rejects.finish()
        result.rejects_by_kind = dict(sorted(rejects.by_kind.items()))
        for outcome in read:
            finish_outcome(outcome, known[outcome.input], duplicates[outcome.input])
        add_up(result, read)
        reconcile(result, writer.rows, rejects.count)
        if (
            len(known) == 1
            and not o.force
            and (same := records.same_input(result.sha256, None, result.format))
        ):
            # Same bytes as a committed load, though the fingerprint was not known (stdin) or differed.
            discard(lake, result.load_id)
            return LoadResult(result, already_loaded=same[0], skipped=[(result.input, same[0])])
        # Partitions the writer closed and reopened (inputs cycling through more than it keeps open): one
        # file each, merged in the staging folder before the commit.
        result.file_rows, result.ply_rows = merge_reopened(
            lake, result.load_id, result.file_rows, result.ply_rows, jobs=o.jobs
        )
        if (in_files := sum(result.file_rows.values())) != writer.rows:
            raise ReconciliationError(
                f"{o.name}: {writer.rows} games written, {in_files} in the files merged"
            )
    except BaseException:
        writer.close_quietly()
        rejects.close_quietly()
        discard(lake, result.load_id)
        raise
    result.written()
    lake.mark_layout()
    result.dedup_seconds = round(result.dedup_seconds + (index.read_seconds if index else 0.0), 3)
    commit(lake, result, subject=o.name)
    return LoadResult(result, skipped=skipped, refused=source.refused)


def finish_outcome(outcome: LoadedInput, given: LoadedInput, duplicates: int) -> None:
    """An input's outcome once its games are deduplicated: its fingerprint and checksum from before the
    read (`given`), its games written."""
    outcome.fingerprint = given.fingerprint
    outcome.games_duplicate = duplicates
    outcome.games_written = outcome.games_seen - outcome.games_rejected - duplicates
    # The reader hashes what it read; a damaged file stops it early, so hash that file whole here.
    outcome.sha256 = (
        outcome.sha256 or given.sha256 or (file_sha256(given.input) if given.fingerprint else None)
    )


def add_up(result: LoadRecord, read: list[LoadedInput]) -> None:
    """The load's record from its inputs': the one input's own fields, or the totals of several."""
    if len(read) == 1:
        (one,) = read
        for f in dataclasses.fields(LoadedInput):
            setattr(result, f.name, getattr(one, f.name))
        return
    result.inputs = read
    for count in ("games_seen", "games_written", "games_rejected", "games_duplicate"):
        setattr(result, count, sum(getattr(i, count) for i in read))
    result.size = sum(i.size or 0 for i in read)
    result.compression = ",".join(sorted({i.compression for i in read}))
    result.fingerprint = result.sha256 = None
    result.damage = "; ".join(f"{i.input}: {i.damage}" for i in read if i.damage) or None


def _replace(
    result: LoadRecord, previous: list[LoadRecord], records: Records, reloaded: list[str | None]
) -> None:
    """`--force`: this load retires the earlier loads of its inputs and their files; an earlier load of
    several inputs only when all of them are loaded again (their games share its files)."""
    live = records.live_files()
    for old in previous:
        gone = [f for f in old.file_rows if f not in live]
        if gone:
            raise LoadError(
                f"{result.input}: its earlier load {old.load_id} was compacted into other files since; "
                "--force cannot take its games out of them"
            )
        if others := [i.input for i in old.input_files() if i.sha256 not in reloaded]:
            raise LoadError(
                f"{result.input}: its earlier load {old.load_id} also holds {others[0]} "
                f"({len(others)} inputs in all); --force reloads that load's inputs together"
            )
        result.replaces.append(old.load_id)
        result.removes += [*old.file_rows, *old.ply_rows]
        if old.rejects_file:
            result.removes.append(old.rejects_file)


def _drop_known(
    part: pa.RecordBatch,
    partition: Partition,
    index: PartitionIndex,
    result: LoadRecord,
    duplicates: Counter[str],
) -> pa.RecordBatch:
    start = time.perf_counter()
    keep = index.keep(partition, part.column("game_id"))
    dropped = len(keep) - int(keep.sum())
    if dropped:
        sources = part.column("source_file").filter(pa.array(~keep))
        for value in pc.value_counts(sources).to_pylist():
            duplicates[value["values"]] += value["counts"]
        part = part.filter(pa.array(keep))
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
    """The record of a load of `path` (read as `input_format`) about to start, its counts at zero (its
    inputs' fingerprints and checksums come with them: `add_up`)."""
    return LoadRecord(
        load_id=new_op_id(),
        input=path,
        format=input_format,
        dedup=dedup,
        games_seen=0,
        games_written=0,
        games_rejected=0,
        started=now(),
        loader_version=_core.__version__,
    )


def reconcile(result: LoadRecord, rows: int, reject_lines: int) -> None:
    r = result
    if not r.reconciles() or rows != r.games_written or reject_lines != r.games_rejected:
        raise ReconciliationError(
            f"{r.input}: counts do not reconcile: seen {r.games_seen}, written {r.games_written} "
            f"({rows} rows), rejected {r.games_rejected} ({reject_lines} lines), "
            f"duplicates {r.games_duplicate}"
        )
