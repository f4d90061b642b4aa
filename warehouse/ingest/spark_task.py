"""One Spark task of a cluster load (`warehouse.ingest.spark_load`): one PGN input read by the Rust core on an
executor, its games and plies staged as Parquet and its rejects as JSON lines, under the load's staging
folder, exactly as a local load stages them. Nothing is deduplicated or committed here: the driver does
both, with the task's report.

Every file a task writes carries the task's attempt number in its name (`…-u<unit>a<attempt>-<n>.parquet`),
so a retried or speculative attempt never overwrites nor adds to another's files: the driver lists only the
files of the attempt whose report Spark returned, and the staging folder, with any other attempt's files,
is deleted when the load is published or rolled back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from warehouse import _core
from warehouse.ingest.inputs import input_stem
from warehouse.ingest.load import RejectsWriter
from warehouse.ingest.s3_feed import s3_feed
from warehouse.lake.layout import REJECTS, Partition
from warehouse.lake.location import Lake
from warehouse.lake.parquet import PartitionWriter
from warehouse.lake.positions import reader_openings
from warehouse.lake.storage import is_s3


class InjectedFailure(RuntimeError):
    """The failure a test asks of a task's first attempt (`Unit.fail_first_attempt`)."""


@dataclass(frozen=True)
class Unit:
    """One task's work for the load `load_id` of the lake at `lake`: one input whole, or some of its zstd
    frames (`frames`: where the first starts in the file, the decompressed offsets where the part
    starts and ends; `first_game`: where its first game starts, when known, see `_core.PgnReader`)."""

    index: int
    input: str  # the path as given: it is the games' `source_file`, as in a local load
    load_id: str
    lake: str
    batch_games: int
    frames: tuple[int, int, int] | None = None
    first_game: int | None = None
    # Fault injection for the tests: attempt 0 raises once its files are staged.
    fail_first_attempt: bool = False


@dataclass
class UnitReport:
    """What a task read and staged. The reader's counts keep its attribute names (`load.ReadOutcome`)."""

    index: int
    attempt: str  # `a<n>`: Spark's attempt n; `d`: read again by the driver
    compression: str = ""
    input_size: int | None = None
    games_seen: int = 0
    games_written: int = 0
    games_rejected: int = 0
    sha256: str | None = None
    damage: str | None = None
    file_rows: dict[str, int] = field(default_factory=dict)  # staged games/ files (final paths) → rows
    ply_rows: dict[str, int] = field(default_factory=dict)
    rejects_file: str | None = None
    rejects_count: int = 0
    rejects_by_kind: dict[str, int] = field(default_factory=dict)
    error: str | None = None  # the reader refused the input (the user's to fix): nothing usable staged
    first_game: int | None = None  # a part of frames: where its first game starts
    stopped_at: int | None = None  # … and the game after it (None: it read to the input's end)


def convert(unit: Unit, attempt: str) -> UnitReport:
    """Reads the unit's input (or frames) and stages its files; an input the reader refuses is reported,
    not raised (one bad input must not fail the job's other inputs). An S3 object (one unit: its frames
    are not listed, which would take a request per block) is streamed to the reader as stored, nothing on
    the executor's disk; a copy cut short by the network fails the task, which Spark runs again."""
    lake = Lake.open(unit.lake)
    report = UnitReport(unit.index, attempt)
    stem = f"{input_stem(unit.input)}-{unit.load_id}-u{unit.index}{attempt}"
    if not is_s3(unit.input):
        return _convert(unit, attempt, lake, report, stem, unit.input)
    with s3_feed(unit.input) as feed:
        _convert(unit, attempt, lake, report, stem, feed.path)
        if report.error is None:
            feed.check()
            report.input_size = feed.size
        return report


def _convert(unit: Unit, attempt: str, lake: Lake, report: UnitReport, stem: str, path: str) -> UnitReport:
    try:
        reader = _core.PgnReader(
            path,
            source_name=unit.input,
            batch_games=unit.batch_games,
            frames=unit.frames,
            first_game=unit.first_game,
            openings=reader_openings(),
        )
    except _core.PgnInputError as e:
        report.error = str(e)
        return report
    writer = PartitionWriter(lake, unit.load_id, stem)
    rejects = RejectsWriter(lake, unit.load_id, f"{REJECTS}/{stem}.jsonl", unit.input)
    try:
        for partition, arrow_batch, batch_rejects in reader:
            if partition is not None:
                writer.write(Partition(*partition), pa.record_batch(arrow_batch))
            rejects.add(batch_rejects)
        report.file_rows, report.ply_rows = writer.finish()
        report.rejects_file = rejects.finish()
    except BaseException:
        writer.close_quietly()
        rejects.close_quietly()
        raise
    report.rejects_count = rejects.count
    report.rejects_by_kind = dict(sorted(rejects.by_kind.items()))
    for name in ("compression", "input_size", "games_seen", "games_written", "games_rejected"):
        setattr(report, name, getattr(reader, name))
    report.sha256, report.damage = reader.sha256, reader.damage
    report.first_game, report.stopped_at = reader.first_game, reader.stopped_at
    if unit.fail_first_attempt and attempt == "a0":
        raise InjectedFailure(f"injected failure of task {unit.index}, attempt 0, its files staged")
    return report


def run_partition(units: Iterable[Unit]) -> Iterator[UnitReport]:
    """`mapPartitions` over the units: each converted on this executor, by this task's attempt."""
    from pyspark import TaskContext

    context = TaskContext.get()
    attempt = context.attemptNumber() if context is not None else 0
    for unit in units:
        yield convert(unit, f"a{attempt}")
