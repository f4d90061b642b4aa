"""Positions as python-chess plays them: each game's keys, FENs and moves, and the games reaching a key."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import support
from support import CORPORA, SAMPLE

CHESS960 = CORPORA / "engine" / "TCEC_Season_21_-_Frc4_Final_League.pgn"


SIGNED = 1 << 64
START = chess.STARTING_FEN


def signed(key: int) -> int:
    return key - SIGNED if key >= 1 << 63 else key


@dataclass
class Replayed:
    """One game as python-chess plays it: the key and FEN of each position, the final one last."""

    source: str
    keys: list[int]
    fens: list[str]
    ucis: list[str]


def read_pgn(path: Path) -> Iterator[chess.pgn.Game]:
    text = support.sample_pgn().decode() if path == SAMPLE else path.read_text(encoding="utf-8")
    handle = io.StringIO(text)
    while (game := chess.pgn.read_game(handle)) is not None:
        yield game


def replay(path: Path) -> list[Replayed]:
    games = []
    for game in read_pgn(path):
        board = game.board()
        keys, fens = [signed(chess.polyglot.zobrist_hash(board))], [board.fen()]
        ucis = [move.uci() for move in game.mainline_moves()]
        for move in game.mainline_moves():
            board.push(move)
            keys.append(signed(chess.polyglot.zobrist_hash(board)))
            fens.append(board.fen())
        games.append(Replayed(str(path), keys, fens, ucis))
    return games


def reaching(games: list[tuple[dict, Replayed]], key: int, max_ply: int | None = None) -> dict[str, int]:
    """game_id → the first ply index whose position (before the move; the final as n_plies) has `key`."""
    found = {}
    for row, game in games:
        plies = [i for i, k in enumerate(game.keys) if k == key]
        if plies and (max_ply is None or plies[0] < max_ply or plies[0] == len(game.keys) - 1):
            found[row["game_id"]] = plies[0]
    return found


def probe_fens(games: list[tuple[dict, Replayed]]) -> list[str]:
    """Positions at several depths, inside and beyond the stored plies, and final ones."""
    standard = [g for row, g in games if row["variant"] == "Standard" and len(g.keys) > 60]
    fens = [START, standard[0].fens[3], standard[1].fens[9], standard[2].fens[10], standard[3].fens[15]]
    fens += [standard[4].fens[40], standard[5].fens[-1], standard[6].fens[-2]]
    chess960 = [g for row, g in games if row["variant"] == "Chess960"]
    return fens + ([chess960[0].fens[0], chess960[1].fens[30]] if chess960 else [])


def paired_games(lake: Path, inputs: list[Path]) -> list[tuple[dict, Replayed]]:
    """Each game of the lake beside python-chess's replay of it (same file, same order)."""
    rows = support.read_games(lake)
    pairs = []
    for path in inputs:
        mine = sorted((r for r in rows if r["source_file"] == str(path)), key=lambda r: r["source_offset"])
        theirs = replay(path)
        assert len(mine) == len(theirs), path
        for row, game in zip(mine, theirs, strict=True):
            assert row["n_plies"] == len(game.keys) - 1
            pairs.append((row, game))
    return pairs
