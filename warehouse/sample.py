"""The bundled lichess sample as a lake, for notebooks and examples."""

from __future__ import annotations

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
