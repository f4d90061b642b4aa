"""The chess-openings table exported: the opening code map (code, ECO, name) and an ECO book (ECO, name,
FEN, moves), as the lake's `games.opening_code` / `opening_eco` / `opening_name` use them
(`warehouse.lake.openings`). The FENs come from python-chess (`chess`)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import chess.pgn

from warehouse.lake.openings import opening_lines
from warehouse.output import output_file


def code_map() -> list[dict[str, str]]:
    """One row per opening code, in the table's order: `code`, `eco`, `name`."""
    seen: dict[str, dict[str, str]] = {}
    for line in opening_lines():
        seen.setdefault(line["code"], {"code": line["code"], "eco": line["eco"], "name": line["name"]})
    return list(seen.values())


def eco_book() -> list[dict[str, str]]:
    """One row per line of the table: `eco`, `name`, `code`, `fen` (the position its moves reach), `pgn`."""
    rows = []
    for line in opening_lines():
        game = chess.pgn.read_game(io.StringIO(line["pgn"]))
        if game is None:
            raise ValueError(f"chess-openings: unreadable line {line['pgn']!r}")
        fen = game.end().board().fen()
        rows.append(
            {"eco": line["eco"], "name": line["name"], "code": line["code"], "fen": fen, "pgn": line["pgn"]}
        )
    return rows


def write_tsv(rows: list[dict[str, str]], out: Path) -> None:
    """Writes `rows` as the new TSV file `out`, which appears whole (`output.output_file`).

    :raises OutputError: when `out` exists, or cannot be written."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    with output_file(out, None) as file:
        file.write(text.getvalue().encode())
