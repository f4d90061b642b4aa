"""The bundled lichess sample as a lake, for notebooks and examples; the lake a notebook reads."""

from __future__ import annotations

import getpass
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from warehouse.lake.layout import LAYOUT

# tests/data's sample, through a symlink that the wheel carries as a file (pyproject.toml: include).
SAMPLE = (Path(__file__).parents[1] / "library" / "lichess_2025-05_sample.pgn.zst").resolve()


def sample_lake(lake: Path | None = None) -> Path:
    """Loads the bundled sample (438 lichess games of May 2025) into `lake` with the loader's command line,
    and returns the lake's path. By default the lake is `shared_sample_lake()`, loaded once and then reused:
    a load of the same file into it is a no-op (the lake knows its inputs by checksum), so notebooks opened
    without a lake of their own do not leave a new folder behind each time."""
    lake = lake or shared_sample_lake()
    command = [sys.executable, "-m", "loaders.pgn2parquet", str(SAMPLE), "--lake", str(lake)]
    subprocess.run([*command, "--progress", "never"], check=True, capture_output=True)
    return lake


def shared_sample_lake() -> Path:
    """The user's sample lake in the system's temporary folder, one per layout (`bgn-sample-<uid>-layout<N>`:
    a lake of another layout would ask for an upgrade), made private (0700). The system's temporary folder
    is everyone's: a name there that is not this user's own folder (a link, another user's) is not used,
    and a new temporary folder is made instead."""
    user = os.getuid() if hasattr(os, "getuid") else getpass.getuser()
    path = Path(tempfile.gettempdir()) / f"bgn-sample-{user}-layout{LAYOUT}"
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        found = path.lstat()
        if not stat.S_ISDIR(found.st_mode) or (hasattr(os, "getuid") and found.st_uid != os.getuid()):
            return Path(tempfile.mkdtemp(prefix="bgn-sample-"))
    return path


def lake_or_sample() -> str:
    """The lake a notebook reads: ``$CHESS_LAKE`` (a directory or s3://bucket/prefix), else the bundled sample
    (`sample_lake`); which one is printed."""
    named = os.environ.get("CHESS_LAKE")
    if named:
        print(f"lake: {named} (CHESS_LAKE)")
        return named
    lake = str(sample_lake())
    print(f"lake: the bundled sample, 438 lichess games of May 2025 ({lake}); CHESS_LAKE=DIR for yours")
    return lake
