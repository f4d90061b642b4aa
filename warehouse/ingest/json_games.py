"""One JSON game as PGN text: a BGN JSON line (docs/exports.md) or a study JSON document
(docs/exports.md, "Study JSON"), for the PGN reader to replay.

The PGN is what the reader checks: BGN moves are written with every field they carry (`Ng1xf3`,
`Pe7e8=Q`, `O-O`), and what the reader does not check from the text (the capture, the checks, the castling
side, the case of the piece) is compared afterwards through `Bgn.signature` (ingest/json_files.py). A
field of the wrong type or out of its column's range refuses the game here (`Refused`), before any PGN;
but for a clock's or an eval's range, which the reader checks as it checks a PGN game's
(crates/bgn-core/src/annotations.rs): the patterns below read their shape only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from warehouse import _core
from warehouse.formats import GAME_ID_TAG, escape, start_ply

RESULTS = {"W": "1-0", "B": "0-1", "D": "1/2-1/2", "*": "*"}
PGN_RESULTS = frozenset(RESULTS.values())
PIECES = frozenset("PNBRQKpnbrqk")
SQUARE = re.compile(r"[a-h][1-8]")
DATETIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}:[0-9]{2}:[0-9]{2})Z")
# A lake id the lake would give: a lichess id, or 16 hex digits of a content hash (docs/schema.md).
LAKE_ID = re.compile(r"[0-9A-Za-z]{8}|[0-9a-f]{16}")
# Pawns of at most 10 digits: PGN's `[%eval]` with more is no eval (python-chess's `EVAL_REGEX`).
BGN_EVAL = re.compile(r"-?[0-9]{1,10}(\.[0-9]{1,2})?|#-?[0-9]+")
STUDY_EVAL = re.compile(r"[+-][0-9]{1,10}\.[0-9]{2}|#-?[0-9]+")
CLOCK = re.compile(r"[0-9]+:[0-9]{2}:[0-9]{2}(\.[0-9])?")
# One SAN token and nothing else: no space, comment, variation or NAG can ride along.
SAN = re.compile(r"[A-Za-z0-9=+#@-]{2,12}")
STUDY_DATE = re.compile(r"([0-9?]{4})-([0-9?]{2})-([0-9?]{2})")
INT16 = 32767
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
class Bgn:
    """A BGN line as PGN, its moves' fields as the lake will hold them (`signature`: a line's moves
    space-separated, lines `|`-separated, mainline first then each line in the order its `(` is written,
    which is the lake's `variations` order), and its `id`."""

    pgn: str
    signature: str
    id: str | None


@dataclass
class Study:
    """A study document as PGN, and its `game_id` when the lake can keep it as the game's id."""

    pgn: str
    id: str | None


@dataclass
class _Lines:
    tokens: list[str] = field(default_factory=list)
    signatures: list[list[str]] = field(default_factory=list)


def bgn_game(doc: Any) -> Bgn:
    """:raises Refused: for a field of the wrong type, out of range, or that PGN cannot carry."""
    expect(doc, dict, "the line")
    game_id = doc.get("id")
    if game_id is not None and not LAKE_ID.fullmatch(text(game_id, "id")):
        raise Refused(f"id {game_id!r} is neither a lichess id (8 letters or digits) nor 16 hex digits")
    if "moves" not in doc:
        raise Refused("missing required field 'moves'")
    result = doc.get("result", "*")
    if result not in RESULTS:
        raise Refused(f"result {result!r} is not one of W, B, D, *")
    pairs = bgn_tags(doc, RESULTS[result])
    fen = doc.get("fen")
    lines = _Lines()
    comment = doc.get("comment")
    if comment is not None:
        lines.tokens.extend(braced([comment_text(comment, "comment")]))
    bgn_line(expect(doc["moves"], list, "moves"), start_ply(fen), lines, "moves")
    lines.tokens.append(RESULTS[result])
    signature = "|".join(" ".join(line) for line in lines.signatures)
    return Bgn(tags_text(pairs) + "\n" + " ".join(lines.tokens) + "\n\n", signature, game_id)


def bgn_tags(doc: dict[str, Any], result: str) -> list[tuple[str, str]]:
    pairs = [
        (tag, tag_value(doc[key], key)) for key, tag in (("event", "Event"), ("site", "Site")) if key in doc
    ]
    stamp = doc.get("datetime")
    if stamp is not None:
        match = DATETIME.fullmatch(text(stamp, "datetime"))
        if match is None:
            raise Refused(f"datetime {stamp!r} is not YYYY-MM-DDThh:mm:ssZ")
        year, month, day, clock = match.groups()
        pairs += [("Date", f"{year}.{month}.{day}"), ("UTCDate", f"{year}.{month}.{day}"), ("UTCTime", clock)]
    if "round" in doc:
        pairs.append(("Round", tag_value(doc["round"], "round")))
    players = expect(doc.get("players", []), list, "players")
    if len(players) > 2:
        raise Refused(f"players holds {len(players)} entries, not 2")
    sides = [player_tags(expect(p, dict, f"players[{i}]"), i) for i, p in enumerate(players)]
    sides += [{}] * (2 - len(sides))
    pairs += [
        (tag, sides[i][key])
        for i, tag in ((0, "White"), (1, "Black"))
        for key in ("name",)
        if key in sides[i]
    ]
    pairs.append(("Result", result))
    for key in ("title", "elo", "diff"):
        for i, color in enumerate(("White", "Black")):
            if key in sides[i]:
                pairs.append(
                    (f"{color}{ {'title': 'Title', 'elo': 'Elo', 'diff': 'RatingDiff'}[key] }", sides[i][key])
                )
    if "variant" in doc:
        pairs.append(("Variant", tag_value(doc["variant"], "variant")))
    opening = expect(doc.get("opening", {}), dict, "opening")
    for key, tag in (("ECO", "ECO"), ("verbose", "Opening")):
        if key in opening:
            pairs.append((tag, tag_value(opening[key], f"opening.{key}")))
    for key, tag in (("timeControl", "TimeControl"), ("termination", "Termination")):
        if key in doc:
            pairs.append((tag, tag_value(doc[key], key)))
    if "fen" in doc:
        pairs += [("SetUp", "1"), ("FEN", tag_value(doc["fen"], "fen"))]
    return pairs


def player_tags(player: dict[str, Any], index: int) -> dict[str, str]:
    where = f"players[{index}]"
    out: dict[str, str] = {}
    if "handle" in player:
        handle = expect(player["handle"], dict, f"{where}.handle")
        out["name"] = tag_value(handle.get("value"), f"{where}.handle.value")
    elos = [key for key in player if key.startswith("ELO_")]
    if len(elos) > 1:
        raise Refused(f"{where} holds {len(elos)} ELO_ keys, not one")
    if elos:
        out["elo"] = str(integer(player[elos[0]], f"{where}.{elos[0]}", 0, INT32))
    if "ratingDiff" in player:
        out["diff"] = f"{integer(player['ratingDiff'], f'{where}.ratingDiff', -INT32, INT32):+d}"
    if "title" in player:
        out["title"] = tag_value(player["title"], f"{where}.title")
    return out


def bgn_line(moves: list[Any], first_ply: int, lines: _Lines, where: str) -> None:
    """Writes a line's moves (and the lines nested in them) into `lines`."""
    signature: list[str] = []
    lines.signatures.append(signature)
    tokens = lines.tokens
    for index, move in enumerate(moves):
        if type(move) is not dict:
            expect(move, dict, f"{where}[{index}]")
        notes = move.get("a")
        if isinstance(notes, list) and index == 0 and where != "moves":
            precomments = [a["precomment"] for a in notes if isinstance(a, dict) and "precomment" in a]
            tokens.extend(braced([comment_text(p, f"{where}[0].precomment") for p in precomments]))
        ply = first_ply + index
        token, fields = move_fields(move, where, index)
        tokens.append(f"{ply // 2 + 1}{'.' if ply % 2 == 0 else '...'} {token}")
        signature.append(fields)
        if notes is not None:
            for alt_index, alt in enumerate(annotate(notes, f"{where}[{index}]", index, where, tokens)):
                tokens.append("(")
                here = f"{where}[{index}].alt[{alt_index}]"
                bgn_line(expect(alt, list, here), ply, lines, here)
                tokens.append(")")


def annotate(notes: Any, here: str, index: int, where: str, tokens: list[str]) -> list[Any]:
    """Writes a move's NAGs and comment (eval, clock, text) into `tokens`; returns its alternate lines."""
    alts: list[Any] = []
    parts: list[str] = []
    for i, note in enumerate(expect(notes, list, f"{here}.a")):
        expect(note, dict, f"{here}.a[{i}]")
        if "precomment" in note and (index != 0 or where == "moves"):
            raise Refused(f"{here} has a precomment but does not start a variation")
        if "nag" in note:
            tokens.append(f"${integer(note['nag'], f'{here}.a[{i}].nag', 1, MAX_NAG)}")
        if "eval" in note:
            parts.append(f"[%eval {first_of(note['eval'], f'{here}.a[{i}].eval', BGN_EVAL)}]")
        if "clk" in note:
            parts.append(f"[%clk {first_of(note['clk'], f'{here}.a[{i}].clk', CLOCK)}]")
        if "comment" in note:
            parts.append(comment_text(note["comment"], f"{here}.a[{i}].comment"))
        if "alt" in note:
            alts += expect(note["alt"], list, f"{here}.a[{i}].alt")
    tokens.extend(braced(parts))
    return alts


MOVE_FIELDS = re.compile(
    r"([PNBRQKpnbrqk])\.([a-h][1-8])\.([a-h][1-8])\.([PNBRQKpnbrqk]?)\.([1-9][0-9]{0,4})?\.([KQkq]?)\.([NBRQKnbrqk]?)"
)


def move_fields(move: dict[str, Any], where: str, index: int) -> tuple[str, str]:
    """The move's PGN token (`bgn_token`) and its fields as the lake will hold them (`bgn_signature`).
    The common case is checked by one match of the fields' text; a move that fails it is read field by
    field, which names the field at fault."""
    get = move.get
    p, f, t, x, c, castle, promote = (get(k) for k in ("p", "f", "t", "x", "c", "castle", "promote"))
    fields = (
        f"{p}.{f}.{t}.{'' if x is None else x}.{'' if c is None else c}."
        f"{'' if castle is None else castle}.{'' if promote is None else promote}"
    )
    m = MOVE_FIELDS.fullmatch(fields)
    if (
        m is None
        or (m[1], m[2], m[3]) != (p, f, t)
        or (c is not None and (type(c) is not int or c > INT16))
        or (x is not None and m[4] != x)
        or (castle is not None and m[6] != castle)
        or (promote is not None and m[7] != promote)
    ):
        here = f"{where}[{index}]"
        return bgn_token(move, here), bgn_signature(move, here)
    if castle:
        return ("O-O" if castle in "Kk" else "O-O-O"), fields
    return f"{m[1].upper()}{f}{'x' if x else ''}{t}{'=' + m[7].upper() if m[7] else ''}", fields


def first_of(values: Any, where: str, pattern: re.Pattern[str]) -> str:
    """The first of a BGN list of evals or clocks (the lake keeps one a move)."""
    expect(values, list, where)
    if not values:
        raise Refused(f"{where} is empty")
    value = text(values[0], f"{where}[0]")
    if not pattern.fullmatch(value):
        raise Refused(f"{where}[0] {value!r} is not {'an eval' if pattern is BGN_EVAL else 'a clock'}")
    return value


def bgn_token(move: dict[str, Any], where: str) -> str:
    """The move with every field the text can carry: `Ng1xf3`, `Pe7e8=Q`; castling as `O-O`/`O-O-O`."""
    piece, start, to = (move.get(key) for key in ("p", "f", "t"))
    if not isinstance(piece, str) or piece not in PIECES:
        raise Refused(f"{where}.p {piece!r} is not a piece letter")
    if start is None and "f" in move:
        return drop_token(move, piece, to, where)
    for key, square in (("f", start), ("t", to)):
        if not isinstance(square, str) or not SQUARE.fullmatch(square):
            raise Refused(f"{where}.{key} {square!r} is not a square")
    castle = move.get("castle")
    if castle is not None:
        if castle not in ("K", "Q", "k", "q"):
            raise Refused(f"{where}.castle {castle!r} is not K, Q, k or q")
        return "O-O" if castle in "Kk" else "O-O-O"
    capture = move.get("x")
    if capture is not None and (not isinstance(capture, str) or capture not in PIECES):
        raise Refused(f"{where}.x {capture!r} is not a piece letter")
    promote = move.get("promote")
    if promote is not None and (
        not isinstance(promote, str) or promote not in "NBRQKnbrqk" or len(promote) != 1
    ):
        raise Refused(f"{where}.promote {promote!r} is not a piece letter")
    return f"{piece.upper()}{start}{'x' if capture else ''}{to}{'=' + promote.upper() if promote else ''}"


def drop_token(move: dict[str, Any], piece: str, to: Any, where: str) -> str:
    """A drop (Crazyhouse: `f` null): `N@f3`, the piece put on `t`, nothing captured, castled or
    promoted."""
    if not isinstance(to, str) or not SQUARE.fullmatch(to):
        raise Refused(f"{where}.t {to!r} is not a square")
    for key in ("x", "castle", "promote"):
        if move.get(key) is not None:
            raise Refused(f"{where}.{key}: a drop (f null) has no {key}")
    return f"{piece.upper()}@{to}"


def bgn_signature(move: dict[str, Any], where: str) -> str:
    """The move's p, f, t, x, c, castle, promote as the lake will hold them (see `Bgn`)."""
    checks = move.get("c")
    if checks is not None:
        integer(checks, f"{where}.c", 1, INT16)
    fields = [move.get(key) for key in ("p", "f", "t", "x")] + [
        checks,
        move.get("castle"),
        move.get("promote"),
    ]
    return ".".join("" if value is None else str(value) for value in fields)


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
