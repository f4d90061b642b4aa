"""One study JSON document (docs/exports.md, "Study JSON") as PGN text, for the PGN reader to replay.

(A BGN JSON line is made into PGN by the Rust core, a block of lines at a time:
crates/bgn-core/src/json_games.rs, which words its refusals as these do.) A field of the wrong type or out
of its column's range refuses the game here (`Refused`), before any PGN; but for a clock's or an eval's
range, which the reader checks as it checks a PGN game's (crates/bgn-core/src/annotations.rs): the
patterns below read their shape only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from warehouse import _core
from warehouse.formats import GAME_ID_TAG, escape, start_ply

PGN_RESULTS = frozenset(("1-0", "0-1", "1/2-1/2", "*"))
# A lake id the lake would give: a lichess id, or 16 hex digits of a content hash (docs/schema.md).
LAKE_ID = re.compile(r"[0-9A-Za-z]{8}|[0-9a-f]{16}")
STUDY_EVAL = re.compile(r"[+-][0-9]{1,10}\.[0-9]{2}|#-?[0-9]+")
CLOCK = re.compile(r"[0-9]+:[0-9]{2}:[0-9]{2}(\.[0-9])?")
# One SAN token and nothing else: no space, comment, variation or NAG can ride along.
SAN = re.compile(r"[A-Za-z0-9=+#@-]{2,12}")
STUDY_DATE = re.compile(r"([0-9?]{4})-([0-9?]{2})-([0-9?]{2})")
INT32 = 2**31 - 1
MAX_NAG = _core.MAX_NAG  # PGN's `$n` is a byte (pgn-reader)
# The metadata keys and the tags they stand for, in the order of PGN's roster.
METADATA = {
    "event": "Event", "site": "Site", "date": "Date", "round": "Round", "white": "White",
    "black": "Black", "result": "Result", "time_control": "TimeControl",
}  # fmt: skip
REQUIRED_METADATA = ("event", "date", "white", "black", "result")
REPEATED_KEY = re.compile(r" \([0-9]+\)$")


class Refused(ValueError):
    """A game that cannot be a lake game as it stands: one line, what is wrong and where."""


def expect(value: Any, kind: type, where: str) -> Any:
    # bool is an int to Python, never to JSON's readers of a number field.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise Refused(f"{where} is {json_type(value)}, not {type_name(kind)}")
    return value


def json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


TYPE_NAMES: dict[type, str] = {str: "a string", int: "an integer", dict: "an object", list: "an array"}


def type_name(kind: type) -> str:
    return TYPE_NAMES.get(kind, "a number")


def integer(value: Any, where: str, low: int, high: int) -> int:
    expect(value, int, where)
    if not low <= value <= high:
        raise Refused(f"{where} {value} is out of range ({low} to {high})")
    return int(value)


def text(value: Any, where: str) -> str:
    return str(expect(value, str, where))


def tag_value(value: Any, where: str) -> str:
    value = text(value, where)
    if "\n" in value or "\r" in value:
        raise Refused(f"{where} holds a line break, which a PGN tag cannot")
    return value


def comment_text(value: Any, where: str) -> str:
    value = text(value, where)
    if "}" in value:
        raise Refused(f"{where} holds '}}', which ends a PGN comment")
    return value


def tags_command(tags: list[str]) -> str:
    """`[%tags ["opening","Benoni"]]`: `]` and `}` inside a tag escaped as JSON allows, so that neither
    ends the command or the comment early."""
    items = (
        json.dumps(tag, ensure_ascii=False).replace("]", "\\u005d").replace("}", "\\u007d") for tag in tags
    )
    return "[%tags [" + ",".join(items) + "]]"


def tags_text(pairs: list[tuple[str, str]]) -> str:
    return "".join(f'[{name} "{escape(value)}"]\n' for name, value in pairs)


def number(ply: int) -> str:
    """A move's number as PGN writes it before the move: `5.` for White, `5...` for Black."""
    return f"{ply // 2 + 1}." if ply % 2 == 0 else f"{ply // 2 + 1}..."


def braced(parts: list[str]) -> list[str]:
    joined = " ".join(part for part in parts if part)
    return ["{ " + joined + " }"] if joined else []


@dataclass
class Study:
    """A study document as PGN, and its `game_id` when the lake can keep it as the game's id."""

    pgn: str
    id: str | None


def study_game(doc: Any) -> Study:
    """:raises Refused: for a field of the wrong type, a missing required field, a move whose
    `move_number` or `color` is not its place in the game, or text PGN cannot carry."""
    expect(doc, dict, "the document")
    for key in ("game_id", "metadata", "moves"):
        if key not in doc:
            raise Refused(f"missing required field {key!r}")
    game_id = text(doc["game_id"], "game_id")
    metadata = expect(doc["metadata"], dict, "metadata")
    for key in REQUIRED_METADATA:
        if key not in metadata:
            raise Refused(f"missing required field 'metadata.{key}'")
    if metadata["result"] not in PGN_RESULTS:
        raise Refused(f"metadata.result {metadata['result']!r} is not one of 1-0, 0-1, 1/2-1/2, *")
    pairs = study_tags(metadata, game_id)
    fen = next((value for name, value in pairs if name == "FEN"), None)
    tokens: list[str] = []
    if "notes" in doc:
        tokens.extend(braced([comment_text(doc["notes"], "notes")]))
    study_line(expect(doc["moves"], list, "moves"), start_ply(fen), tokens, "moves")
    tokens.append(metadata["result"])
    own = game_id if LAKE_ID.fullmatch(game_id) else None
    return Study(tags_text(pairs) + "\n" + " ".join(tokens) + "\n\n", own)


def study_tags(metadata: dict[str, Any], game_id: str) -> list[tuple[str, str]]:
    """The tags: the metadata and the other tags, then `GameId` for an id the lake cannot keep as its
    own."""
    others = expect(metadata.get("other_tags", {}), dict, "metadata.other_tags")
    other_pairs = [
        (REPEATED_KEY.sub("", name), tag_value(value, f"metadata.other_tags.{name}"))
        for name, value in others.items()
    ]
    for name, _ in other_pairs:
        if not _core.is_tag_name(name):  # the load's definition, python-chess's
            raise Refused(f"metadata.other_tags key {name!r} is not a PGN tag name")
    # Earlier occurrences of a tag a column holds go first (readers keep the last); Date lives in the
    # lake's `headers`, where its first occurrence is the one the roster shows.
    roster = set(METADATA.values()) - {"Date"}
    own: list[tuple[str, str]] = []
    for key, tag in METADATA.items():
        if key not in metadata:
            continue
        value = tag_value(metadata[key], f"metadata.{key}")
        if key == "date" and (match := STUDY_DATE.fullmatch(value)):
            value = ".".join(match.groups())
        own.append((tag, value))
    pairs = [p for p in other_pairs if p[0] in roster] + own + [p for p in other_pairs if p[0] not in roster]
    if not LAKE_ID.fullmatch(game_id):
        pairs.append((GAME_ID_TAG, tag_value(game_id, "game_id")))
    return pairs


def study_line(moves: list[Any], first_ply: int, tokens: list[str], where: str, label: Any = None) -> None:
    if label is not None:
        tokens.extend(braced([comment_text(label, f"{where} label")]))
    for index, move in enumerate(moves):
        here = f"{where}[{index}]"
        expect(move, dict, here)
        ply = first_ply + index
        san = move.get("san")
        if not isinstance(san, str) or not SAN.fullmatch(san):
            raise Refused(
                f"{here}.san {san!r} is not a SAN move"
                if "san" in move
                else f"missing required field '{here}.san'"
            )
        if "move_number" not in move:
            raise Refused(f"missing required field '{here}.move_number'")
        place = (ply // 2 + 1, "wb"[ply % 2])
        given = (integer(move["move_number"], f"{here}.move_number", 1, INT32), move.get("color", place[1]))
        if given != place:
            raise Refused(
                f"{here} '{san}' is numbered {given[0]} {given[1]!s} "
                f"where the game is at {place[0]} {place[1]}"
            )
        tokens.append(f"{number(ply)} {san}")
        annotations = expect(move.get("annotations", {}), dict, f"{here}.annotations")
        tags = expect(annotations.get("tags", []), list, f"{here}.annotations.tags")
        free: list[str] = []
        for i, tag in enumerate(tags):
            tag = text(tag, f"{here}.annotations.tags[{i}]")
            if re.fullmatch(r"\$[0-9]{1,3}", tag) and 1 <= int(tag[1:]) <= MAX_NAG:
                tokens.append(tag)
            else:
                free.append(tag)
        parts = []
        if "eval" in annotations:
            value = text(annotations["eval"], f"{here}.annotations.eval")
            if not STUDY_EVAL.fullmatch(value):
                raise Refused(
                    f"{here}.annotations.eval {value!r} is not pawns (+0.20, -1.50) or a mate (#3, #-3)"
                )
            parts.append(f"[%eval {value}]")
        if "clock" in annotations:
            value = text(annotations["clock"], f"{here}.annotations.clock")
            if not CLOCK.fullmatch(value):
                raise Refused(f"{here}.annotations.clock {value!r} is not h:mm:ss")
            parts.append(f"[%clk {value}]")
        if "comment" in annotations:
            parts.append(comment_text(annotations["comment"], f"{here}.annotations.comment"))
        if free:
            # `]` inside a tag would end the command: escaped, as JSON allows.
            parts.append(tags_command(free))
        tokens.extend(braced(parts))
        for n, variation in enumerate(expect(move.get("variations", []), list, f"{here}.variations")):
            expect(variation, dict, f"{here}.variations[{n}]")
            if "line" not in variation:
                raise Refused(f"missing required field '{here}.variations[{n}].line'")
            tokens.append("(")
            line = expect(variation["line"], list, f"{here}.variations[{n}].line")
            study_line(line, ply, tokens, f"{here}.variations[{n}].line", variation.get("label"))
            tokens.append(")")
