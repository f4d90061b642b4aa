"""`san` against python-chess on real games: the lake stores a move's SAN only where the source wrote
something else than the SAN the position gives, and `_core.fill_san` gives that SAN back, on every mainline
and variation move.

The games are loaded with the real loader; each stored game is read again by python-chess from its own text
in the source (from its offset to the next game's), recording every move token as written, its `+`/`#`
included, in text order. The lake's moves are put in the same order (each variation after the move it
replaces, nested ones in place), then compared move by move with the token (normalized as the loader reads
it) and python-chess's `board.san(move)`:
- the stored `san` is the token where it differs from python-chess's SAN, null where it does not;
- `fill_san` over the batch gives back the token (the stored text, or the SAN it fills in);
- `fill_san` over the same batch with every `san` nulled gives python-chess's SAN, for every move.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import chess
import chess.pgn
import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from corpora import KNOWN_DIVERGENCES
from oracle import read_bytes
from support import CORPORA, SAMPLE, Row, loaded, read_rejects

from warehouse import _core

TOURNAMENT = CORPORA / "tournament"
INPUTS = [SAMPLE, TOURNAMENT / "twic1599_sample.pgn", *sorted((TOURNAMENT / "scoutfish").glob("*.pgn"))]
MAX_REPORTED = 10

# python-chess's MOVETEXT_REGEX with a move's `+`/`#` kept in its token (python-chess skips them).
MOVETEXT_WITH_SUFFIX = re.compile(
    r"""
    (
        (?:[NBKRQ]?[a-h]?[1-8]?[\-x]?[a-h][1-8](?:=?[nbrqkNBRQK])?
        |[PNBRQK]?@[a-h][1-8]
        |--
        |Z0
        |0000
        |@@@@
        |O-O(?:-O)?
        |0-0(?:-0)?
        )[+\#]*
    )
    |(\{.*)
    |(;.*)
    |(\$[0-9]+)
    |(\()
    |(\))
    |(\*|1-0|0-1|1/2-1/2)
    |([\?!]{1,2})
    """,
    re.DOTALL | re.VERBOSE,
)
SUFFIX = re.compile(r"(.*?)([+#]*)")
SQUARE_DASH = re.compile(r"^([NBKRQ]?[a-h][1-8])-([a-h][1-8])")
PROMOTION = re.compile(r"([a-h][18])=?([nbrqkNBRQK])$")


def as_stored(token: str) -> str:
    """A move token as the loader reads it (docs/schema.md, "How SAN is read"): `0-0` is `O-O`, `e2-e4` is
    `e2e4`, `a8Q`/`a8q` is `a8=Q`, `Qh7++` is `Qh7+`."""
    match = SUFFIX.fullmatch(token)
    assert match is not None
    body, suffix = match.groups()
    if body.startswith("0-0"):
        body = body.replace("0", "O")
    body = SQUARE_DASH.sub(r"\1\2", body)
    body = PROMOTION.sub(lambda m: f"{m[1]}={m[2].upper()}", body)
    return body + suffix[:1]


class TokenBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """python-chess's game builder, also recording each move's token (as the loader reads it) and its SAN
    on python-chess's board, in text order."""

    def begin_game(self) -> None:
        super().begin_game()
        self.moves: list[tuple[str, str]] = []

    def parse_san(self, board: chess.Board, san: str) -> chess.Move:
        token = as_stored(san)
        move = board.parse_san(token)
        self.moves.append((token, board.san(move)))
        return move

    def result(self) -> chess.pgn.Game:
        game = super().result()
        game.moves = self.moves  # type: ignore[attr-defined]
        return game


def source_moves(text: str) -> tuple[list[tuple[str, str]], list[Exception]]:
    """(token as the loader reads it, python-chess's SAN) of every move of the game in `text`, in text
    order, and python-chess's errors."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chess.pgn, "MOVETEXT_REGEX", MOVETEXT_WITH_SUFFIX)
        game = chess.pgn.read_game(io.StringIO(text, newline=""), Visitor=TokenBuilder)
    assert game is not None
    return game.moves, game.errors  # type: ignore[attr-defined]


def text_order(game: Row) -> Iterator[Row]:
    """The game's moves (mainline and variations) in the order a PGN writes them: each variation after the
    move it replaces, its own variations in place. An explicit stack: variations nest deep."""
    children: dict[tuple[int, int], list[Row]] = {}
    for line in game["variations"]:  # by id, which is source order
        children.setdefault((line["parent"], line["ply"]), []).append(line)
    stack: list[tuple[int, list[Row], int]] = [(0, game["moves"], 0)]
    while stack:
        line_id, moves, index = stack.pop()
        if index == len(moves):
            continue
        yield moves[index]
        stack.append((line_id, moves, index + 1))
        stack.extend((alt["id"], alt["moves"], 0) for alt in reversed(children.get((line_id, index), [])))


def without_san(moves: pa.ListArray) -> pa.ListArray:
    """A `list<move>` column with every `san` null."""
    values = moves.values
    fields = list(values.type)
    children = [pa.nulls(len(values), f.type) if f.name == "san" else values.field(f.name) for f in fields]
    return pa.ListArray.from_arrays(moves.offsets, pa.StructArray.from_arrays(children, fields=fields))


def nothing_stored(batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` as if the lake had stored no `san` at all."""
    lines = batch.column("variations").values
    fields = list(lines.type)
    children = [
        without_san(lines.field(f.name)) if f.name == "moves" else lines.field(f.name) for f in fields
    ]
    variations = pa.ListArray.from_arrays(
        batch.column("variations").offsets, pa.StructArray.from_arrays(children, fields=fields)
    )
    columns = {name: batch.column(name) for name in batch.schema.names}
    columns |= {"moves": without_san(batch.column("moves")), "variations": variations}
    return pa.record_batch(list(columns.values()), names=list(columns))


@pytest.fixture(scope="module")
def lake_games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Row]]:
    """The stored games of every input present, by source file, in file order. Each move holds its stored
    `san`, `filled` (what `fill_san` gives for it) and `position` (what `fill_san` gives when nothing is
    stored); `end` is where the game's text ends in the source."""
    inputs: list[str | Path] = [path for path in INPUTS if path.exists()]
    lake = loaded(inputs, tmp_path_factory.mktemp("san") / "lake", "--allow-duplicates")
    columns = ["game_id", "source_file", "source_offset", "start_fen", "variant", "moves", "variations"]
    table = ds.dataset(lake / "games", format="parquet", partitioning="hive").to_table(columns=columns)
    games: dict[str, list[Row]] = {}
    for batch in table.to_batches():
        filled = pa.record_batch(_core.fill_san(batch)).to_pylist()
        position = pa.record_batch(_core.fill_san(nothing_stored(batch))).to_pylist()
        for game, twin, bare in zip(batch.to_pylist(), filled, position, strict=True):
            for move, twin_move, bare_move in zip(
                text_order(game), text_order(twin), text_order(bare), strict=True
            ):
                move["filled"], move["position"] = twin_move["san"], bare_move["san"]
            games.setdefault(game["source_file"], []).append(game)
    starts: dict[str, list[int]] = {}
    for row in [*table.select(["source_file", "source_offset"]).to_pylist(), *read_rejects(lake)]:
        starts.setdefault(row["source_file"], []).append(row["source_offset"])
    for source, stored in games.items():
        stored.sort(key=lambda g: g["source_offset"])
        offsets = sorted(starts[source])
        ends = dict(zip(offsets, [*offsets[1:], None], strict=True))
        for game in stored:
            game["end"] = ends[game["source_offset"]]
    return games


def game_text(data: bytes, start: int, end: int | None) -> str:
    """A game's text as the loader decodes it: UTF-8 when valid, else Latin-1."""
    raw = data[start:end]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def mismatches(path: Path, games: Sequence[Row], divergent: bool) -> Iterator[str]:
    """What differs, move by move. In a file where python-chess and the lake are known to read some games
    differently (corpora.KNOWN_DIVERGENCES: tags, game boundaries), a game python-chess reads with other
    moves is left out."""
    data = read_bytes(path)
    for game in games:
        where = f"{path.name} @{game['source_offset']} ({game['game_id']})"
        source, errors = source_moves(game_text(data, game["source_offset"], game["end"]))
        lake = list(text_order(game))
        if errors or len(source) != len(lake):
            if not divergent:
                yield f"{where}: python-chess reads {len(source)} moves ({errors}), the lake {len(lake)}"
            continue
        for index, ((token, want), move) in enumerate(zip(source, lake, strict=True)):
            expected = None if token == want else token
            if (move["san"], move["filled"], move["position"]) != (expected, token, want):
                yield (
                    f"{where} move {index} (text order): source {token!r}, python-chess {want!r}; "
                    f"stored {move['san']!r} (expected {expected!r}), filled {move['filled']!r}, "
                    f"without what is stored {move['position']!r}"
                )


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_san_is_stored_where_it_differs_and_filled_as_python_chess_writes_it(
    path: Path, lake_games: dict[str, list[Row]]
) -> None:
    if not path.exists():
        pytest.skip(f"{path} not found")
    games = lake_games.get(str(path), [])
    assert games, f"the lake stored no game of {path}"
    divergent = any(path == CORPORA / case.removeprefix("corpora/") for case in KNOWN_DIVERGENCES)
    found = list(mismatches(path, games, divergent))
    if found:
        shown = "\n".join(found[:MAX_REPORTED])
        pytest.fail(f"{len(found)} mismatches in {path.name}:\n{shown}", pytrace=False)


def test_the_corpora_store_some_san_and_leave_most_null(lake_games: dict[str, list[Row]]) -> None:
    """The check above is not vacuous: annotated collections do write SAN the position would not (extra or
    missing checks, needless disambiguation), and most moves are left null."""
    if not TOURNAMENT.is_dir():
        pytest.skip(f"{TOURNAMENT} not found: lichess's games store no SAN")
    moves = [move for games in lake_games.values() for game in games for move in text_order(game)]
    stored = sum(move["san"] is not None for move in moves)
    assert 0 < stored < len(moves) / 10, (stored, len(moves))


def test_a_damaged_lake_names_the_game_and_the_ply(sample_lake: Path) -> None:
    """A move no legal move matches (here: the games moved to a start position where 1. e4 is illegal)
    raises ValueError naming the game and the ply; a batch without the columns needed is refused."""
    columns = ["game_id", "start_fen", "variant", "moves", "variations"]
    table = ds.dataset(sample_lake / "games", format="parquet", partitioning="hive").to_table(columns=columns)
    batch = table.to_batches()[0].slice(0, 1)
    first = batch.to_pylist()[0]
    assert first["moves"][0]["f"] == "e2" and first["start_fen"] is None
    bare_kings = pa.array(["4k3/8/8/8/8/8/8/4K3 w - - 0 1"], pa.string())
    damaged = batch.set_column(batch.schema.get_field_index("start_fen"), "start_fen", bare_kings)
    message = (
        rf"^game {first['game_id']}, ply 1 \(moves\[0\]\): no legal move goes e2-{first['moves'][0]['t']}"
    )
    with pytest.raises(ValueError, match=message):
        _core.fill_san(damaged)
    with pytest.raises(ValueError, match="no `variant` column"):
        _core.fill_san(batch.drop_columns(["variant"]))
    with pytest.raises(TypeError, match="record batch"):
        _core.fill_san(pa.array([1, 2]))
    # The batch itself fills, each move getting the SAN it had in the source: lichess writes no other.
    filled = pa.record_batch(_core.fill_san(batch)).to_pylist()[0]
    assert all(m["san"] is None for m in first["moves"])
    assert all(m["san"] for m in filled["moves"])


def test_a_reader_without_source_san_gives_the_same_games_with_san_null(tmp_path: Path) -> None:
    """`PgnReader(source_san=False)` (the replay as the BGN import runs it, its moves given in full): every
    move's `san` is null, where the default reader keeps the source's long SAN and suffixless checks, and
    every other column is the same."""
    path = tmp_path / "full.pgn"
    path.write_text(
        '[Event "a"]\n[Result "*"]\n\n1. Pe2e4 Pe7e5 2. Bf1c4 Ng8f6 3. Qd1h5 Nb8c6 4. Qh5xf7 *\n\n'
        '[Event "b"]\n[Result "*"]\n\n1. Pd2d4 ( 1. Pe2e4 ) 1... Pd7d5 *\n'
    )

    def read(**options: bool) -> pa.Table:
        return pa.Table.from_batches(
            [b for _, batch, _ in _core.PgnReader(str(path), **options) for b in pa.table(batch).to_batches()]
        )

    kept, dropped = read(), read(source_san=False)
    assert kept.num_rows == dropped.num_rows == 2

    def moves(table: pa.Table) -> list[dict[str, object]]:
        lines = [*table.column("moves").to_pylist()]
        lines += [line["moves"] for game in table.column("variations").to_pylist() for line in game or []]
        return [m for line in lines for m in line]

    kept_moves, dropped_moves = moves(kept), moves(dropped)
    san = [m.pop("san") for m in kept_moves]
    assert san[:3] == ["e2e4", "e7e5", "Bf1c4"] and "Qh5xf7" in san  # its `#` not written: kept
    assert [m.pop("san") for m in dropped_moves] == [None] * len(san)
    assert kept_moves == dropped_moves
    others = [c for c in kept.column_names if c not in ("moves", "variations")]
    assert kept.select(others).equals(dropped.select(others))
