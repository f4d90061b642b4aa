"""The opening book python-chess counts, for the book's tests: each game the lake stores (`oracle`'s reading
and rejections) replayed with python-chess, `chess.polyglot.zobrist_hash` of each position before a move of
its first `max_ply` plies, the move played counted by the game's result; and per position the games that
stood in it (played a move from it, or ended in it before `max_ply`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import chess.polyglot
from oracle import (
    RESULTS,
    VARIANT_NAMES,
    game_time_control,
    player,
    read_games,
    rejection,
    result_text,
    speed,
)

SIGNED = 1 << 64
RESULT_COLUMNS = {"W": "white_wins", "D": "draws", "B": "black_wins"}


def signed(key: int) -> int:
    """A PolyGlot key as the lake stores it (int64, same bits)."""
    return key - SIGNED if key >= 1 << 63 else key


@dataclass
class Counted:
    """What the games of a (position, move), or of a position, add up to."""

    white_wins: int = 0
    draws: int = 0
    black_wins: int = 0
    games: int = 0
    ratings: list[float] = field(default_factory=list)
    # (FEN without counters, SAN) of the move in its position, as python-chess writes them.
    names: set[tuple[str, str]] = field(default_factory=set)
    # The games' ply at which the position stood.
    plies: set[int] = field(default_factory=set)

    def add(self, row: dict[str, Any], ply: int) -> None:
        self.games += 1
        if row["result"] in RESULT_COLUMNS:
            setattr(self, RESULT_COLUMNS[row["result"]], getattr(self, RESULT_COLUMNS[row["result"]]) + 1)
        elos = [p["elo"] for p in row["players"]]
        if None not in elos:
            self.ratings.append(sum(elos) / 2)
        self.plies.add(ply)

    def counts(self) -> dict[str, int]:
        return {
            "white_wins": self.white_wins,
            "draws": self.draws,
            "black_wins": self.black_wins,
            "games": self.games,
        }

    def mean_rating(self) -> float | None:
        return sum(self.ratings) / len(self.ratings) if self.ratings else None


@dataclass
class Book:
    """(key, uci) → its counts; key → its position's."""

    moves: defaultdict[tuple[int, str], Counted] = field(default_factory=lambda: defaultdict(Counted))
    positions: defaultdict[int, Counted] = field(default_factory=lambda: defaultdict(Counted))

    def kept(self, min_games: int) -> dict[tuple[int, str], Counted]:
        """The rows a book keeps at `min_games`: moves, and their positions, of at least as many games."""
        return {
            (key, uci): counted
            for (key, uci), counted in self.moves.items()
            if counted.games >= min_games and self.positions[key].games >= min_games
        }


@dataclass(frozen=True)
class StoredGame:
    """A game the lake stores: python-chess's reading of it, and the fields of its row a book reads, as
    `oracle.game_row` derives them (`result`, `players`' Elos, `variant`, `type`)."""

    row: dict[str, Any]
    game: chess.pgn.Game


def stored_games(paths: Iterable[Path]) -> list[StoredGame]:
    """The games of the PGN files `paths` the lake stores, in order."""
    return [StoredGame(book_row(g), g) for path in paths for g in read_games(path) if rejection(g) is None]


def book_row(game: Any) -> dict[str, Any]:
    """The fields of `oracle.game_row` that a book reads, of an `oracle.read_games` game: not its moves'
    fields, the costly part of a row."""
    tags = dict(game.tags)
    board = game.board()
    return {
        "result": RESULTS.get(result_text(game, tags), "*"),
        "players": [player(tags, "White"), player(tags, "Black")],
        "variant": VARIANT_NAMES.get(type(board)) or ("Chess960" if board.chess960 else "Standard"),
        "type": speed(game_time_control(tags)),
    }


def expected_book(
    games: Iterable[StoredGame], max_ply: int, only: Callable[[StoredGame], bool] | None = None
) -> Book:
    """The book of the standard games of `games` (those `only` keeps) to `max_ply`."""
    book = Book()
    for stored in games:
        row = stored.row
        if row["variant"] != "Standard" or (only is not None and not only(stored)):
            continue
        board = stored.game.board()
        moves = list(stored.game.mainline_moves())
        for ply, move in enumerate(moves[:max_ply]):
            key = signed(chess.polyglot.zobrist_hash(board))
            counted = book.moves[key, move.uci()]
            counted.add(row, ply)
            if not counted.names:  # a function of the position and the move: named once
                counted.names.add((board.epd(), board.san(move)))
            book.positions[key].add(row, ply)
            board.push(move)
        if len(moves) < max_ply:
            book.positions[signed(chess.polyglot.zobrist_hash(board))].add(row, len(moves))
    return book
