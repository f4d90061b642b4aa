"""The committed records of `_loads/`, and how an input is recognised as already loaded.

An input is identified by the SHA-256 of its raw bytes. Hashing a 30 GB dump before loading it would
read it twice, so a cheap fingerprint comes first: size plus SHA-256 of the first and last MiB. Only an
input whose fingerprint matches a committed load is hashed in full before loading (to confirm it is the
same); any other input is hashed by the Rust reader while it loads, for free, and the full checksum is
compared again at commit time (which also covers standard input, where no fingerprint can be taken).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from warehouse.lake import LOADS, Lake, read_json

EDGE_BYTES = 1 << 20
HASH_CHUNK = 8 << 20


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


@dataclass(frozen=True)
class Records:
    """Every committed record of a lake, and what follows from them."""

    all: list[dict]

    @classmethod
    def read(cls, lake: Lake) -> Records:
        records = [
            read_json(lake, lake.relative(i.path)) for i in lake.files(LOADS) if i.path.endswith(".json")
        ]
        records.sort(key=lambda r: r.get("finished") or "")
        return cls(records)

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
