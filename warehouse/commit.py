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
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow.fs as pafs

from warehouse.lake import LOADS, STAGING, Lake, staged, write_json
from warehouse.loads import read_record

# On S3 there is no lock to tell a crashed operation's staging folder from a running one's: only folders
# untouched for this long are taken as abandoned.
S3_ABANDONED_SECONDS = 6 * 3600

# Staged beside an operation's files, deleted last: while it exists, publishing is not complete.
PUBLISHING_MARKER = ".publishing"


class LakeBusy(RuntimeError):
    """Another writer holds the lake's lock."""


class NotPublished(Exception):
    """Publishing an operation failed (`cause`: an `OSError` or Ctrl-C) after its record was written, or
    while it was being written and whether it was could not be known (`committed` None). The lake stays
    consistent: the next writer, or a rerun of the same command, finishes publishing."""

    def __init__(self, op_id: str, cause: OSError | KeyboardInterrupt, committed: bool | None = True):
        self.op_id, self.cause, self.committed = op_id, cause, committed
        super().__init__(f"{op_id}: {self.state}")

    @property
    def interrupted(self) -> bool:
        return isinstance(self.cause, KeyboardInterrupt)

    @property
    def why(self) -> str:
        """The cause, on one line."""
        if self.interrupted:
            return "interrupted"
        text = str(self.cause).splitlines()
        return text[0] if text else type(self.cause).__name__

    @property
    def state(self) -> str:
        """What the user needs to know and do, for the end of a one-line message."""
        committed = "committed" if self.committed else "perhaps committed"
        return f"{committed} as {self.op_id} but not fully published; run again to finish publishing"


@contextmanager
def writer_lock(lake: Lake, *, wait: bool = True) -> Iterator[None]:
    """One writer at a time on a local lake (loads dedup against what is committed, so they must not
    overlap). `flock` is released by the kernel when its holder dies, even by SIGKILL. S3 offers no lock:
    there, running one writer at a time is the user's part (docs/operations.md)."""
    if not lake.local:
        yield
        return
    os.makedirs(lake.root, exist_ok=True)
    with open(os.path.join(lake.root, "_lock"), "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                raise LakeBusy(f"{lake.location}: another load or compaction is running") from None
            print(f"waiting for another load or compaction on {lake.location} to finish", file=sys.stderr)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def record_path(op_id: str) -> str:
    return f"{LOADS}/{op_id}.json"


def added_files(record: dict) -> list[str]:
    """The files an operation adds to the lake."""
    return list(record.get("files") or []) + ([record["rejects_file"]] if record.get("rejects_file") else [])


def commit(lake: Lake, record: dict) -> None:
    """Writes the record (the commit point), then publishes the operation.

    :raises OSError: when the record could not be written; the staged files are dropped.
    :raises NotPublished: for a failure or Ctrl-C once the record is (or may be) written.
    """
    op_id = record["load_id"]
    try:
        for rel in added_files(record):
            lake.make_parent(rel)  # before the commit, so that publishing is renames only: a short window
        lake.write_text(staged(op_id, PUBLISHING_MARKER), "")
        write_json(lake, record_path(op_id), record)
    except (OSError, KeyboardInterrupt) as e:
        committed = _committed(lake, op_id)
        if committed is False:
            with contextlib.suppress(OSError):
                discard(lake, op_id)
            raise
        raise NotPublished(op_id, e, committed) from e
    try:
        publish(lake, record)
    except (OSError, KeyboardInterrupt) as e:
        raise NotPublished(op_id, e) from e


def _committed(lake: Lake, op_id: str) -> bool | None:
    """Whether the record of `op_id` exists; None when storage cannot tell (a lost connection: on S3 the
    upload may have completed though its answer was lost)."""
    try:
        return lake.exists(record_path(op_id))
    except OSError:
        return None


def publish(lake: Lake, record: dict) -> None:
    """Moves a committed operation's staged files into place and deletes the files it retires.
    Idempotent: a file already moved or deleted is skipped, so a crash here is finished by a rerun."""
    op_id = record["load_id"]
    for rel in added_files(record):
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
    for rel in record.get("removes") or []:
        lake.delete(rel)
    lake.delete_dir(f"{STAGING}/{op_id}")


def discard(lake: Lake, op_id: str) -> None:
    """Drops an uncommitted operation's staged files."""
    lake.delete_dir(f"{STAGING}/{op_id}")


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
    done = []
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
