"""The committed records of `_loads/`, and how an input is recognised as already loaded.

An input is identified by the SHA-256 of its raw bytes. Hashing a 30 GB dump before loading it would
read it twice, so a cheap fingerprint comes first: size plus SHA-256 of the first and last MiB. Only an
input whose fingerprint matches a committed load is hashed in full before loading (to confirm it is the
same); any other input is hashed by the Rust reader while it loads, for free, and the full checksum is
compared again at commit time (which also covers standard input, where no fingerprint can be taken).
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from dataclasses import dataclass

from warehouse.lake import LOADS, Lake

EDGE_BYTES = 1 << 20
HASH_CHUNK = 8 << 20

_TEXT, _COUNT, _OPTIONAL_TEXT = (str,), (int,), (str, type(None))
# What is read from a record, by kind: field → (accepted types, required). Optional fields may be
# missing from records of older versions.
_COMMON_FIELDS = {
    "load_id": (_TEXT, True),
    "kind": (_TEXT, False),
    "file_rows": ((dict,), False),
    "files": ((list,), False),
    "removes": ((list,), False),
    "finished": (_TEXT, False),
}
_LOAD_FIELDS = {
    "games_seen": (_COUNT, True),
    "games_written": (_COUNT, True),
    "games_rejected": (_COUNT, True),
    "games_duplicate": (_COUNT, False),
    "replaces": ((list,), False),
    "rejects_file": (_OPTIONAL_TEXT, False),
    "sha256": (_OPTIONAL_TEXT, False),
    "fingerprint": (_OPTIONAL_TEXT, False),
}
KINDS = ("load", "compact")


class DamagedRecord(ValueError):
    """A file of `_loads/` that is not a valid record; the message is one line naming the file."""


def fingerprint(path: str) -> str | None:
    """`size:sha256(first MiB):sha256(last MiB)` of a regular file; None for stdin or a pipe."""
    if path == "-" or not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = hashlib.sha256(f.read(EDGE_BYTES)).hexdigest()
        f.seek(max(size - EDGE_BYTES, 0))
        tail = hashlib.sha256(f.read(EDGE_BYTES)).hexdigest()
    return f"{size}:{head}:{tail}"


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def read_record(lake: Lake, rel: str) -> dict:
    """The record at `rel`, checked to hold what the lake's code reads from it (the right keys and types,
    file paths inside the lake), so that a damaged record is refused by name instead of crashing a run.

    :raises DamagedRecord: naming the file and what is wrong with it.
    """
    try:
        record = json.loads(lake.read_text(rel))
    except (ValueError, RecursionError) as e:  # not UTF-8, not JSON, or nested beyond the parser
        problem = f"not JSON ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
    else:
        problem = _record_problem(record, posixpath.basename(rel).removesuffix(".json"))
    if problem:
        raise DamagedRecord(
            f"{lake.location}/{rel}: damaged record: {problem}; restore it, or move it out of "
            f"{LOADS}/ (its files then count as in no record)"
        )
    return record


def _record_problem(record: object, name: str) -> str | None:
    """What is wrong with a parsed record, or None."""
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not an object"
    kind = record.get("kind", "load")
    if kind not in KINDS:
        return f"unknown kind {kind!r}"
    fields = _COMMON_FIELDS | (_LOAD_FIELDS if kind == "load" else {})
    for key, (types, required) in fields.items():
        if key not in record:
            if required:
                return f"no {key!r}"
        elif not isinstance(record[key], types) or isinstance(record[key], bool):
            return f"{key!r} is not {' or '.join(t.__name__ for t in types)}"
    if record["load_id"] != name:
        return f"load_id {record['load_id']!r} differs from the file's name"
    rows = record.get("file_rows") or {}
    if not all(type(n) is int for n in rows.values()):
        return "'file_rows' has a count that is not an integer"
    paths = [*rows, *(record.get("files") or []), *(record.get("removes") or [])]
    paths += [record["rejects_file"]] if record.get("rejects_file") else []
    if bad := next((p for p in paths if not _inside_lake(p)), None):
        return f"{bad!r} is not a path inside the lake"
    if not all(isinstance(op, str) for op in record.get("replaces") or []):
        return "'replaces' holds something other than load ids"
    return None


def _inside_lake(path: object) -> bool:
    """A relative path that stays inside the lake: publishing moves and deletes exactly these."""
    return (
        isinstance(path, str)
        and bool(path)
        and not path.startswith("/")
        and ".." not in path.split("/")
        and "\0" not in path
    )


@dataclass(frozen=True)
class Records:
    """Every committed record of a lake, and what follows from them."""

    all: list[dict]

    @classmethod
    def scan(cls, lake: Lake) -> tuple[Records, list[DamagedRecord]]:
        """The valid records, and an error for each damaged one."""
        records, damaged = [], []
        for info in lake.files(LOADS):
            if info.path.endswith(".json"):
                try:
                    records.append(read_record(lake, lake.relative(info.path)))
                except DamagedRecord as e:
                    damaged.append(e)
        records.sort(key=lambda r: r.get("finished") or "")
        return cls(records), damaged

    @classmethod
    def read(cls, lake: Lake) -> Records:
        """Every record; refuses a lake with a damaged one, as nothing can be written safely over it.

        :raises DamagedRecord: for the first damaged record.
        """
        records, damaged = cls.scan(lake)
        if damaged:
            raise damaged[0]
        return records

    @property
    def loads(self) -> list[dict]:
        """Loads whose games are in the lake: not replaced by a later `--force` load of the same input."""
        replaced = {op for r in self.all for op in r.get("replaces") or []}
        return [r for r in self.all if r.get("kind", "load") == "load" and r["load_id"] not in replaced]

    def live_files(self) -> dict[str, int]:
        """Every data file the records say is in the lake, with its row count. A file name is never
        reused, so the order of the records does not matter."""
        removed = {f for r in self.all for f in r.get("removes") or []}
        return {
            f: rows for r in self.all for f, rows in (r.get("file_rows") or {}).items() if f not in removed
        }

    def same_input(self, sha256: str | None, fp: str | None) -> list[dict]:
        """Live loads of this input: by full checksum when known, else by fingerprint (to confirm)."""
        if sha256:
            return [r for r in self.loads if r.get("sha256") == sha256]
        return [r for r in self.loads if fp and r.get("fingerprint") == fp]
