"""How a load's input is recognised as one already in the lake, and named in the lake's files.

An input is identified by the SHA-256 of its raw bytes. Hashing a 30 GB dump before loading it would
read it twice, so a cheap fingerprint comes first: size plus SHA-256 of the first and last MiB. Only an
input whose fingerprint matches a committed load is hashed in full before loading (to confirm it is the
same); any other input is hashed by the Rust reader while it loads, for free, and the full checksum is
compared again at commit time (which also covers standard input, where no fingerprint can be taken).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import IO

from warehouse.file_names import name_part
from warehouse.lake.storage import filesystem, is_s3

STDIN = "-"
EDGE_BYTES = 1 << 20
HASH_CHUNK = 8 << 20


def fingerprint(path: str) -> str | None:
    """`size:sha256(first MiB):sha256(last MiB)` of a regular file or an S3 object; None for stdin or a
    pipe."""
    if path == STDIN or not (is_s3(path) or os.path.isfile(path)):
        return None
    with _open(path) as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(0)
        head = hashlib.sha256(f.read(EDGE_BYTES)).hexdigest()
        f.seek(max(size - EDGE_BYTES, 0))
        tail = hashlib.sha256(f.read(EDGE_BYTES)).hexdigest()
    return f"{size}:{head}:{tail}"


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with _open(path) as f:
        while chunk := f.read(HASH_CHUNK):
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
