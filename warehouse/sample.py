"""The bundled lichess sample as a lake, for notebooks and examples; the lake a notebook reads."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

# tests/data's sample, through a symlink that the wheel carries as a file (pyproject.toml: include).
SAMPLE = (Path(__file__).parent / "library" / "lichess_2025-05_sample.pgn.zst").resolve()


def sample_lake(lake: Path | None = None) -> Path:
    """Loads the bundled sample (438 lichess games of May 2025) into `lake`, a new temporary folder when
    None, with the loader's command line; returns the lake's path."""
    lake = lake or Path(tempfile.mkdtemp(prefix="bgn-sample-"))
    command = [sys.executable, "-m", "loaders.pgn2parquet", str(SAMPLE), "--lake", str(lake)]
    subprocess.run([*command, "--progress", "never"], check=True, capture_output=True)
    return lake


def lake_or_sample() -> str:
    """The lake a notebook reads: ``$CHESS_LAKE`` (a directory or s3://bucket/prefix), else the bundled sample
    loaded into a temporary lake (`sample_lake`); which one is printed."""
    named = os.environ.get("CHESS_LAKE")
    if named:
        print(f"lake: {named} (CHESS_LAKE)")
        return named
    lake = str(sample_lake())
    print(f"lake: the bundled sample, 438 lichess games of May 2025 ({lake}); CHESS_LAKE=DIR for yours")
    return lake
