"""How a load's input is recognised as one already in the lake, and named in the lake's files.

An input is identified by the SHA-256 of its raw bytes. Hashing a 30 GB dump before loading it would
read it twice, so a cheap fingerprint comes first: size plus SHA-256 of the first and last MiB. Only an
input whose fingerprint matches a committed load is hashed in full before loading (to confirm it is the
same); any other input is hashed by the Rust reader while it loads, for free, and the full checksum is
compared again at commit time (which also covers standard input, where no fingerprint can be taken).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import threading
from pathlib import Path
from typing import IO

from warehouse.errors import InputError, StorageError
from warehouse.file_names import name_part
from warehouse.lake.storage import GLOB_CHARS, filesystem, is_s3, s3_files

STDIN = "-"
# The files a folder, glob or prefix names, by format: their names' endings (compressed or not).
PGN_NAME = re.compile(r"\.pgn(\.(bz2|zst|zstd|gz))?$", re.IGNORECASE)
JSON_NAME = re.compile(r"\.(json|jsonl|ndjson)(\.(bz2|zst|zstd|gz))?$", re.IGNORECASE)
EDGE_BYTES = 1 << 20
HASH_CHUNK = 8 << 20


def fingerprint(path: str) -> str | None:
    """`size:sha256(first MiB):sha256(last MiB)` of a regular file or an S3 object; None for stdin or a
    pipe."""
    if path == STDIN or not (is_s3(path) or os.path.isfile(path)):
        return None
    try:
        opened = _open(path)
    except FileNotFoundError:  # an S3 object that is not there: its reader says so, as for a file
        return None
    with opened as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(0)
        head = hashlib.sha256(f.read(EDGE_BYTES)).hexdigest()
        f.seek(max(size - EDGE_BYTES, 0))
        tail = hashlib.sha256(f.read(EDGE_BYTES)).hexdigest()
    return f"{size}:{head}:{tail}"


def file_sha256(path: str, stop: threading.Event | None = None) -> str | None:
    """The file's SHA-256, hex; None if `stop` is set before it is read to its end."""
    digest = hashlib.sha256()
    with _open(path) as f:
        while chunk := f.read(HASH_CHUNK):
            if stop is not None and stop.is_set():
                return None
            digest.update(chunk)
    return digest.hexdigest()


def _open(path: str) -> IO[bytes]:
    """A local file, or an S3 object read by ranged requests (seekable)."""
    if is_s3(path):
        fs, key = filesystem(path)
        return fs.open_input_file(key)
    return open(path, "rb")


def input_stem(path: str) -> str:
    """An input's name as the lake's file names begin (`warehouse.file_names`): `lichess_db_2024-01` for
    `…/lichess_db_2024-01.pgn.zst`."""
    if path == STDIN:
        return "stdin"
    name = re.sub(r"(\.(pgn|zst|zstd|bz2|gz|txt))+$", "", Path(path).name, flags=re.IGNORECASE)
    return name_part(name, "input")


def input_files(given: str, names: re.Pattern[str]) -> list[str]:
    """The files `given` names, sorted: itself (a file, `-`, or a path that does not exist: its reader
    says so), the files of a folder (recursively) or an `s3://` prefix whose names match `names`, or a
    glob's files (local: every file it matches; S3: those whose names match).

    :raises InputError: for an S3 location that cannot be listed.
    """
    if is_s3(given):
        try:
            found = s3_files(given)
        except StorageError as e:
            raise InputError(str(e)) from e
        # An object named is read whatever its name; under a prefix or glob, the files named so only.
        return found if found == [given] else [n for n in found if names.search(n)]
    if GLOB_CHARS.search(given):
        return sorted(p for p in glob.glob(given, recursive=True) if os.path.isfile(p))
    if os.path.isdir(given):
        return sorted(
            os.path.join(root, name)
            for root, _, files in os.walk(given)
            for name in files
            if names.search(name)
        )
    return [given]
