"""A position given as moves: a PGN move sequence (`1. e4 c5 2. Nf3`) played from a FEN, as the explorer
page's move box, `bgn explore --line` and `bgn search --line` read it (python-chess's PGN reading, so any
SAN it writes or reads: check marks, `0-0`, move numbers, comments, a result at the end)."""

from __future__ import annotations

import io

import chess
import chess.pgn

from warehouse.errors import InputError
from warehouse.positions.search import position_key


class _Quiet(chess.pgn.GameBuilder):
    """python-chess's game builder, its errors kept on the game only: not logged to stderr, where a
    command's error is its one line."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


def line_moves(board: chess.Board, line: str) -> tuple[str, ...]:
    """The UCI of the moves of `line`, a PGN move sequence (`1. e4 c5 2. Nf3`) played from `board`.

    :raises InputError: for a sequence python-chess cannot play from `board` (the first error, one line)."""
    variant = '[Variant "Chess960"]\n' if board.chess960 else ""
    game = chess.pgn.read_game(io.StringIO(f'[FEN "{board.fen()}"]\n{variant}\n{line} *\n'), Visitor=_Quiet)
    if game is None or game.errors:
        reason = str(game.errors[0]) if game is not None and game.errors else "no moves"
        raise InputError(f"{line!r} is not a move sequence from this position: {reason.splitlines()[0]}")
    return tuple(move.uci() for move in game.mainline_moves())


def position_after(fen: str, line: str, chess960: bool = False) -> str:
    """The FEN of the position after `line`'s moves from `fen` (its castling rights read as Chess960's with
    `chess960`).

    :raises InputError: for a FEN that is not a legal position (the core's reading, as `explore` and
        `search` say it), or a line that cannot be played from it."""
    position_key(fen, chess960)
    board = chess.Board(fen, chess960=chess960)
    for uci in line_moves(board, line):
        board.push_uci(uci)
    return board.fen()
