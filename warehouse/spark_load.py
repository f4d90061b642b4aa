"""Loading PGN inputs into the lake on a Spark cluster: the driver's part.

The driver holds the lake's writer lock (local lakes) and recovers as a local load does, then plans one
load per input (an input already in the lake, by SHA-256, is skipped), runs one Spark task per input
(`warehouse.spark_task`: the Rust core on an executor, staging Parquet files under the load's staging
folder), and then, input by input in the order given: drops the games already in the lake or earlier in
the same input or job (the same `game_id` index as a local load, rewriting only the staged files that held
duplicates), reconciles the counts and commits the load's record (`warehouse.lake.commit`). The lake then
holds what `loaders.pgn2parquet` would have written from the same inputs, value for value.

A driver killed before a load's commit leaves only staging folders, which the next writer drops; the
loads committed before it stay, and a rerun skips them as already loaded.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from warehouse import _core
from warehouse.errors import InputError
from warehouse.inputs import file_sha256, fingerprint
from warehouse.lake.commit import commit, discard, new_op_id, recover, writer_lock
from warehouse.lake.dedup import PartitionIndex
from warehouse.lake.layout import GAMES, Partition, plies_twin, staged
from warehouse.lake.location import Lake
from warehouse.lake.parquet import ROW_GROUP_GAMES, open_parquet_writer
from warehouse.lake.plies import plies_of
from warehouse.lake.records import LoadRecord, Records, now
from warehouse.lake.storage import is_utf8, printable
from warehouse.load import BATCH_GAMES, LoadResult, read_outcome, reconcile
from warehouse.spark_task import Unit, UnitReport, run_partition

# Fault injection for the tests: the task of this input (its index among the inputs planned) fails its
# first attempt after staging its files.
FAIL_FIRST_ATTEMPT_ENV = "BGN_SPARK_FAIL_FIRST_ATTEMPT"


@dataclass
class SparkLoad:
    """The job's outcome: each input's load (as a local load reports it) or its one-line error."""

    results: list[LoadResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)


def expand(inputs: list[str]) -> list[str]:
    """Paths and globs, each glob replaced by its matches in name order.

    :raises InputError: for a glob that matches nothing."""
    paths: list[str] = []
    for text in inputs:
        if glob.has_magic(text):
            matches = sorted(glob.glob(text))
            if not matches:
                raise InputError(f"{text}: no file matches")
            paths += matches
        else:
            paths.append(text)
    return paths


def spark_load(
    spark: SparkSession,
    inputs: list[str],
    lake: Lake,
    *,
    dedup: bool = True,
    batch_games: int = BATCH_GAMES,
) -> SparkLoad:
    """Loads `inputs` (paths or globs) into `lake` with one Spark task per input.

    :raises InputError: for a name that is not UTF-8 or a glob without match (before anything runs).
    """
    paths = expand(inputs)
    for path in paths:
        if not is_utf8(path):
            raise InputError(f"{printable(path)}: the file's name is not valid UTF-8; rename it")
    outcome = SparkLoad()
    with writer_lock(lake):
        outcome.recovered = recover(lake)
        records, units = _plan(paths, lake, batch_games, dedup, outcome)
        reports = _run(spark, units)
        for unit, record in zip(units, records, strict=True):
            report = reports[unit.index]
            if report.error is not None:
                discard(lake, record.load_id)
                outcome.errors.append(report.error)
                continue
            outcome.results.append(_finish(lake, record, report))
    return outcome


def _plan(
    paths: list[str], lake: Lake, batch_games: int, dedup: bool, outcome: SparkLoad
) -> tuple[list[LoadRecord], list[Unit]]:
    """A load record and a unit per input not yet in the lake; the others are reported already loaded."""
    known = Records.read(lake)
    fail = os.environ.get(FAIL_FIRST_ATTEMPT_ENV)
    records: list[LoadRecord] = []
    units: list[Unit] = []
    for path in paths:
        record = LoadRecord(
            load_id=new_op_id(),
            input=path,
            fingerprint=fingerprint(path),
            dedup=dedup,
            games_seen=0,
            games_written=0,
            games_rejected=0,
            started=now(),
            loader_version=_core.__version__,
        )
        # As a local load: a fingerprint match is confirmed by the full checksum.
        if record.fingerprint and known.same_input(None, record.fingerprint):
            record.sha256 = file_sha256(path)
            if previous := known.same_input(record.sha256, None):
                outcome.results.append(LoadResult(record, already_loaded=previous[0]))
                continue
        index = len(units)
        units.append(
            Unit(index, path, record.load_id, lake.location, batch_games, fail == str(index))
        )
        records.append(record)
    return records, units


def _run(spark: SparkSession, units: list[Unit]) -> dict[int, UnitReport]:
    """One task per unit; Spark returns one report per unit, from the attempt that succeeded."""
    if not units:
        return {}
    rdd = spark.sparkContext.parallelize(units, len(units)).mapPartitions(run_partition)
    return {report.index: report for report in rdd.collect()}


def _finish(lake: Lake, record: LoadRecord, report: UnitReport) -> LoadResult:
    """Dedups the staged files against the lake, reconciles and commits one input's load."""
    try:
        files, plies = dict(report.file_rows), dict(report.ply_rows)
        known = Records.read(lake)  # with the loads this job committed before this one
        if record.dedup:
            _drop_known(lake, record, files, plies)
        record.file_rows, record.ply_rows = files, plies
        record.rejects_file = report.rejects_file
        record.rejects_by_kind = report.rejects_by_kind
        read_outcome(record, report, record.input)
        reconcile(record, sum(files.values()), report.rejects_count)
        if previous := known.same_input(record.sha256, None):
            # Same bytes as a committed load (one given twice, or under another name): as a local load.
            discard(lake, record.load_id)
            return LoadResult(record, already_loaded=previous[0])
    except BaseException:
        discard(lake, record.load_id)
        raise
    record.written()
    lake.mark_layout()
    commit(lake, record, subject=record.input)
    return LoadResult(record)


def _drop_known(lake: Lake, record: LoadRecord, files: dict[str, int], plies: dict[str, int]) -> None:
    """Drops from the staged files the games already in the lake or earlier in the input, in the order
    a local load meets them (a partition's files by number, rows in order); updates the row counts."""
    index = PartitionIndex(lake)
    for rel in sorted(files, key=_file_order):
        path = staged(record.load_id, rel)
        partition = _partition_of(rel)
        ids = pq.read_table(lake.path(path), columns=["game_id"], filesystem=lake.fs)["game_id"]
        keep = index.keep(partition, ids.combine_chunks())
        duplicates = len(keep) - int(keep.sum())
        if not duplicates:
            continue
        record.games_duplicate += duplicates
        twin = plies_twin(rel)
        games = pq.read_table(lake.path(path), filesystem=lake.fs).filter(pa.array(keep))
        lake.delete(path)
        lake.delete(staged(record.load_id, twin))
        if games.num_rows == 0:
            del files[rel], plies[twin]
            continue
        games_out = open_parquet_writer(lake, staged(record.load_id, rel), games.schema)
        plies_out: pq.ParquetWriter | None = None
        files[rel], plies[twin] = games.num_rows, 0
        # Row groups as the load's writer makes them: the same games in a games/ and its plies/ group.
        for batch in games.to_batches(max_chunksize=ROW_GROUP_GAMES):
            if batch.num_rows == 0:  # a row group whose games were all duplicates
                continue
            ply_batch = plies_of(batch)
            if plies_out is None:
                plies_out = open_parquet_writer(lake, staged(record.load_id, twin), ply_batch.schema)
            games_out.write_table(pa.Table.from_batches([batch]), row_group_size=batch.num_rows)
            plies_out.write_table(pa.Table.from_batches([ply_batch]), row_group_size=max(ply_batch.num_rows, 1))
            plies[twin] += ply_batch.num_rows
        games_out.close()
        if plies_out is not None:
            plies_out.close()


def _file_order(rel: str) -> tuple[str, int]:
    """A staged `games/` file's partition folder and number (`…-<n>.parquet`): its games' order."""
    folder, name = rel.rsplit("/", 1)
    return folder, int(name.rsplit("-", 1)[1].removesuffix(".parquet"))


def _partition_of(rel: str) -> Partition:
    """The partition of a `games/type=…/year=…/month=…/<file>` path."""
    parts = dict(part.split("=", 1) for part in rel.removeprefix(f"{GAMES}/").split("/")[:3])
    return Partition(parts["type"], int(parts["year"]), int(parts["month"]))
