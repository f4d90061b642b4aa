"""FENs, and python-chess's key of each: the oracle of tests/test_fen_keys.py.

`real_fens` spells the positions of real games (tests/data, and ../shared/corpora when present) as
python-chess writes them: X-FEN and Shredder-FEN castling, the en-passant square after every double step
and only where a legal capture is. `near_misses` derives from a FEN the ones users write by hand or by
mistake: other whitespace, castling rights the position cannot have or in another spelling, any en-passant
square, another side to move, edited boards (two kings, a pawn on the back rank, the side not to move in
check, a rank of 7 squares), missing and extra fields; `GARBAGE` is no FEN at all. `python_chess_key` is
python-chess's key of a FEN, None where it reads no legal position.
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
from oracle import read_bytes
from support import CORPORA, DATA

# What the project forgives a position, as python-chess's `Board.status()` names it: castling rights or an
# en-passant square it cannot have (dropped), more material than a game reaches, checks no move gives.
FORGIVEN = (
    chess.STATUS_BAD_CASTLING_RIGHTS
    | chess.STATUS_INVALID_EP_SQUARE
    | chess.STATUS_TOO_MANY_WHITE_PAWNS
    | chess.STATUS_TOO_MANY_BLACK_PAWNS
    | chess.STATUS_TOO_MANY_WHITE_PIECES
    | chess.STATUS_TOO_MANY_BLACK_PIECES
    | chess.STATUS_TOO_MANY_CHECKERS
    | chess.STATUS_IMPOSSIBLE_CHECK
)
SIGNED = 1 << 64
# Whitespace python-chess splits a FEN at (str.split): ASCII's, Unicode's, the separators U+001C-U+001F.
SPACES = [" ", "  ", "\t", " \t\n ", "\r\n", "\u3000", "\xa0", "\x1c", "\u2028", "\x0b"]
GARBAGE = [
    "",
    " \t ",
    "hello",
    "-",
    "w",
    "8/8/8/8/8/8/8/8 w - - 0 1",
    "8/8/8/8/8/8/8/8",
    "k7/8/8/8/8/8/8/7K",
    "k7/8/8/8/8/8/8/7K w",
    "k7/8/8/8/8/8/8/6K w - - 0 1",
    "k7/8/8/8/8/8/8/8K w - - 0 1",
    "k7/8/8/8/8/8/8/7K w - - 0 1 extra",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/8 w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR_w_KQkq_-_0_1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[Qq] w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+3 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - +1+1 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1;",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\x00",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR\u200bw KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 0",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1",
    "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/0/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n1. e4",
    "RNBQKBNR/PPPPPPPP/8/8/8/8/pppppppp/rnbqkbnr w KQkq - 0 1",
    '[FEN "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"]',
    "' or 1=1 --",
]


def signed(key: int) -> int:
    return key - SIGNED if key >= 1 << 63 else key


def python_chess_key(fen: str) -> int | None:
    """python-chess's PolyGlot key (signed) of `fen`'s position, read as a Chess960 board, which keeps
    every castling right a standard board keeps and those of Chess960 positions: None where it reads no
    FEN, or a position the project refuses too (no king or two of a colour, a pawn on the back rank, the
    side not to move in check). An en-passant square no double step left is dropped before the key is
    taken, as the project does (python-chess's `zobrist_hash` would hash the raw square)."""
    try:
        board = chess.Board(fen, chess960=True)
    except ValueError:
        return None
    status = board.status()
    if status & ~FORGIVEN:
        return None
    if status & chess.STATUS_INVALID_EP_SQUARE:
        board.ep_square = None
    return signed(chess.polyglot.zobrist_hash(board))


def python_chess_only(fen: str) -> bool:
    """Whether `fen` is of the FENs python-chess reads and the project refuses: crazyhouse's promoted
    mark `~`, a letter that is a piece only once Python lower-cases it (the Kelvin sign), counters that
    Python's int() reads and that are not ASCII digits (`+1`, `1_0`, `-0`, `٣`)."""
    fields = fen.split()
    counters = fields[4:6]
    return (
        "~" in fields[0]
        or not fields[0].isascii()
        or any(not (c.isascii() and c.isdigit()) for c in counters)
    )


class _Builder(chess.pgn.GameBuilder):
    """python-chess's game builder, quiet: a game it cannot read has errors, and is left out."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


def game_files() -> list[Path]:
    """The PGN files of tests/data and, when present, ../shared/corpora."""
    roots = [DATA] + ([CORPORA] if CORPORA.exists() else [])
    return sorted(p for root in roots for p in root.rglob("*") if p.name.endswith((".pgn", ".pgn.zst")))


def real_fens(every: int) -> set[str]:
    """The FENs of the positions of real games in each of python-chess's spellings: every position of the
    games of tests/data, of every Chess960 game (Shredder-FEN's own games) and of every `every`-th game of
    each other file of the corpora."""
    fens: set[str] = set()
    for path in game_files():
        handle = io.StringIO(read_bytes(path).decode("utf-8", errors="replace"))
        n = 0
        while True:
            start = handle.tell()
            headers = chess.pgn.read_headers(handle)
            if headers is None:
                break
            n += 1
            if n % every == 0 or headers.is_chess960() or path.is_relative_to(DATA):
                end = handle.tell()
                handle.seek(start)
                fens |= game_fens(chess.pgn.read_game(handle, Visitor=_Builder))
                handle.seek(end)
    return fens


def game_fens(game: chess.pgn.Game | None) -> set[str]:
    """The FENs of the positions of a game of chess (none for a variant's, or a game python-chess
    cannot read)."""
    fens: set[str] = set()
    if game is None or game.errors:
        return fens
    try:
        board = game.board()
    except ValueError:
        return fens
    if board.uci_variant != "chess":
        return fens
    for node in [game, *game.mainline()]:
        if node is not game:
            board.push(node.move)
        fens |= {board.fen(), board.fen(en_passant="fen"), board.shredder_fen(en_passant="fen")}
    return fens


def near_misses(fen: str, rng: random.Random) -> Iterator[str]:
    """FENs near `fen` (a valid one): see the module's doc."""
    fields = fen.split()
    board, turn, castling, ep, halfmove, fullmove = fields

    def joined(*parts: str) -> str:
        return " ".join(parts)

    yield rng.choice(SPACES) + rng.choice(SPACES).join(fields) + rng.choice(SPACES)
    letters = "".join(
        rng.sample("KQABCDEFGH", rng.randint(0, 2)) + rng.sample("kqabcdefgh", rng.randint(0, 2))
    )
    for rights in ["KQkq", "HAha", "AHah", "Kk", "Qq", "-", letters or "-", "kqKQ", "KQkqK", "KQA", "x"]:
        yield joined(board, turn, rights, ep, halfmove, fullmove)
    square = chess.SQUARE_NAMES[rng.randrange(64)]
    for passed in [square, "-", f"{square[0]}{'6' if turn == 'w' else '3'}", "e9", "E3", "e"]:
        yield joined(board, turn, castling, passed, halfmove, fullmove)
    for side in ["b" if turn == "w" else "w", "W", "x"]:
        yield joined(board, side, castling, ep, halfmove, fullmove)
    for counters in [
        ["-1", "1"],
        ["+1", "1"],
        ["1_0", "1"],
        ["0", "٣"],
        ["x", "1"],
        ["0", "1.5"],
        ["0", "0"],
    ]:
        yield joined(board, turn, castling, ep, *counters)
    for n in range(1, 6):
        yield joined(*fields[:n])
    yield joined(*fields, "0")
    yield joined(edited_board(board, rng), turn, castling, ep, halfmove, fullmove)
    yield joined(placed_board(board, rng), turn, castling, ep, halfmove, fullmove)


def edited_board(board: str, rng: random.Random) -> str:
    """The board's text with one character deleted, inserted, doubled or replaced."""
    at = rng.randrange(len(board))
    char = rng.choice("pnbrqkPNBRQK12345678/~x ")
    return rng.choice(
        [
            board[:at] + board[at + 1 :],
            board[:at] + char + board[at:],
            board[:at] + board[at] + board[at:],
            board[:at] + char + board[at + 1 :],
        ]
    )


def placed_board(board: str, rng: random.Random) -> str:
    """The board with one square's content changed to a random piece or emptied, as python-chess writes
    it: a legal board or one with two kings, none, a pawn on the back rank, a king in check…"""
    placed = chess.BaseBoard(board)
    piece = rng.choice([None, *(chess.Piece.from_symbol(s) for s in "pnbrqkPNBRQK")])
    placed.set_piece_at(rng.randrange(64), piece)
    return placed.board_fen()
