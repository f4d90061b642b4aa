"""How an operation (a load, a compaction) changes the lake all at once or not at all.

1. **Stage.** Every file is written under `_staging/<op>/<its final path>`, out of readers' sight.
2. **Commit.** The operation's record `_loads/<op>.json` is written, atomically (a rename on a local disk;
   on S3 an object appears only when its upload completes). Its presence is the commit: it lists the
   files the operation adds (`files`, `rejects_file`) and the ones it retires (`removes`).
3. **Publish.** Staged files are moved to their final paths (a rename locally; a server-side copy and a
   delete on S3), then the retired files are deleted and the staging folder removed.

A crash before step 2 leaves only a staging folder, which the next writer deletes (roll back). A crash
during step 3 leaves a committed record beside its staging folder, which the next writer publishes
(roll forward): each step of publishing can be repeated. The staging folder holds a marker
(`_staging/<op>/.publishing`) until publishing is complete, so that an operation interrupted after its
last file was moved, while deleting the files it retires, is still found and finished. Every writer takes
the lake's lock and recovers before doing anything else.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

import pyarrow.fs as pafs

from warehouse.errors import LakeError, NotPublished
from warehouse.lake.layout import LOCK, STAGING, record_path, staged, staging_dir
from warehouse.lake.location import Lake
from warehouse.lake.records import Record, read_record, write_record

# On S3 there is no lock to tell a crashed operation's staging folder from a running one's: only folders
# untouched for this long are taken as abandoned.
S3_ABANDONED_SECONDS = 6 * 3600

# Staged beside an operation's files, deleted last: while it exists, publishing is not complete.
PUBLISHING_MARKER = ".publishing"


def new_op_id() -> str:
    """A new operation's id: its start time (so ids sort by time) and a random suffix."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]


@contextmanager
def writer_lock(lake: Lake) -> Iterator[None]:
    """One writer at a time on a local lake (loads dedup against what is committed, so they must not
    overlap). `flock` is released by the kernel when its holder dies, even by SIGKILL. S3 offers no lock:
    there, running one writer at a time is the user's part (docs/operations.md)."""
    if not lake.local:
        yield
        return
    os.makedirs(lake.root, exist_ok=True)
    with open(os.path.join(lake.root, LOCK), "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for another load or compaction on {lake.location} to finish", file=sys.stderr)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def commit(lake: Lake, record: Record, subject: str) -> None:
    """Writes the record (the commit point), then publishes the operation; `subject` names it in errors.

    :raises OSError: when the record could not be written; the staged files are dropped.
    :raises LakeError: when publishing would go through a symbolic link (see `refuse_links`); nothing is
        committed, the staged files are dropped.
    :raises NotPublished: for a failure or Ctrl-C once the record is (or may be) written.
    """
    op_id = record.load_id
    try:
        refuse_links(lake, record)
    except LakeError:
        discard(lake, op_id)
        raise
    try:
        for rel in record.added_files():
            lake.make_parent(rel)  # before the commit, so that publishing is renames only: a short window
        lake.write_text(staged(op_id, PUBLISHING_MARKER), "")
        write_record(lake, record)
    except (OSError, KeyboardInterrupt) as e:
        committed = _committed(lake, op_id)
        if committed is False:
            with contextlib.suppress(OSError):
                discard(lake, op_id)
            raise
        raise NotPublished(subject, op_id, e, committed) from e
    try:
        publish(lake, record)
    except (OSError, KeyboardInterrupt) as e:
        raise NotPublished(subject, op_id, e) from e


def _committed(lake: Lake, op_id: str) -> bool | None:
    """Whether the record of `op_id` exists; None when storage cannot tell (a lost connection: on S3 the
    upload may have completed though its answer was lost)."""
    try:
        return lake.exists(record_path(op_id))
    except OSError:
        return None


def publish(lake: Lake, record: Record) -> None:
    """Moves a committed operation's staged files into place and deletes the files it retires.
    Idempotent: a file already moved or deleted is skipped, so a crash here is finished by a rerun."""
    op_id = record.load_id
    refuse_links(lake, record)
    for rel in record.added_files():
        try:
            lake.fs.move(lake.path(staged(op_id, rel)), lake.path(rel))
        except OSError:  # already moved by an interrupted publish (S3 says so as a plain OSError)
            lake.make_parent(rel)
            if lake.exists(staged(op_id, rel)):
                lake.move(staged(op_id, rel), rel)
            elif not lake.exists(rel):
                raise FileNotFoundError(
                    f"{lake.location}: {rel} of committed operation {op_id} is missing"
                ) from None
    for rel in record.removes:
        lake.delete(rel)
    lake.delete_dir(staging_dir(op_id))


def refuse_links(lake: Lake, record: Record) -> None:
    """Checks every path publishing `record` moves or deletes, before any is: none goes through a symbolic
    link (`Lake.refuse_links`), so that a refusal leaves the lake as it was.

    :raises LakeError: naming the link.
    """
    for rel in record.added_files():
        lake.refuse_links(staged(record.load_id, rel))
        lake.refuse_links(rel)
    for rel in record.removes:
        lake.refuse_links(rel)


def discard(lake: Lake, op_id: str) -> None:
    """Drops an uncommitted operation's staged files."""
    lake.delete_dir(staging_dir(op_id))


def staging_ops(lake: Lake) -> dict[str, float]:
    """Operations with a staging folder, and when their newest staged file was written (epoch seconds)."""
    newest: dict[str, float] = {}
    prefix = len(lake.path(STAGING)) + 1
    for info in lake.files(STAGING):
        op_id = info.path[prefix:].split("/", 1)[0]
        mtime = info.mtime.timestamp() if info.mtime else 0.0
        newest[op_id] = max(newest.get(op_id, 0.0), mtime)
    return newest


def recover(lake: Lake) -> list[str]:
    """Finishes interrupted publishes and drops abandoned staging; returns what it did, one line each.
    Call with the writer lock held."""
    done: list[str] = []
    for op_id, mtime in staging_ops(lake).items():
        if lake.exists(record_path(op_id)):
            publish(lake, read_record(lake, record_path(op_id)))
            done.append(f"finished publishing {op_id}, interrupted after its commit")
        elif lake.local or time.time() - mtime > S3_ABANDONED_SECONDS:
            discard(lake, op_id)
            done.append(f"dropped the staged files of {op_id}, interrupted before its commit")
    if lake.local:  # folders left empty by a publish killed just before its last step
        for info in lake.fs.get_file_info(pafs.FileSelector(lake.path(STAGING), allow_not_found=True)):
            lake.delete_dir(lake.relative(info.path))
    return done
