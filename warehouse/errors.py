"""What a user can get wrong, as one family: every command prints a `WarehouseError` as one line and
exits 2 (see `loaders.cli`). Anything else raised is a bug and keeps its traceback.

Failures of the disk or the network arrive as `OSError` (from Python or pyarrow) and are user errors too;
`describe` gives them their one line.
"""

from __future__ import annotations


class WarehouseError(Exception):
    """A problem the user can act on; the first line of its message says what and where."""


class InputError(WarehouseError):
    """An input that cannot be loaded: unreadable, not PGN, a name that is not UTF-8."""


class LoadError(WarehouseError):
    """A load that cannot be done as asked (`--force` on standard input, on an input since compacted)."""


class StorageError(WarehouseError):
    """A location that cannot be used: a bad URL, an unknown scheme, a bad endpoint or S3 setting."""


class LakeError(WarehouseError):
    """A lake that cannot be used (missing, a file, not a lake), or a selection none of its partitions
    matches."""


class DamagedRecord(LakeError):
    """A file of `_loads/` that is not a valid record; the message names the file."""


class DamagedFile(LakeError):
    """A data file of the lake whose content is not what the lake wrote: not Parquet, cut short, a page
    whose checksum or decoding fails. The message names the file and points to `check --full`."""

    def __init__(self, location: str, reason: str):
        self.location, self.reason = location, reason
        super().__init__(f"{location}: damaged: {reason} (`bgn check --full` lists every damaged file)")


class OutputError(WarehouseError):
    """An export's output that cannot be written: it exists, is not a directory, another export writes it."""


class NotPublished(WarehouseError):
    """An operation whose publishing failed (`cause`: an `OSError` or Ctrl-C) after its record was written,
    or while it was being written and whether it was could not be known (`committed` None). The lake stays
    consistent: the next writer, or a rerun of the same command, finishes publishing. `subject` names the
    operation for the user (an input's path, "compaction")."""

    def __init__(
        self, subject: str, op_id: str, cause: OSError | KeyboardInterrupt, committed: bool | None = True
    ):
        self.subject, self.op_id, self.cause, self.committed = subject, op_id, cause, committed
        why = "" if self.interrupted else f"{describe(cause)}; "
        super().__init__(f"{subject}: {why}{self.state}")

    @property
    def interrupted(self) -> bool:
        return isinstance(self.cause, KeyboardInterrupt)

    @property
    def state(self) -> str:
        """What the user needs to know and do, for the end of a one-line message."""
        committed = "committed" if self.committed else "perhaps committed"
        return f"{committed} as {self.op_id} but not fully published; run again to finish publishing"


def describe(error: BaseException, where: str | None = None) -> str:
    """`error` on one line. An `OSError` of the system reads `reason (file)` (`where` when it names no
    file); pyarrow's (S3) give the first line of their message."""
    if isinstance(error, OSError) and error.strerror:
        place = error.filename or where
        return f"{error.strerror} ({place})" if place else error.strerror
    lines = str(error).splitlines()
    text = lines[0] if lines else type(error).__name__
    return f"{text} ({where})" if where and isinstance(error, OSError) else text
