"""Position keys (`_core.position_keys`, `_core.find_position`) against `chess.polyglot.zobrist_hash`.

Every PGN file of tests/data and the shared corpora (lichess, tournament, engine games with Chess960
starts, the edge suites) is read by the core; python-chess then replays each game from its `start_fen`
(Chess960 when `variant` says so) by its own move generation, finding each stored move among its legal
moves, and hashes every position: the keys must be the same, ply for ply, and the final one.
"""

from __future__ import annotations

from pathlib import Path

import chess
import chess.polyglot
import pyarrow as pa
import pytest
from corpora import CASES
from position_oracle import signed

from warehouse import _core

ALL_PLIES = 1 << 20


KEYED_VARIANTS = ("Standard", "Chess960")


def legal_move(board: chess.Board, move: dict[str, str | None]) -> chess.Move:
    """python-chess's legal move that the stored move describes (castling by its side: the king's
    squares in the lake, king-takes-rook in python-chess's Chess960)."""
    castle = move["castle"]
    for m in board.legal_moves:
        if castle is not None:
            if board.is_castling(m) and board.is_kingside_castling(m) == (castle in "Kk"):
                return m
        elif chess.square_name(m.from_square) == move["f"] and chess.square_name(m.to_square) == move["t"]:
            promote = move["promote"]
            if (m.promotion is None) == (promote is None) and (
                promote is None or chess.piece_symbol(m.promotion or 0) == promote.lower()
            ):
                return m
    raise AssertionError(f"no legal move for {move} in {board.fen()}")


def expected_keys(game: dict) -> tuple[list[int], int]:
    """python-chess's keys of the positions before each move of `game` (a lake row), and the last."""
    chess960 = game["variant"] == "Chess960"
    board = chess.Board(game["start_fen"] or chess.STARTING_FEN, chess960=chess960)
    keys = []
    for move in game["moves"]:
        keys.append(signed(chess.polyglot.zobrist_hash(board)))
        board.push(legal_move(board, move))
    return keys, signed(chess.polyglot.zobrist_hash(board))


@pytest.mark.parametrize("case_id", list(CASES))
def test_keys_equal_python_chess(case_id: str) -> None:
    games = 0
    try:
        reader = _core.PgnReader(str(CASES[case_id]))
    except _core.PgnInputError as e:
        pytest.skip(f"{case_id}: not PGN ({e})")
    for partition, array, _ in reader:
        if partition is None:
            continue
        batch = pa.record_batch(array)
        plies, finals = (pa.array(a) for a in _core.position_keys(batch, ALL_PLIES))
        rows = batch.select(["game_id", "variant", "start_fen", "moves"]).to_pylist()
        lengths = [len(r["moves"]) for r in rows]
        assert len(plies) == sum(lengths)
        at = 0
        for row, final, n in zip(rows, finals.to_pylist(), lengths, strict=True):
            if row["variant"] not in KEYED_VARIANTS:
                # PolyGlot keys no other variant's positions (pockets, checks left): no keys at all.
                assert plies[at : at + n].null_count == n and final is None, row["game_id"]
                at += n
                games += 1
                continue
            want, want_final = expected_keys(row)
            assert plies[at : at + n].to_pylist() == want, row["game_id"]
            assert final == want_final, row["game_id"]
            at += n
            games += 1
    if games == 0:
        pytest.skip(f"{case_id}: no game the lake keeps")


def test_keyed_plies_and_find_position(sample: Path) -> None:
    """Keys stop after `keyed_plies`; `find_position` finds the first ply of a key from a given ply on,
    the final position as ply `n_plies`."""
    array = next(a for p, a, _ in _core.PgnReader(str(sample)) if p is not None)
    batch = pa.record_batch(array).slice(3, 20)  # a sliced batch keeps its alignment
    plies = pa.array(_core.position_keys(batch, 6)[0])
    lengths = [len(m) for m in batch.column("moves").to_pylist()]
    at = 0
    for n in lengths:
        assert plies[at : at + n].null_count == max(n - 6, 0)
        at += n
    rows = batch.to_pylist()
    keys, final = expected_keys(rows[0])
    found = pa.array(_core.find_position(batch, keys[4], 0)).to_pylist()
    assert found[0] == 4
    for row, ply in zip(rows, found, strict=True):
        row_keys, row_final = expected_keys(row)
        every = [*row_keys, row_final]
        assert ply == (every.index(keys[4]) if keys[4] in every else None)
    assert pa.array(_core.find_position(batch, final, 0)).to_pylist()[0] == len(rows[0]["moves"])
    later = [*keys, final][1:]
    want = later.index(keys[0]) + 1 if keys[0] in later else None
    assert pa.array(_core.find_position(batch, keys[0], 1)).to_pylist()[0] == want
