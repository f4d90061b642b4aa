"""Parts of file names made from text the user gave: an input's name (in the lake's file names), a game's id
(in the study export's file names).

Such a part is ASCII letters, digits, `.`, `_` and `-` only (portable, no quoting in a shell or a URL),
never starts with `_` or `.` (pyarrow's dataset discovery, Spark and Hadoop skip such files as hidden: a
lake file named so would be left out of their reads), and is bounded in length (file systems refuse names
over 255 bytes): a longer one is cut and ends with a hash of the whole text, so two long names that share
their beginning stay apart.
"""

from __future__ import annotations

import hashlib
import re

UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# Leaves room in a 255-byte name for what is added around the part: a load's id and a file number, `.json`.
MAX_PART_CHARS = 100
HASH_CHARS = 12


def name_part(text: str, empty: str) -> str:
    """`text` as part of a file name (see the module's doc); `empty` when nothing of it is left."""
    safe = UNSAFE.sub("_", text).lstrip("._")
    if not safe:
        return empty
    if len(safe) <= MAX_PART_CHARS:
        return safe
    digest = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:HASH_CHARS]
    return f"{safe[: MAX_PART_CHARS - HASH_CHARS - 1]}-{digest}"
