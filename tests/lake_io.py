"""Run the loader into a lake and read back what it wrote, for tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds

REPO = Path(__file__).parents[1]


def run_loader(inputs: list[Path], lake: Path, *extra_args: str) -> subprocess.CompletedProcess[str]:
    """`python -m loaders.pgn2parquet INPUT... --lake LAKE [EXTRA_ARGS]` from the repository's root."""
    command = [
        sys.executable,
        "-m",
        "loaders.pgn2parquet",
        *map(str, inputs),
        "--lake",
        str(lake),
        *extra_args,
    ]
    return subprocess.run(command, cwd=REPO, check=False, capture_output=True, text=True)


def read_games(lake: Path) -> list[dict[str, Any]]:
    """Every row of `lake/games/`, hive partition columns (type, year, month) included."""
    games = lake / "games"
    if not games.is_dir():
        return []
    return ds.dataset(games, format="parquet", partitioning="hive").to_table().to_pylist()


def read_rejects(lake: Path) -> list[dict[str, Any]]:
    """Every record of `lake/rejects/*.jsonl`."""
    return [
        json.loads(line)
        for path in sorted((lake / "rejects").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
