"""The opening tree as a Graphviz graph: positions as nodes, moves as edges labelled with their share of the
games that stood in the move's position, pruned at a share of all games; rendered to SVG by `dot`, each node
a link to its board (an SVG of `chess.svg`, in a folder beside the graph).

Built from a book's rows (`warehouse.positions.book`, to any depth), from the starting position.
Transpositions join: a position reached by two move orders is one node. A node is labelled with its opening's
name where lichess's chess-openings table names the position (`warehouse.lake.openings`, by key), else with
the moves that reach it first (breadth first: a shortest line). Needs python-chess (`chess`).
"""

from __future__ import annotations

import contextlib
import math
import shutil
import subprocess
import sys
from collections import defaultdict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import chess
import chess.polyglot
import chess.svg
import pyarrow as pa

from warehouse.errors import OutputError
from warehouse.lake.location import Lake
from warehouse.lake.openings import opening_table
from warehouse.output import (
    LocalStaging,
    OutputFile,
    S3Staging,
    output_file,
    output_location,
    staged_directory,
)

SIGNED = 1 << 64


def signed(key: int) -> int:
    return key - SIGNED if key >= 1 << 63 else key


def min_games(min_share: float, games: int) -> int:
    """The least games a move kept at `min_share` of `games` games from the start has: the book's rows can
    be cut there (a book counts every game from the start at least once at its first position)."""
    return max(1, math.floor(min_share * games))


def opening_names() -> dict[int, str]:
    """The name of each position chess-openings names, by key: `ECO name`."""
    table = opening_table()
    return {
        key: f"{eco} {name}"
        for key, eco, name in zip(
            table["key"].to_pylist(), table["eco"].to_pylist(), table["name"].to_pylist(), strict=True
        )
    }


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def opening_dot(
    book: pa.Table, min_share: float = 0.01, boards: str = "boards"
) -> tuple[str, dict[int, str]]:
    """The `.dot` text of the tree of `book` (rows with their positions' totals) from the starting
    position, keeping the moves played in at least `min_share` of the games at the start; and the FEN of
    each node by key, for its board. Node `URL`s point at `boards/<key>.svg`."""
    moves: defaultdict[int, list[dict]] = defaultdict(list)
    for row in book.select(["key", "fen", "uci", "san", "games", "position_games"]).to_pylist():
        moves[row["key"]].append(row)
    start = chess.Board()
    root = signed(chess.polyglot.zobrist_hash(start))
    total = moves[root][0]["position_games"] if moves.get(root) else 0
    fens: dict[int, str] = {root: start.epd()}
    lines: dict[int, list[str]] = {root: []}
    edges: list[tuple[int, int, str, float]] = []
    frontier = deque([root])
    while frontier:
        key = frontier.popleft()
        for row in moves.get(key, []):
            if total == 0 or row["games"] / total < min_share:
                continue
            board = chess.Board(row["fen"])
            board.push_uci(row["uci"])
            child = signed(chess.polyglot.zobrist_hash(board))
            edges.append((key, child, row["san"], row["games"] / row["position_games"]))
            if child not in fens:
                fens[child] = board.epd()
                lines[child] = [*lines[key], row["san"]]
                frontier.append(child)
    names = opening_names()
    text = ["digraph openings {", "  rankdir=LR;", '  node [shape=box, fontname="Helvetica"];']
    for key, fen in sorted(fens.items()):
        label = "start" if key == root else names.get(key) or line_text(lines[key])
        attributes = f"label={quoted(label)}, URL={quoted(f'{boards}/{key}.svg')}, tooltip={quoted(fen)}"
        text.append(f"  {quoted(str(key))} [{attributes}];")
    for parent, child, san, share in sorted(edges):
        text.append(
            f"  {quoted(str(parent))} -> {quoted(str(child))} [label={quoted(f'{san} {share:.0%}')}];"
        )
    text.append("}")
    return "\n".join(text) + "\n", fens


def line_text(sans: list[str]) -> str:
    """Moves from the start as a line: `1. e4 e5 2. Nf3`."""
    return " ".join(f"{i // 2 + 1}. {san}" if i % 2 == 0 else san for i, san in enumerate(sans))


def write_graph(
    book: pa.Table, out: str | Path, min_share: float = 0.01, svg: bool = True, lake: Lake | None = None
) -> Path:
    """Writes `out` (.dot), the boards of its nodes in `<out stem>_boards/`, and with `svg` `out` rendered to
    SVG beside it (Graphviz's `dot`), as `graph_outputs` does. Returns the SVG's path (the .dot's without
    `svg`)."""
    with graph_outputs(out, svg, lake) as graph:
        graph.write(book, min_share)
    return graph.shown


class GraphOutputs:
    """The open outputs of one graph (see `graph_outputs`)."""

    def __init__(
        self, dot: OutputFile, svg: OutputFile | None, boards: str, staging: LocalStaging | S3Staging
    ):
        self.dot, self.svg, self.boards, self.staging = dot, svg, boards, staging
        self.shown = Path(self.svg.shown if self.svg else self.dot.shown)

    def write(self, book: pa.Table, min_share: float) -> None:
        """Writes the tree of `book` (see `opening_dot`): the boards, the .dot and the SVG."""
        text, fens = opening_dot(book, min_share, self.boards)
        for key, fen in fens.items():
            self.staging.write(f"{key}.svg", chess.svg.board(chess.Board(fen), size=240).encode())
        self.dot.write(text.encode())
        if self.svg is not None:
            self.svg.write(render_svg(text))


@contextmanager
def graph_outputs(out: str | Path, svg: bool = True, lake: Lake | None = None) -> Iterator[GraphOutputs]:
    """The outputs of a graph, opened for the block to write (`GraphOutputs.write`): `out` (.dot), the
    boards' folder `<out stem>_boards/` and with `svg` `<out stem>.svg` (where Graphviz's `dot` is missing,
    without it, saying so on stderr). Each is new, refused before the
    block runs if it exists (the folder: if it holds files) or is inside `lake` (the lake the book is built
    from), and appears whole when the block ends (`output`); a failure or Ctrl-C leaves none of them.

    :raises OutputError: for a refused output, one that cannot be written, or `dot` failing.
    """
    out = Path(out)
    boards = out.parent / f"{out.stem}_boards"
    if svg and shutil.which("dot") is None:
        # The graph is still worth its .dot: say how to get the SVG rather than fail.
        svg = False
        print(
            f"no Graphviz `dot` here: wrote {out} only; for SVG install Graphviz (apt-get install graphviz, "
            f"brew install graphviz) and run `dot -Tsvg {out} -o {out.with_suffix('.svg')}`",
            file=sys.stderr,
        )
    with contextlib.ExitStack() as files:
        dot_file = files.enter_context(output_file(out, lake))
        svg_file = files.enter_context(output_file(out.with_suffix(".svg"), lake)) if svg else None
        staging = staged_directory(*output_location(boards, lake), str(boards))
        graph = GraphOutputs(dot_file, svg_file, boards.name, staging)
        try:
            yield graph
            graph.staging.publish()
        except BaseException:
            graph.staging.discard()
            raise


def render_svg(dot: str) -> bytes:
    """The graph `dot` rendered by Graphviz's `dot`, as SVG."""
    try:
        return subprocess.run(["dot", "-Tsvg"], input=dot.encode(), check=True, capture_output=True).stdout
    except FileNotFoundError:
        raise OutputError("rendering needs Graphviz's `dot` (apt-get install graphviz)") from None
    except subprocess.CalledProcessError as e:
        raise OutputError(f"dot failed: {e.stderr.decode(errors='replace').strip()}") from None
