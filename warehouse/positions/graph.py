"""The opening tree as a Graphviz graph: positions as nodes, moves as edges labelled with their share of
the games that reached the move's position, pruned at a share of all games; rendered to SVG by `dot`, each
node a link to its board (an SVG of `chess.svg`, in a folder beside the graph).

Built from a book (`warehouse.positions.book`): positions of the stored plies, from the starting position.
Transpositions join: a position reached by two move orders is one node. Needs python-chess (`chess`).
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from pathlib import Path

import chess
import chess.polyglot
import chess.svg
import pyarrow as pa

from warehouse.errors import OutputError

SIGNED = 1 << 64


def signed(key: int) -> int:
    return key - SIGNED if key >= 1 << 63 else key


def opening_dot(
    book: pa.Table, min_share: float = 0.01, boards: str = "boards"
) -> tuple[str, dict[int, str]]:
    """The `.dot` text of the tree of `book` from the starting position, keeping the moves played in at
    least `min_share` of the games at the start; and the FEN of each node by key, for its board. Node
    `URL`s point at `boards/<key>.svg`."""
    moves: defaultdict[int, list[dict]] = defaultdict(list)
    for row in book.select(["key", "fen", "uci", "san", "games"]).to_pylist():
        moves[row["key"]].append(row)
    root = signed(chess.polyglot.zobrist_hash(chess.Board()))
    total = sum(row["games"] for row in moves.get(root, []))
    fens: dict[int, str] = {root: chess.Board().fen()}
    edges: list[tuple[int, int, str, float]] = []
    frontier = [root]
    while frontier:
        key = frontier.pop()
        here = sum(row["games"] for row in moves.get(key, []))
        for row in moves.get(key, []):
            if total == 0 or row["games"] / total < min_share:
                continue
            board = chess.Board(row["fen"])
            board.push(chess.Move.from_uci(row["uci"]))
            child = signed(chess.polyglot.zobrist_hash(board))
            edges.append((key, child, row["san"], row["games"] / here))
            if child not in fens:
                fens[child] = board.fen()
                frontier.append(child)
    lines = ["digraph openings {", "  rankdir=LR;", '  node [shape=box, fontname="Helvetica"];']
    for key, fen in sorted(fens.items()):
        label = "start" if key == root else fen.split()[0]
        lines.append(f'  "{key}" [label="{label}", URL="{boards}/{key}.svg", tooltip="{fen}"];')
    for parent, child, san, share in sorted(edges):
        lines.append(f'  "{parent}" -> "{child}" [label="{san} {share:.0%}"];')
    lines.append("}")
    return "\n".join(lines) + "\n", fens


def write_graph(book: pa.Table, out: str | Path, min_share: float = 0.01, svg: bool = True) -> Path:
    """Writes `out` (.dot), the boards of its nodes in `<out stem>_boards/`, and with `svg` `out` rendered to
    SVG beside it (Graphviz's `dot`). Returns the SVG's path (the .dot's without `svg`)."""
    out = Path(out)
    boards = out.parent / f"{out.stem}_boards"
    text, fens = opening_dot(book, min_share, boards.name)
    boards.mkdir(exist_ok=True)
    for key, fen in fens.items():
        (boards / f"{key}.svg").write_text(chess.svg.board(chess.Board(fen), size=240), encoding="utf-8")
    out.write_text(text, encoding="utf-8")
    if not svg:
        return out
    rendered = out.with_suffix(".svg")
    try:
        subprocess.run(["dot", "-Tsvg", str(out), "-o", str(rendered)], check=True, capture_output=True)
    except FileNotFoundError:
        raise OutputError("rendering needs Graphviz's `dot` (apt-get install graphviz)") from None
    except subprocess.CalledProcessError as e:
        raise OutputError(f"dot failed: {e.stderr.decode(errors='replace').strip()}") from None
    return rendered
