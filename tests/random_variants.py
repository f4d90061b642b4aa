"""Seeded random legal games of lichess's variants, played and written as PGN by python-chess.

Play is steered toward what each variant adds to chess, so that a few hundred games cover it: drops and
promotions (Crazyhouse), captures and their explosions (Atomic), checks up to the third (Three-check),
the king's run to the hill or to the eighth rank (King of the Hill, Racing Kings), the horde's pawns
leaving the first rank (Horde), forced captures and promotions (Antichess). Every eighth game starts from
a position reached by random play, written as a FEN (pockets, promoted pieces, check counters).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import chess
import chess.pgn
import chess.variant

# lichess's name of each variant (the `Variant` tag python-chess writes) and its board.
BOARDS: dict[str, type[chess.Board]] = {
    "Crazyhouse": chess.variant.CrazyhouseBoard,
    "Atomic": chess.variant.AtomicBoard,
    "Antichess": chess.variant.AntichessBoard,
    "Horde": chess.variant.HordeBoard,
    "King of the Hill": chess.variant.KingOfTheHillBoard,
    "Racing Kings": chess.variant.RacingKingsBoard,
    "Three-check": chess.variant.ThreeCheckBoard,
}
MAX_PLIES = 150
STEER = 0.7  # how often a move is drawn among the steered ones, when there are some
FEN_START_EVERY = 8
CENTER = chess.SquareSet(chess.BB_CENTER)

Steer = Callable[[chess.Board, chess.Move], bool]


def _toward_center(board: chess.Board, move: chess.Move) -> bool:
    return board.piece_type_at(move.from_square) == chess.KING and (
        move.to_square in CENTER
        or chess.square_distance(move.to_square, chess.E4) < chess.square_distance(move.from_square, chess.E4)
    )


def _king_forward(board: chess.Board, move: chess.Move) -> bool:
    piece_type = board.piece_type_at(move.from_square)
    return piece_type == chess.KING and chess.square_rank(move.to_square) > chess.square_rank(
        move.from_square
    )


def _horde_pawn(board: chess.Board, move: chess.Move) -> bool:
    first_rank = chess.square_rank(move.from_square) == 0
    return board.turn == chess.WHITE and board.piece_type_at(move.from_square) == chess.PAWN and first_rank


STEERS: dict[str, Steer] = {
    "Crazyhouse": lambda board, move: bool(move.drop or move.promotion or board.is_capture(move)),
    "Atomic": lambda board, move: board.is_capture(move) or bool(move.promotion),
    "Antichess": lambda board, move: (
        bool(move.promotion) or board.piece_type_at(move.from_square) == chess.PAWN
    ),
    "Horde": lambda board, move: _horde_pawn(board, move) or bool(move.promotion) or board.is_capture(move),
    "King of the Hill": _toward_center,
    "Racing Kings": _king_forward,
    "Three-check": lambda board, move: board.gives_check(move),
}


def play(board: chess.Board, steer: Steer, rng: random.Random, plies: int) -> None:
    """Plays up to `plies` random legal moves on `board`, steered, until the game is over."""
    for _ in range(plies):
        if board.is_game_over():
            return
        moves = list(board.legal_moves)
        steered = [move for move in moves if steer(board, move)]
        board.push(rng.choice(steered if steered and rng.random() < STEER else moves))


def random_games(variant: str, count: int, seed: int) -> list[chess.pgn.Game]:
    """`count` random games of `variant` (a lichess name), the same ones for the same seed."""
    rng = random.Random(f"{variant}/{seed}")
    board_class, steer = BOARDS[variant], STEERS[variant]
    games = []
    for n in range(count):
        board = board_class()
        if n % FEN_START_EVERY == FEN_START_EVERY - 1:
            play(board, steer, rng, rng.randrange(4, 30))
            if board.is_game_over():
                board = board_class()
            board = board_class(board.fen())  # the game starts there: written with a FEN tag
        play(board, steer, rng, MAX_PLIES)
        game = chess.pgn.Game.from_board(board)
        game.headers["Event"] = f"random {variant} {n}"
        game.headers["Result"] = board.result(claim_draw=False)
        games.append(game)
    return games


def write_pgn(path: Path, games: list[chess.pgn.Game]) -> Path:
    path.write_text("".join(f"{game}\n\n" for game in games), encoding="utf-8")
    return path
