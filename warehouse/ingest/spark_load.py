"""Loading PGN inputs into the lake on a Spark cluster: the driver's part.

The driver holds the lake's writer lock (local lakes) and recovers as a local load does, then plans one
load per input (an input already in the lake, by SHA-256, is skipped), runs one Spark task per input or
per part of a multi-frame zstd input (`warehouse.ingest.spark_task`: the Rust core on an executor, staging
Parquet files under the load's staging folder), and then, input by input in the order given: checks that
each part started where the part before stopped (reading a part again on the driver when not), drops the
games already in the lake or earlier in the same input or job (the same `game_id` index as a local load,
rewriting only the staged files that held duplicates), reconciles the counts and commits the load's
record (`warehouse.lake.commit`). The lake then holds what `loaders.pgn2parquet` would have written from
the same inputs, value for value.

A driver killed before a load's commit leaves only staging folders, which the next writer drops; the
loads committed before it stay, and a rerun skips them as already loaded.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field, replace

import numpy as np
from pyspark.sql import SparkSession

from warehouse.errors import InputError, StorageError
from warehouse.ingest.inputs import file_sha256, fingerprint, input_stem
from warehouse.ingest.load import (
    BATCH_GAMES,
    LoadResult,
    add_up,
    finish_outcome,
    new_load_record,
    pgn_outcome,
    reconcile,
)
from warehouse.ingest.merge import staging_lake
from warehouse.ingest.spark_task import Unit, UnitReport, convert, run_partition
from warehouse.ingest.zstd_frames import frame_parts, input_goes_on, starts_where_stopped
from warehouse.lake.commit import commit, discard, recover, writer_lock
from warehouse.lake.dedup import PartitionIndex
from warehouse.lake.layout import GAMES, REJECTS, Partition, plies_twin, staged
from warehouse.lake.location import Lake
from warehouse.lake.parquet import read_columns
from warehouse.lake.records import LoadedInput, LoadRecord, Records
from warehouse.lake.rewrite import RewrittenFile, row_groups
from warehouse.lake.storage import input_stream, is_s3, is_utf8, output_stream, printable, s3_files

# Decompressed bytes of a multi-frame zstd input per task, at least (whole frames): a 30 GB month (some
# 200 GB of text) becomes ~3,000 tasks of a few seconds each.
UNIT_BYTES = 64 << 20
# The suffix of a staged file rewritten without its duplicates, until it takes the file's name.
KEPT = ".kept"

# Fault injection for the tests: the task of this unit (its index among the job's units, in input order)
# fails its first attempt after staging its files.
FAIL_FIRST_ATTEMPT_ENV = "BGN_SPARK_FAIL_FIRST_ATTEMPT"


@dataclass
class SparkLoad:
    """The job's outcome: each input's load (as a local load reports it) or its one-line error."""

    results: list[LoadResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)


def expand(inputs: list[str]) -> list[str]:
    """Paths, ``s3://`` URLs and globs of either, each glob replaced by its matches in name order (a name
    that exists is a path, whatever its characters; an S3 prefix stands for the objects under it).

    :raises InputError: for a glob or prefix that matches nothing, or a URL of another scheme."""
    paths: list[str] = []
    for text in inputs:
        if is_s3(text):
            try:
                matches = s3_files(text)
            except StorageError as e:
                raise InputError(str(e)) from e
        elif "://" in text:
            raise InputError(f"{text}: inputs are paths every executor can read, or s3:// URLs")
        elif glob.has_magic(text) and not os.path.exists(text):
            matches = sorted(glob.glob(text))
        else:
            matches = [text]
        if not matches:
            raise InputError(f"{text}: no file matches")
        paths += matches
    return paths


def spark_load(
    spark: SparkSession,
    inputs: list[str],
    lake: Lake,
    *,
    dedup: bool = True,
    batch_games: int = BATCH_GAMES,
    unit_bytes: int = UNIT_BYTES,
) -> SparkLoad:
    """Loads `inputs` (paths; `expand` resolves globs) into `lake`: one Spark task per input, or per
    part of at least `unit_bytes` of decompressed text of a multi-frame zstd input.

    :raises InputError: for a name that is not UTF-8 (before anything runs).
    """
    for path in inputs:
        if not is_utf8(path):
            raise InputError(f"{printable(path)}: the file's name is not valid UTF-8; rename it")
    outcome = SparkLoad()
    with writer_lock(lake):
        outcome.recovered = recover(lake)
        planned = _plan(inputs, lake, batch_games, unit_bytes, dedup)
        reports = _run(spark, [unit for p in planned for unit in p.units])
        for load in planned:
            if load.already_loaded is not None:
                outcome.results.append(LoadResult(load.record, already_loaded=load.already_loaded))
                continue
            parts = _chain(load.units, [reports[unit.index] for unit in load.units])
            if parts[0].error is not None:
                discard(lake, load.record.load_id)
                outcome.errors.append(parts[0].error)
                continue
            outcome.results.append(_finish(lake, load.record, parts))
    return outcome


@dataclass
class _Planned:
    """One input's load and its units: the whole input, or parts of its zstd frames in order."""

    record: LoadRecord
    units: list[Unit]
    already_loaded: LoadRecord | None = None  # the input's committed load: nothing to do


def _plan(paths: list[str], lake: Lake, batch_games: int, unit_bytes: int, dedup: bool) -> list[_Planned]:
    """A load record per input, and its units unless the input is already in the lake."""
    known = Records.read(lake)
    fail = os.environ.get(FAIL_FIRST_ATTEMPT_ENV)
    planned: list[_Planned] = []
    index = 0
    for path in paths:
        record = new_load_record(path, dedup)
        record.fingerprint = fingerprint(path)
        # As a local load: a fingerprint match is confirmed by the full checksum.
        if record.fingerprint and known.same_input(None, record.fingerprint, record.format):
            record.sha256 = file_sha256(path)
            if previous := known.same_input(record.sha256, None, record.format):
                planned.append(_Planned(record, [], already_loaded=previous[0]))
                continue
        whole = Unit(index, path, record.load_id, lake.location, batch_games)
        units = []
        for frames in frame_parts(path, unit_bytes):
            units.append(replace(whole, index=index, frames=frames, first_game=0 if frames[1] == 0 else None))
            index += 1
        if not units:
            units, index = [whole], index + 1
        units = [replace(u, fail_first_attempt=fail == str(u.index)) for u in units]
        planned.append(_Planned(record, units))
    return planned


def _run(spark: SparkSession, units: list[Unit]) -> dict[int, UnitReport]:
    """One task per unit; Spark returns one report per unit, from the attempt that succeeded."""
    if not units:
        return {}
    rdd = spark.sparkContext.parallelize(units, len(units)).mapPartitions(run_partition)
    return {report.index: report for report in rdd.collect()}


def _chain(units: list[Unit], reports: list[UnitReport]) -> list[UnitReport]:
    """An input's parts as a whole read would have cut them: each part must start where the part before
    stopped (a part that guessed wrong is read again on the driver, told where to start); parts after
    the input's end or its damage are dropped (their staged files go with the staging folder). An
    input a part was refused of (its frames alone look like no PGN) is read whole, on the driver."""
    if len(units) == 1 or reports[0].error is not None:
        return reports[:1]
    if any(r.error is not None for r in reports):
        return [convert(replace(units[0], frames=None, first_game=None), "d")]
    kept = [reports[0]]
    for unit, report in zip(units[1:], reports[1:], strict=True):
        before = kept[-1]
        if not input_goes_on(before):
            break
        if not starts_where_stopped(before, report):
            report = convert(replace(unit, first_game=before.stopped_at), "d")
        kept.append(report)
    return kept


def _merged(lake: Lake, record: LoadRecord, parts: list[UnitReport]) -> UnitReport:
    """The parts' report as one read's: counts summed, games files in read order, one rejects file."""
    if len(parts) == 1:
        return parts[0]
    first, last = parts[0], parts[-1]
    merged = UnitReport(first.index, "", first.compression, first.input_size, damage=last.damage)
    for part in parts:
        merged.games_seen += part.games_seen
        merged.games_written += part.games_written
        merged.games_rejected += part.games_rejected
        merged.rejects_count += part.rejects_count
        merged.file_rows.update({f: part.file_rows[f] for f in sorted(part.file_rows, key=_file_order)})
        merged.ply_rows.update(part.ply_rows)
        for kind, n in part.rejects_by_kind.items():
            merged.rejects_by_kind[kind] = merged.rejects_by_kind.get(kind, 0) + n
    merged.rejects_by_kind = dict(sorted(merged.rejects_by_kind.items()))
    pieces = [p.rejects_file for p in parts if p.rejects_file]
    if pieces:
        merged.rejects_file = f"{REJECTS}/{input_stem(record.input)}-{record.load_id}.jsonl"
        with output_stream(lake.fs, lake.path(staged(record.load_id, merged.rejects_file))) as out:
            for piece in pieces:
                with input_stream(lake.fs, lake.path(staged(record.load_id, piece))) as source:
                    out.write(source.read())
                lake.delete(staged(record.load_id, piece))
    return merged


def _finish(lake: Lake, record: LoadRecord, parts: list[UnitReport]) -> LoadResult:
    """Dedups the staged files against the lake, reconciles and commits one input's load."""
    try:
        report = _merged(lake, record, parts)
        files, plies = dict(report.file_rows), dict(report.ply_rows)
        known = Records.read(lake)  # with the loads this job committed before this one
        if record.dedup:
            _drop_known(lake, record, files, plies)
        record.file_rows, record.ply_rows = files, plies
        record.rejects_file = report.rejects_file
        record.rejects_by_kind = report.rejects_by_kind
        # As a local load of one input: the input's outcome is the record's.
        outcome = pgn_outcome(record.input, report)
        given = LoadedInput(input=record.input, fingerprint=record.fingerprint, sha256=record.sha256)
        finish_outcome(outcome, given, record.games_duplicate)
        add_up(record, [outcome])
        reconcile(record, sum(files.values()), report.rejects_count)
        if previous := known.same_input(record.sha256, None, record.format):
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
    a local load meets them (`files` in read order, rows in order); updates the row counts."""
    index = PartitionIndex(lake)
    staging = staging_lake(lake, record.load_id)
    for rel in list(files):
        ids = read_columns(staging, rel, ["game_id"])["game_id"]
        keep = index.keep(_partition_of(rel), ids.combine_chunks())
        duplicates = len(keep) - int(keep.sum())
        if not duplicates:
            continue
        record.games_duplicate += duplicates
        twin = plies_twin(rel)
        if keep.any():
            files[rel], plies[twin] = _rewrite_kept(staging, rel, keep)
        else:
            staging.delete(rel)
            staging.delete(twin)
            del files[rel], plies[twin]


def _rewrite_kept(staging: Lake, rel: str, keep: np.ndarray) -> tuple[int, int]:
    """Rewrites the staged games file `rel` and its plies twin with the games where `keep` and their
    plies, as the load's writer writes its files (`RewrittenFile`), a row group at a time (a file holds up
    to a million games: never read whole); returns their row counts."""
    twin = plies_twin(rel)
    out = RewrittenFile(staging, rel + KEPT, twin + KEPT)
    read = ply_rows = 0
    try:
        for games, plies in row_groups(staging, [rel]):
            kept = keep[read : read + games.num_rows]
            read += games.num_rows
            if kept.any():
                kept_plies = np.repeat(kept, games["n_plies"].to_numpy())  # a game's plies are consecutive
                out.add(games.filter(kept), plies.filter(kept_plies))
                ply_rows += int(kept_plies.sum())
        out.close()
    except BaseException:
        out.abandon()
        raise
    for name in (rel, twin):
        staging.delete(name)
        staging.move(name + KEPT, name)
    return out.rows, ply_rows


def _file_order(rel: str) -> tuple[str, int]:
    """A staged `games/` file's partition folder and number (`…-<n>.parquet`): its games' order."""
    folder, name = rel.rsplit("/", 1)
    return folder, int(name.rsplit("-", 1)[1].removesuffix(".parquet"))


def _partition_of(rel: str) -> Partition:
    """The partition of a `games/type=…/year=…/month=…/<file>` path."""
    parts = dict(part.split("=", 1) for part in rel.removeprefix(f"{GAMES}/").split("/")[:3])
    return Partition(parts["type"], int(parts["year"]), int(parts["month"]))
