"""What a page shows, as its URL says it: the start position (`fen`), the moves played from it (`moves`, UCI),
the board's orientation (`flip`), the game filters (`queries.filters`) and the variant the views count.
One reading of each value: the shared parsers'; a value they refuse is an `InputError`, one line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import urlencode

import chess

from warehouse.errors import InputError
from warehouse.positions.line import line_moves
from warehouse.positions.search import position_key
from warehouse.queries import filters
from warehouse.queries.filters import GameFilters

# The query's names of the filters (the commands' option names, as `--min-rating` reads).
FILTER_FIELDS = {
    "speed": "type",
    "min_rating": "min_rating",
    "max_rating": "max_rating",
    "since": "since",
    "until": "until",
    "player": "player",
}


@dataclass(frozen=True)
class View:
    fen: str = chess.STARTING_FEN
    moves: tuple[str, ...] = ()
    flip: bool = False
    kept: GameFilters = field(default_factory=GameFilters)
    variant: str | None = None

    @classmethod
    def from_query(cls, query: Mapping[str, list[str]]) -> View:
        """The view a URL's parsed query names (`urllib.parse.parse_qs`; an empty value is no value).
        `line`, moves in SAN (a PGN move sequence), is played after `moves`.

        :raises InputError: for a FEN that is not a legal position, a move not legal where it is played,
            a filter value the shared parsers refuse."""
        value = {name: values[-1].strip() for name, values in query.items() if values and values[-1].strip()}
        fen = value.get("fen", chess.STARTING_FEN)
        view = cls(
            fen=fen,
            moves=tuple(value.get("moves", "").split()),
            flip=value.get("flip") == "1",
            kept=game_filters(value),
            variant=value.get("variant"),
        )
        board = view.board()  # checks the FEN and the moves
        if "line" in value:
            view = replace(view, moves=view.moves + line_moves(board, value["line"]))
        return view

    def board(self) -> chess.Board:
        """The position after the moves.

        :raises InputError: for an illegal FEN or move."""
        position_key(self.fen)  # the core's reading of a FEN, the one `explore` makes: its message
        try:
            board = chess.Board(self.fen)
        except ValueError as e:
            raise InputError(f"{self.fen!r} is not a FEN: {e}") from None
        for uci in self.moves:
            try:
                move = chess.Move.from_uci(uci)
            except ValueError:
                move = chess.Move.null()
            if not move or not board.is_legal(move):
                raise InputError(f"{uci!r} is not a legal move in {board.fen()}")
            board.push(move)
        return board

    def query(self, **changes: object) -> str:
        """The URL query of this view with `changes` (fields of `View`), values left at their default out."""
        view = replace(self, **changes)  # type: ignore[arg-type]
        pairs = {"fen": view.fen if view.fen != chess.STARTING_FEN else None, "moves": " ".join(view.moves)}
        pairs |= {"flip": "1" if view.flip else None, "variant": view.variant}
        pairs |= {key: getattr(view.kept, name) for key, name in FILTER_FIELDS.items()}
        return urlencode({k: str(v) for k, v in pairs.items() if v not in (None, "")})


def game_filters(value: Mapping[str, str]) -> GameFilters:
    """The filters of a query's values, read by the parsers the commands use."""
    parsers = {"speed": filters.speed, "since": filters.date, "until": filters.date, "player": filters.player}
    chosen: dict[str, object] = {}
    for key, name in FILTER_FIELDS.items():
        if key not in value:
            continue
        if key in parsers:
            chosen[name] = parsers[key](value[key])
        else:
            try:
                chosen[name] = int(value[key])
            except ValueError:
                raise InputError(f"{key} {value[key]!r} is not a whole number") from None
    return GameFilters(**chosen)  # type: ignore[arg-type]
