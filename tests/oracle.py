"""What the lake should hold for a PGN file, computed independently with python-chess.

Pure python-chess (no project imports): every field follows docs/schema.md. `expected_games` reads a
file and returns one `Expected` per game python-chess finds, in file order: either the row the lake
should hold (games/) or a rejection (rejects/).
"""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import chess.variant
import zstandard

RESULTS = {"1-0": "W", "0-1": "B", "1/2-1/2": "D"}
CASTLE = {
    (chess.WHITE, True): "K",
    (chess.WHITE, False): "Q",
    (chess.BLACK, True): "k",
    (chess.BLACK, False): "q",
}
# Tags held by a column of their own (Variant by `variant`); the others go to `headers`, in file order.
COLUMN_TAGS = frozenset(
    ["Site", "Event", "Round", "Result", "Termination", "TimeControl", "ECO", "Opening", "FEN", "Variant"]
    + [f"{color}{tag}" for color in ("White", "Black") for tag in ("", "Elo", "RatingDiff", "Title")]
)
LICHESS_URL = re.compile(r"https://lichess\.org/([A-Za-z0-9]{8})")
INTEGER = re.compile(r"[+-]?[0-9]+")
# A base+inc of whole seconds (the tc_base and tc_inc columns): 1 to 9 digits each.
TIME_CONTROL = re.compile(r"([0-9]{1,9})(?:\+([0-9]{1,9}))?")
SECONDS = re.compile(r"[0-9]{1,9}(?:\.[0-9]{1,3})?")  # TCEC writes fractional increments: 180+0.5
PERIOD = re.compile(r"([0-9]{1,9})/([0-9]{1,9})")  # moves/seconds: 40/900, chess.com's daily 1/86400
DAY = 86400
# The PGN standard's Termination values as lichess spells them, found whatever their case.
TERMINATION_WORDS = {
    word.lower(): word
    for word in (
        "Normal", "Time forfeit", "Abandoned", "Rules infraction", "Unterminated", "Adjudication", "Death",
        "Emergency",
    )
}  # fmt: skip
# chess.com's sentences, `Game drawn <how>` or `<winner> won <how>`, by their <how>.
CHESSCOM_ENDING = re.compile(r"(?:Game drawn|.+? won) (.+)")
CHESSCOM_TERMINATIONS = {
    **dict.fromkeys(
        (
            "checkmate",
            "resignation",
            "agreement",
            "repetition",
            "stalemate",
            "insufficient material",
            "50-move rule",
        ),
        "Normal",
    ),
    "timeout vs insufficient material": "Time forfeit",
}
DATE_SEPARATOR = re.compile(r"[./-]")
YEAR = re.compile(r"[0-9]{4}")
NUMBER = re.compile(r"[0-9]+")
TIME = re.compile(r"([0-9]+):([0-9]+):([0-9]+)")
TAG_ESCAPE = re.compile(r'\\([\\"])')
# python-chess's `[%eval …]` and `[%clk …]` commands: a comment without COMMAND holds neither.
EVAL, CLOCK = chess.pgn.EVAL_REGEX, chess.pgn.CLOCK_REGEX
COMMAND = "[%"
TENTH = Decimal("0.1")
# lichess's speed thresholds on base + 40 * inc seconds, upper bounds excluded.
SPEEDS = ((30, "ultrabullet"), (180, "bullet"), (480, "blitz"), (1500, "rapid"))

# The `variant` column's name of each lichess variant's python-chess board (Suicide and Giveaway, which
# python-chess also plays, are no lichess variants: rejected).
VARIANT_NAMES: dict[type[chess.Board], str] = {
    chess.variant.CrazyhouseBoard: "Crazyhouse",
    chess.variant.AtomicBoard: "Atomic",
    chess.variant.AntichessBoard: "Antichess",
    chess.variant.HordeBoard: "Horde",
    chess.variant.KingOfTheHillBoard: "King of the Hill",
    chess.variant.RacingKingsBoard: "Racing Kings",
    chess.variant.ThreeCheckBoard: "Three-check",
}

Row = dict[str, Any]


@dataclass
class Expected:
    """One game as the lake should hold it: a row of games/, or a reject."""

    rejected: bool
    reason: str | None
    row: Row | None


@dataclass
class _Line:
    """A line of moves as the source nests it: the line it branches from and the ply it replaces there.

    python-chess's tree makes siblings of `1. e4 (1. d4 (1. c4))`, losing that 1. c4 is written as an
    alternative to 1. d4 (line 2 branching from line 1), not to 1. e4: the builder records the nesting.
    """

    id: int
    parent: int
    ply: int
    nodes: list[chess.pgn.ChildNode] = field(default_factory=list)


class _Game(chess.pgn.Game):
    """A python-chess game that also keeps what `chess.pgn.Game` drops: tags as written, NAG order,
    the movetext's result marker, the nesting of variations."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, str]] = []
        self.nag_order: dict[int, list[int]] = {}
        self.marker: str | None = None
        self.lines = [_Line(id=0, parent=0, ply=0)]


class _Builder(chess.pgn.GameBuilder[_Game]):
    """python-chess's builder, recording more, and going no further in the tree after an error.

    After an illegal move inside a variation python-chess's reader and builder disagree on the nesting
    (it then crashes with an IndexError on a later move); the game is a reject anyway.
    """

    def __init__(self) -> None:
        super().__init__(Game=_Game)

    def begin_game(self) -> None:
        super().begin_game()
        self.open_lines = [0]

    def begin_variation(self) -> chess.pgn.SkipType | None:
        if self.game.errors:
            return chess.pgn.SKIP
        lines = self.game.lines
        parent = lines[self.open_lines[-1]]
        self.open_lines.append(len(lines))
        lines.append(_Line(id=len(lines), parent=parent.id, ply=len(parent.nodes) - 1))
        return super().begin_variation()

    def end_variation(self) -> None:
        if not self.game.errors:
            super().end_variation()
            self.open_lines.pop()

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        if not self.game.errors:
            super().visit_move(board, move)
            self.game.lines[self.open_lines[-1]].nodes.append(self.variation_stack[-1])

    def visit_comment(self, comment: str) -> None:
        if not self.game.errors:
            super().visit_comment(comment)

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        super().visit_header(tagname, tagvalue)
        # PGN escapes `"` and `\` in tag values with a backslash; python-chess keeps the escapes.
        self.game.tags.append((tagname, TAG_ESCAPE.sub(r"\1", tagvalue)))

    def visit_nag(self, nag: int) -> None:
        if self.game.errors:
            return
        super().visit_nag(nag)
        self.game.nag_order.setdefault(id(self.variation_stack[-1]), []).append(nag)

    def visit_result(self, result: str) -> None:
        super().visit_result(result)
        if self.game.marker is None:
            self.game.marker = result

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)  # silently: the oracle reports it as a reject


def read_bytes(path: Path) -> bytes:
    """The file's bytes, zstd-decompressed for `.zst` (all frames)."""
    data = path.read_bytes()
    if path.suffix != ".zst":
        return data
    return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()


def read_games(path: Path) -> Iterator[_Game]:
    """Every game python-chess finds in the file, its text decoded as the lake does.

    Line endings are kept as written (a CRLF file's comments hold CRLF). A game is UTF-8 when its bytes
    are, else Latin-1: when the whole file is not UTF-8, python-chess splits its Latin-1 reading into
    games (one character per byte, so positions are byte offsets) and each game is read again as UTF-8
    when its bytes are valid UTF-8.
    """
    data = read_bytes(path)
    try:
        text, mixed = data.decode("utf-8"), False
    except UnicodeDecodeError:
        text, mixed = data.decode("latin-1"), True
    handle = io.StringIO(text, newline="")
    start = 0
    last = None
    while (game := chess.pgn.read_game(handle, Visitor=_Builder)) is not None:
        end = handle.tell()
        if mixed:
            game = read_utf8(data[start:end]) or game
        if end == len(text) and unterminated_comment(text[start:end]):
            game.errors.append(ValueError("unterminated comment"))
        if last is not None:
            yield last
        last = game
        start = end
    if last is not None:
        # The input ends inside a game whose movetext has no result marker: cut short (a broken
        # download), not a shorter game.
        if last.marker is None and not last.errors:
            last.errors.append(ValueError("game cut short: the input ends before its result"))
        yield last


def read_utf8(data: bytes) -> _Game | None:
    """The game in `data` read as UTF-8; None when it is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return chess.pgn.read_game(io.StringIO(text, newline=""), Visitor=_Builder)


def unterminated_comment(text: str) -> bool:
    """Whether the game's text ends inside a `{` comment (python-chess then reads the comment to the end
    of the file and keeps the game)."""
    return text.rfind("{") > text.rfind("}")


def expected_games(path: Path) -> list[Expected]:
    """One `Expected` per game of the PGN file at `path`, in file order."""
    return [expect(game) for game in read_games(path)]


def expect(game: _Game) -> Expected:
    reason = rejection(game)
    if reason is not None:
        return Expected(rejected=True, reason=reason, row=None)
    return Expected(rejected=False, reason=None, row=game_row(game))


def rejection(game: _Game) -> str | None:
    """Why the lake must reject the game, or None when it must store it."""
    if game.errors:
        return str(game.errors[0])
    if not game.tags and not game.lines[0].nodes:
        # No tag and no move (noise, a stray `0-1`): python-chess makes an empty game of it; not a game.
        return "no tags and no moves: not a game"
    board_class = game.headers.variant()
    if board_class is not chess.Board and board_class not in VARIANT_NAMES:
        return f"unsupported variant {game.headers.get('Variant')!r}"
    if any(not node.move for line in game.lines for node in line.nodes):
        return "null move"
    return None


def game_row(game: _Game) -> Row:
    tags = dict(game.tags)
    mainline = game.lines[0].nodes
    tc_base, tc_inc = time_control(game_time_control(tags))
    date, time = date_time(tags)
    year, month, _ = date_parts(date)
    board = game.board()
    variant = VARIANT_NAMES.get(type(board)) or ("Chess960" if board.chess960 else "Standard")
    moves = move_rows(game, board)  # leaves `board` at the mainline's end
    site_match = LICHESS_URL.fullmatch(tags.get("Site", ""))
    return {
        "game_id": site_match.group(1) if site_match else None,
        "site": tags.get("Site"),
        "event": tags.get("Event"),
        "round": tags.get("Round"),
        "datetime": timestamp(date, time),
        "result": RESULTS.get(result_text(game, tags), "*"),
        "termination": termination(tags.get("Termination")),
        "time_control": tags.get("TimeControl"),
        "tc_base": tc_base,
        "tc_inc": tc_inc,
        "type": speed(game_time_control(tags)),
        "year": year or 0,
        "month": month or 0,
        "opening": opening(tags),
        "players": [player(tags, "White"), player(tags, "Black")],
        "variant": variant,
        "start_fen": tags.get("FEN"),
        "mate": board.is_checkmate(),
        "has_eval": any(COMMAND in node.comment and EVAL.search(node.comment) for node in mainline),
        "has_clock": any(COMMAND in node.comment and CLOCK.search(node.comment) for node in mainline),
        "n_plies": len(mainline),
        **material_fields(game.board(), [node.move for node in mainline]),
        "comment": game.comment.strip() or None,
        "headers": expected_headers(game.tags, variant),
        "moves": [moves[id(node)] for node in mainline],
        "variations": [
            {
                "id": line.id,
                "parent": line.parent,
                "ply": line.ply,
                "comment": (line.nodes[0].starting_comment.strip() or None) if line.nodes else None,
                "moves": [moves[id(n)] for n in line.nodes],
            }
            for line in game.lines[1:]
        ],
    }


def expected_headers(tags: list[tuple[str, str]], variant: str) -> list[tuple[str, str]]:
    """Every tag a column does not give back as written, in file order: tags without a column, earlier
    occurrences of a repeated tag (the columns hold the last), and column tags whose column cannot
    spell the text (`WhiteElo "?"`, `Result "1/2"`, `Variant "chess 960"`). A repeated name is keyed
    `Name (2)`, `Name (3)`… so that the map's keys are unique."""
    last = {name: i for i, (name, _) in enumerate(tags)}
    seen: dict[str, int] = {}
    headers = []
    for i, (name, value) in enumerate(tags):
        if name in COLUMN_TAGS and last[name] == i and spelled_by_column(name, value, variant):
            continue
        seen[name] = seen.get(name, 0) + 1
        headers.append((name if seen[name] == 1 else f"{name} ({seen[name]})", value))
    return headers


def spelled_by_column(name: str, value: str, variant: str) -> bool:
    if name == "Result":
        return value in (*RESULTS, "*")
    if name in ("WhiteElo", "BlackElo", "WhiteRatingDiff", "BlackRatingDiff"):
        return INTEGER.fullmatch(value) is not None and value in (str(int(value)), f"{int(value):+d}")
    if name == "Variant":
        return value == variant
    if name == "Termination":
        return termination(value) == value
    return True


def termination(value: str | None) -> str | None:
    """The `termination` column: lichess's word for the standard's values and chess.com's sentences
    (`cancer0707 won by checkmate` → Normal), any other text as written."""
    if value is None:
        return None
    text = value.strip()
    if text.lower() in TERMINATION_WORDS:
        return TERMINATION_WORDS[text.lower()]
    ending = CHESSCOM_ENDING.fullmatch(text)
    how = ending.group(1) if ending else ""
    if how.startswith("by ") and how[3:] in CHESSCOM_TERMINATIONS:
        return CHESSCOM_TERMINATIONS[how[3:]]
    return {"on time": "Time forfeit", "- game abandoned": "Abandoned"}.get(how, value)


def result_text(game: _Game, tags: dict[str, str]) -> str | None:
    """The Result tag, or the movetext's termination marker when the tag is absent or `*`."""
    tag = tags.get("Result")
    return tag if tag not in (None, "*") else game.marker or tag


def game_time_control(tags: dict[str, str]) -> str | None:
    """The text the game's time control is read from: its TimeControl tag, else TCEC's WhiteTimeControl
    and BlackTimeControl when they agree."""
    if "TimeControl" in tags:
        return tags["TimeControl"]
    white, black = tags.get("WhiteTimeControl"), tags.get("BlackTimeControl")
    return white if white is not None and black is not None and white.strip() == black.strip() else None


def time_control(tag: str | None) -> tuple[int | None, int | None]:
    """tc_base and tc_inc: a base+inc (or bare base) of whole seconds, else None."""
    match = TIME_CONTROL.fullmatch((tag or "").strip())
    if match is None:
        return None, None
    return int(match.group(1)), int(match.group(2) or 0)


def speed(tag: str | None) -> str:
    """lichess's speed: base + 40 x inc seconds, 40 moves' share of a moves/seconds period; `-` or a day
    or more per move is correspondence."""
    text = (tag or "").strip()
    if text == "-":
        return "correspondence"
    if period := PERIOD.fullmatch(text):
        moves, seconds = int(period.group(1)), int(period.group(2))
        if moves == 0:
            return "unknown"
        if Fraction(seconds, moves) >= DAY:
            return "correspondence"
        estimate = Fraction(40 * seconds, moves)
    else:
        parts = text.split("+")
        if len(parts) > 2 or not all(SECONDS.fullmatch(part) for part in parts):
            return "unknown"
        estimate = Fraction(parts[0]) + 40 * Fraction(parts[1] if len(parts) == 2 else "0")
    return next((name for limit, name in SPEEDS if estimate < limit), "classical")


def date_time(tags: dict[str, str]) -> tuple[str | None, str | None]:
    """The date and time tags that date the game: UTCDate and UTCTime when present, else Date and Time."""
    if "UTCDate" in tags:
        return tags["UTCDate"], tags.get("UTCTime")
    return tags.get("Date"), tags.get("Time")


def date_parts(date: str | None) -> tuple[int | None, int | None, int | None]:
    """Year (4 digits), month (1 to 12) and day of a `.`, `-` or `/` separated date; None when unknown."""
    parts = [*DATE_SEPARATOR.split((date or "").strip()), "", ""]
    year = int(parts[0]) if YEAR.fullmatch(parts[0]) else None
    month = int(parts[1]) if NUMBER.fullmatch(parts[1]) and 1 <= int(parts[1]) <= 12 else None
    day = int(parts[2]) if NUMBER.fullmatch(parts[2]) else None
    return year, month, day


def timestamp(date: str | None, time: str | None) -> dt.datetime | None:
    """The date at the time (midnight without one), UTC; None when either is partial or invalid."""
    year, month, day = date_parts(date)
    if year is None or month is None or day is None:
        return None
    try:
        midnight = dt.datetime(year, month, day, tzinfo=dt.timezone.utc)
    except ValueError:
        return None
    if time is None:
        return midnight
    clock = TIME.fullmatch(time.strip())
    if clock is None:
        return None
    hours, minutes, seconds = (int(part) for part in clock.groups())
    if hours > 23 or minutes > 59 or seconds > 60:  # a leap second is a time
        return None
    return midnight + dt.timedelta(hours=hours, minutes=minutes, seconds=seconds)


def opening(tags: dict[str, str]) -> dict[str, str | None]:
    name = tags.get("Opening")
    return {
        "eco": tags.get("ECO"),
        "verbose": name,
        "generic": None if name is None else name.split(":", 1)[0].strip(),
    }


def player(tags: dict[str, str], color: str) -> dict[str, Any]:
    return {
        "name": tags.get(color),
        "elo": integer(tags.get(f"{color}Elo")),
        "rating_diff": integer(tags.get(f"{color}RatingDiff")),
        "title": tags.get(f"{color}Title"),
    }


def integer(text: str | None) -> int | None:
    return int(text) if text is not None and INTEGER.fullmatch(text) else None


def move_rows(game: _Game, board: chess.Board) -> dict[int, Row]:
    """The move struct of every node of the game's tree, by `id(node)`; the mainline is played on `board`."""
    rows: dict[int, Row] = {}
    no_checks = (0, 0)
    pending = [(game, index, board.copy(stack=False), no_checks) for index in range(1, len(game.variations))]
    pending += [(game, 0, board, no_checks)] if game.variations else []
    while pending:
        parent, index, line_board, checks = pending.pop()
        node: chess.pgn.ChildNode | None = parent.variations[index]
        while node is not None:
            rows[id(node)], checks = move_row(node, line_board, checks, game.nag_order.get(id(node)))
            alternatives = range(1, len(node.variations))
            pending += [(node, other, line_board.copy(stack=False), checks) for other in alternatives]
            node = node.next()
    return rows


def move_row(
    node: chess.pgn.ChildNode, board: chess.Board, checks: tuple[int, int], nags: list[int] | None
) -> tuple[Row, tuple[int, int]]:
    """The move struct of `node`, which is then played on `board`, and the checks given by each side
    (indexed by color) on the way from the start position to the move, this one included."""
    row = move_fields(board, node.move)
    mover = board.turn
    before = board.copy(stack=False)
    board.push(node.move)
    row["blast"] = blast(before, board, node.move)
    # A check adds to `c` unless it wins (mate, or a variant's win); in Three-check every check counts.
    wins = board.is_checkmate() or board.is_variant_win() or board.is_variant_loss()
    if board.is_check() and (not wins or isinstance(board, chess.variant.ThreeCheckBoard)):
        counts = list(checks)
        counts[mover] += 1
        checks = (counts[0], counts[1])
        row["c"] = checks[mover]
    row["nag"] = nags[0] if nags else None
    row["nags"] = nags
    row.update(comment_fields(node.comment))
    return row, checks


def move_fields(board: chess.Board, move: chess.Move) -> Row:
    """p, f, t, x, castle, promote of `move` on `board` (before it is played); c left None."""
    if move.drop:  # from the pocket: no from-square, nothing taken
        dropped = chess.Piece(move.drop, board.turn).symbol()
        t = chess.square_name(move.to_square)
        return {"p": dropped, "f": None, "t": t, "x": None, "c": None, "castle": None, "promote": None}
    piece = board.piece_at(move.from_square)
    assert piece is not None, f"no piece on {chess.square_name(move.from_square)}"
    castle = castling_side(board, move)
    to_square = move.to_square
    if castle is not None:
        king_file = 6 if castle in "Kk" else 2
        to_square = chess.square(king_file, chess.square_rank(move.from_square))
    return {
        "p": piece.symbol(),
        "f": chess.square_name(move.from_square),
        "t": chess.square_name(to_square),
        "x": None if castle else captured(board, move),
        "c": None,
        "castle": castle,
        "promote": chess.Piece(move.promotion, board.turn).symbol() if move.promotion else None,
    }


def blast(before: chess.Board, after: chess.Board, move: chess.Move) -> str | None:
    """Atomic: the pieces around the capture's square that the explosion removed (letter and square, in
    square order, space separated), not the capturing piece nor the captured one; None when none."""
    if not isinstance(before, chess.variant.AtomicBoard) or not before.is_capture(move):
        return None
    spared = {move.from_square}
    if before.is_en_passant(move):
        spared.add(chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square)))
    removed = [
        f"{piece.symbol()}{chess.square_name(square)}"
        for square in chess.SquareSet(chess.BB_KING_ATTACKS[move.to_square])
        if square not in spared and (piece := before.piece_at(square)) and after.piece_at(square) is None
    ]
    return " ".join(removed) or None


# The material columns (docs/schema.md): the roles each side's count is packed for, four bits each, white
# from bit 0, black from bit 20.
PACKED_ROLES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
# lichess's Divider (scalachess Divider.scala): 2x2 blocks, scored by how many pieces of each side stand in
# them, at their lower rank `y` (1-7).
MIXEDNESS_BLOCKS = [(0x0303 << (x + 8 * y), y + 1) for y in range(7) for x in range(7)]


def packed_material(board: chess.Board) -> int | None:
    """`plies.material` of `board`: None when a count does not fit in four bits."""
    counts = [len(board.pieces(role, color)) for color in (chess.WHITE, chess.BLACK) for role in PACKED_ROLES]
    if max(counts) > 15:
        return None
    return sum(count << (4 * nibble) for nibble, count in enumerate(counts))


def mixedness_score(y: int, white: int, black: int) -> int:
    table = {
        (1, 0): 1 + (8 - y),
        (2, 0): 2 + (y - 2) if y > 2 else 0,
        (3, 0): 3 + (y - 1) if y > 1 else 0,
        (4, 0): 3 + (y - 1) if y > 1 else 0,
        (0, 1): 1 + y,
        (1, 1): 5 + abs(4 - y),
        (2, 1): 4 + (y - 1),
        (3, 1): 5 + (y - 1),
        (0, 2): 2 + (6 - y) if y < 6 else 0,
        (1, 2): 4 + (7 - y),
        (2, 2): 7,
        (0, 3): 3 + (7 - y) if y < 7 else 0,
        (1, 3): 5 + (7 - y),
        (0, 4): 3 + (7 - y) if y < 7 else 0,
    }
    return table.get((white, black), 0)


def majors_and_minors(board: chess.Board) -> int:
    return (board.occupied & ~board.pawns & ~board.kings).bit_count()


def middlegame_reached(board: chess.Board) -> bool:
    """The Divider's middlegame test of `board` (its mixedness counted only when the others fail)."""
    white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
    sparse = (white & chess.BB_RANK_1).bit_count() < 4 or (black & chess.BB_RANK_8).bit_count() < 4
    if majors_and_minors(board) <= 10 or sparse:
        return True
    mixedness = sum(
        mixedness_score(y, (white & block).bit_count(), (black & block).bit_count())
        for block, y in MIXEDNESS_BLOCKS
    )
    return mixedness > 150


class Divider:
    """lichess's Divider fed a game's positions in turn: `phase` of each, 0 opening, 1 middlegame, 2 endgame.
    Each test runs only while its answer is unknown: the middlegame's until it is reached, the endgame's from
    then on (its first position with at most 6 majors and minors is never before the middlegame's, which
    needs at most 10)."""

    def __init__(self) -> None:
        self.middle = self.end = False

    def phase(self, board: chess.Board) -> int:
        self.middle = self.middle or middlegame_reached(board)
        self.end = self.end or (self.middle and majors_and_minors(board) <= 6)
        return 2 if self.end else 1 if self.middle else 0


def material_fields(board: chess.Board, moves: list[chess.Move]) -> Row:
    """The material columns of a game played from `board`: per ply (`ply_material`, `ply_phase`: after
    each move) and per game. The material and phase are null for variants other than standard chess and
    Chess960."""
    standard = type(board) is chess.Board
    fields: Row = {"white_castled": None, "white_castle": None, "black_castled": None, "black_castle": None}
    materials: list[int | None] = []
    phases: list[int | None] = []
    middle = end = None
    divider = Divider()
    for ply, move in enumerate(moves):
        color = "white" if board.turn == chess.WHITE else "black"
        if board.is_castling(move) and fields[f"{color}_castled"] is None:
            fields[f"{color}_castled"] = ply
            fields[f"{color}_castle"] = castling_side(board, move)
        board.push(move)
        phase = divider.phase(board)
        middle = ply if middle is None and phase >= 1 else middle
        end = ply if end is None and phase == 2 else end
        materials.append(packed_material(board))
        phases.append(phase)
    fields |= {"middlegame_ply": middle, "endgame_ply": end, "final_material": packed_material(board)}
    fields["endgame_material"] = None if end is None else materials[end]
    fields |= {"ply_material": materials, "ply_phase": phases}
    if not standard:  # castling is read off the moves in any variant; the material needs a replay
        fields |= dict.fromkeys(("middlegame_ply", "endgame_ply", "endgame_material", "final_material"))
        fields |= {"ply_material": [None] * len(moves), "ply_phase": [None] * len(moves)}
    return fields


def castling_side(board: chess.Board, move: chess.Move) -> str | None:
    """K/Q/k/q for a castling move (king-takes-rook in Chess960 included), else None."""
    if not board.is_castling(move):
        return None
    return CASTLE[board.turn, board.is_kingside_castling(move)]


def captured(board: chess.Board, move: chess.Move) -> str | None:
    if board.is_en_passant(move):
        return chess.Piece(chess.PAWN, not board.turn).symbol()
    victim = board.piece_at(move.to_square)
    return victim.symbol() if victim else None


def comment_fields(comment: str) -> Row:
    """eval_cp / eval_mate / clk from the first `[%eval]` / `[%clk]`, and the comment without them."""
    if COMMAND not in comment:  # no command to read or strip (the regexes' search is slow on long text)
        return {"eval_cp": None, "eval_mate": None, "clk": None, "comment": comment.strip() or None}
    evaluation = EVAL.search(comment)
    clock = CLOCK.search(comment)
    mate = evaluation.group("mate") if evaluation else None
    cp = evaluation.group("cp") if evaluation else None
    return {
        "eval_cp": int(Decimal(cp) * 100) if cp else None,
        "eval_mate": int(mate) if mate else None,
        "clk": clock_seconds(clock) if clock else None,
        "comment": strip_commands(comment) or None,
    }


def clock_seconds(match: re.Match[str]) -> Decimal:
    hours, minutes = int(match.group("hours")), int(match.group("minutes"))
    return (hours * 3600 + minutes * 60 + Decimal(match.group("seconds"))).quantize(TENTH)


def strip_commands(comment: str) -> str:
    """The comment without its [%eval] and [%clk] commands (a space kept where one separated two words)."""
    if COMMAND not in comment:
        return comment.strip()
    for regex in (EVAL, CLOCK):
        comment = regex.sub(lambda match: match.group("prefix") and match.group("suffix"), comment)
    return comment.strip()
