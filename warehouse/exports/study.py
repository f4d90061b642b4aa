"""The lake as study JSON (the schema of ../shared/specs/study-game.schema.json): one document a game,
variations nested in the moves they replace, to any depth.

Where the lake's fields go (docs/exports.md, "Study JSON"): the eight metadata fields; every other tag in
`metadata.other_tags`, in PGN export order; NAGs as `$n` in `annotations.tags`, with the free tags a
`[%tags [...]]` command of the move's comment keeps; evals as `+0.20` / `#-3`; clocks in
`annotations.clock`; the comment before the first move in `notes`; a line's starting comment as its
`label`. DuckDB writes each move's parts for a batch; Python nests the lines (`study_sql.unfold`, no
recursion: lines nest as deep as the lake keeps them).

With `fen`, each move also gets the position after it, replayed by python-chess (the optional extra
`bgn-warehouse[chess]`): the lake stores no positions, and this costs a python-chess move a move.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from warehouse.errors import OutputError
from warehouse.exports import study_sql
from warehouse.exports.bgn_json import ExportResult
from warehouse.exports.lake_scan import ALL, Selection, grouped, scan
from warehouse.exports.pgn import COLUMNS, RESULTS, tag_pairs
from warehouse.file_names import name_part
from warehouse.formats import GAME_ID_TAG, PGN_DATE, TAGS_COMMAND, start_ply
from warehouse.lake.location import Lake
from warehouse.output import output_location, staged_directory, write_texts


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


ROSTER = ["Event", "Site", "Date", "Round", "White", "Black", "Result"]


class Positions:
    """The position after each move, for `--fen`: python-chess boards, the FEN as the spec's example
    writes it (the en passant square after every double step)."""

    def __init__(self) -> None:
        try:
            import chess
            import chess.variant
        except ImportError:
            raise OutputError(
                "--fen needs python-chess: pip install 'bgn-warehouse[chess]' (or chess)"
            ) from None
        self.chess = chess

    def start(self, game: dict[str, Any]) -> Any:
        chess960 = game["variant"] == "Chess960"
        board = self.chess.variant.find_variant(game["variant"] if not chess960 else "Standard")
        return board(game["start_fen"] or board.starting_fen, chess960=chess960)

    def play(self, board: Any, move: dict[str, Any]) -> str:
        """Plays `move` (the lake's squares) on `board`; the FEN after it."""
        if move["castle"]:
            kingside = move["castle"] in "Kk"
            played = next(
                m for m in board.generate_castling_moves() if board.is_kingside_castling(m) == kingside
            )
        elif move["f"] is None:  # a drop (Crazyhouse), which its SAN names: `N@f3`
            played = board.parse_san(move["san"])
        else:
            promote = self.chess.PIECE_SYMBOLS.index(move["promote"].lower()) if move["promote"] else None
            played = self.chess.Move(
                self.chess.parse_square(move["f"]), self.chess.parse_square(move["t"]), promotion=promote
            )
        board.push(played)
        return str(board.fen(en_passant="fen"))


def study_documents(lake: Lake, selection: Selection = ALL, fen: bool = False) -> Iterator[tuple[str, str]]:
    """`(game_id, study JSON text)` of every selected game, in lake order.

    :raises LakeError: at once, when `lake` is not a lake or a non-empty `selection` matches none of its
        partitions.
    """
    positions = Positions() if fen else None
    batches = scan(lake, COLUMNS, selection)
    return _documents(batches, positions)


def _documents(batches: study_sql.Batches, positions: Positions | None) -> Iterator[tuple[str, str]]:
    con = study_sql.connect("study")
    for group in grouped(study_sql.with_san(batches)):
        moves = study_sql.run(con, group.table.select(["moves", "variations"]), "study_moves")
        others = group.table.drop_columns(["moves", "variations"]).to_pylist()
        for game, parts in zip(others, moves.to_pylist(), strict=True):
            game.update(parts)
            yield document(game, positions)


def document(game: dict[str, Any], positions: Positions | None = None) -> tuple[str, str]:
    """One game's `game_id` and study JSON text: game_id, metadata, moves, and notes when the game has
    a first comment."""
    metadata, others = metadata_of(game)
    game_id = others.pop(GAME_ID_TAG, game["game_id"])
    if others:
        metadata["other_tags"] = others
    head = dumps({"game_id": game_id, "metadata": metadata})[:-1]
    notes = "" if game["comment"] is None else ',"notes":' + dumps(game["comment"])
    return game_id, head + ',"moves":' + moves_text(game, positions) + notes + "}"


def metadata_of(game: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The eight metadata fields, and every other tag the PGN export would write (repeated names keyed
    `Date (2)`, as the lake's `headers`)."""
    pairs = tag_pairs(game)
    names = [name for name, _ in pairs]
    start = next(i for i in range(len(pairs)) if names[i : i + len(ROSTER)] == ROSTER)
    date = pairs[start + 2][1]
    rest = pairs[:start] + pairs[start + len(ROSTER) :]
    if game["time_control"] is not None:  # the last TimeControl pair is the column's
        last = max(i for i, (name, _) in enumerate(rest) if name == "TimeControl")
        rest = rest[:last] + rest[last + 1 :]
    white, black = (game["players"] + [{}, {}])[:2]
    match = PGN_DATE.fullmatch(date)
    metadata = {
        "event": "?" if game["event"] is None else game["event"],
        "site": game["site"],
        "date": "-".join(match.groups()) if match else date,
        "round": game["round"],
        "white": white.get("name") or "?",
        "black": black.get("name") or "?",
        "result": RESULTS[game["result"]],
        "time_control": game["time_control"],
    }
    others: dict[str, str] = {}
    for name, value in rest:
        key, n = name, 1
        while key in others:
            n += 1
            key = f"{name} ({n})"
        others[key] = value
    return {key: value for key, value in metadata.items() if value is not None}, others


def annotations_text(move: dict[str, Any]) -> str:
    comment, tags = move["comment"], [f"${nag}" for nag in move["nags"] or []]
    if comment and (found := TAGS_COMMAND.search(comment)):
        try:
            free = json.loads(found.group(1))
        except ValueError:
            free = None
        if isinstance(free, list) and all(isinstance(tag, str) for tag in free):
            tags += free
            comment = (comment[: found.start()] + comment[found.end() :]).strip()
    parts = {"comment": comment or None, "eval": move["eval"], "clock": move["clock"], "tags": tags or None}
    return dumps({k: v for k, v in parts.items() if v is not None})


Item = tuple[study_sql.Line, int, Any]


def moves_text(game: dict[str, Any], positions: Positions | None = None) -> str:
    """The `moves` array: each move with its number, colour, annotations, and the lines that replace it;
    with `positions`, the FEN after each move."""
    children = study_sql.branches(game["variations"])

    def pieces(item: Item) -> list[str | Item]:
        line, first_ply, board = item  # board: the position before the line's first move (with --fen)
        out: list[str | Item] = ["["]
        for index, move in enumerate(line["moves"]):
            ply = first_ply + index
            alts = children.get((line["id"], index), [])
            before = board.copy(stack=False) if board is not None and alts else None
            fen = "" if positions is None else ',"fen":' + dumps(positions.play(board, move))
            out.append(
                ("," if index else "")
                + '{"san":'
                + dumps(move["san"])
                + f',"move_number":{ply // 2 + 1},"color":"{"wb"[ply % 2]}"'
                + fen
                + ',"annotations":'
                + annotations_text(move)
                + ',"variations":['
            )
            for n, alt in enumerate(alts):
                label = "" if alt["comment"] is None else '"label":' + dumps(alt["comment"]) + ","
                start = None if before is None else before.copy(stack=False)
                out += [("," if n else "") + "{" + label + '"line":', (alt, ply, start), "}"]
            out.append("]}")
        out.append("]")
        return out

    mainline = {"id": 0, "moves": game["moves"]}
    board = None if positions is None else positions.start(game)
    return "".join(study_sql.unfold((mainline, start_ply(game["start_fen"]), board), pieces))


def file_name(game_id: str, taken: set[str]) -> str:
    """`<game_id>.json`, its id made a safe, bounded part of a file name (`warehouse.file_names`), unique
    among `taken`."""
    stem = name_part(game_id, "game")
    name, n = f"{stem}.json", 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}.json"
    taken.add(name)
    return name


def export_study(
    lake: Lake,
    out: str | os.PathLike[str],
    lines: bool = False,
    selection: Selection = ALL,
    fen: bool = False,
) -> ExportResult:
    """Writes the selected games of `lake` as study JSON: one `<game_id>.json` a game in the directory
    `out` (empty or new, published whole, as the BGN export's), or with `lines` one document a line in the
    file `out` (`.bz2`/`.zst` compressed; `-`: standard output), which appears only when complete.
    `fen`: each move with the position after it (needs python-chess).

    :raises OutputError: when `out` exists (a file) or holds files, is inside `lake`, or another export is
        writing it.
    :raises LakeError: when `lake` is not a lake, or a non-empty `selection` matches none of its partitions.
    """
    documents = study_documents(lake, selection, fen)  # the lake's errors before any output is made
    result = ExportResult()
    if lines:
        result.games, result.bytes, path = write_texts(out, (text + "\n" for _, text in documents), lake)
        result.files += [path] if path else []
        return result
    fs, path = output_location(out, lake)
    staging = staged_directory(fs, path, str(out))
    try:
        taken: set[str] = set()
        for game_id, text in documents:
            name = file_name(game_id, taken)
            data = text.encode()
            staging.write(name, data)
            result.games += 1
            result.bytes += len(data)
            result.files.append(f"{path}/{name}")
        staging.publish()
    except BaseException:
        staging.discard()
        raise
    return result
