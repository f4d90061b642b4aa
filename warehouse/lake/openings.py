"""The chess-openings table (lichess-org/chess-openings, CC0; warehouse/data/chess-openings/), keyed by
position.

Each line names the position its moves reach: `eco`, `name`, and `code`, a stable 6-character code, the
ECO then the 3-digit ordinal (from 001) of the name among the distinct names of that ECO, in the table's
order. The positions' PolyGlot keys come from the core reading the lines as PGN, as it reads games. Where
several lines reach one position (transpositions), the first line in the table's order names it.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path

import numpy as np
import pyarrow as pa

from warehouse import _core
from warehouse.scratch import ScratchFile

OPENINGS_DIR = Path(__file__).resolve().parent.parent / "data" / "chess-openings"


def opening_lines() -> list[dict[str, str]]:
    """The table's lines in order (a.tsv to e.tsv), each with `eco`, `name`, `pgn` and its `code`."""
    lines: list[dict[str, str]] = []
    ordinals: dict[tuple[str, str], int] = {}
    per_eco: dict[str, int] = {}
    for path in sorted(OPENINGS_DIR.glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as f:
            for line in csv.DictReader(f, delimiter="\t"):
                eco, name = line["eco"], line["name"]
                if (eco, name) not in ordinals:
                    per_eco[eco] = ordinals[eco, name] = per_eco.get(eco, 0) + 1
                lines.append({**line, "code": f"{eco}{ordinals[eco, name]:03d}"})
    return lines


@functools.cache
def opening_table() -> pa.Table:
    """One row per named position, sorted by `key` (int64): `key`, `eco`, `name`, `code`, `pgn`."""
    lines = opening_lines()
    text = "".join(f'[Round "{i}"]\n\n{line["pgn"]} *\n\n' for i, line in enumerate(lines))
    pgn = ScratchFile("openings.pgn")
    try:
        pgn.out.write(text.encode())
        pgn.out.close()
        keys = np.zeros(len(lines), np.int64)
        for partition, array, rejects in _core.PgnReader(pgn.path):
            if rejects:
                raise ValueError(f"chess-openings: unreadable line: {rejects[0][3]}")
            if partition is None:
                continue
            batch = pa.record_batch(array)
            rows = np.asarray(batch.column("round").to_numpy(zero_copy_only=False), dtype=np.int64)
            keys[rows] = pa.array(_core.position_keys(batch, 0)[1]).to_numpy()
    finally:
        # Every command reads the table first: a file of it may not outlive the process.
        pgn.discard()
    first = np.unique(keys, return_index=True)[1]  # sorted by key; the first line of each key
    columns = {name: [lines[i][name] for i in first] for name in ("eco", "name", "code", "pgn")}
    return pa.table({"key": pa.array(keys[first], pa.int64()), **columns})
