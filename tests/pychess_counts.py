"""The SQL library's answers computed in Python from a python-chess replay of the source PGN, for tests.

Each `count_<question>` follows the definitions in the header comment of `sql/<question>.sql`, word for
word, over `Game`s read from the PGN file (never from the lake), and returns the rows in the file's order.
Ratios are exact here; the test allows for the SQL file's rounding.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import chess
import chess.polyglot
import pytest
from oracle import Divider, game_row, read_games, rejection

Row = dict[str, Any]
POINTS = {"W": 1.0, "D": 0.5, "B": 0.0}
VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
PIECES = "PNBRQK"
PHASES = ("opening", "middlegame", "endgame")
THINK_BUCKETS = ((1, "<1s"), (10, "1-10s"), (120, "10-120s"))
THINK_LABELS = [label for _, label in THINK_BUCKETS] + ["120s+"]
# The think time as a percentage of the game's base time (clock_pace's second scale).
THINK_SHARES = ((Decimal("0.5"), "<0.5%"), (2, "0.5-2%"), (5, "2-5%"))
SHARE_LABELS = [label for _, label in THINK_SHARES] + ["5%+"]
CLOCK_BUCKETS = ((10, "<10s"), (30, "10-30s"), (60, "30-60s"), (180, "60-180s"))
CLOCK_LABELS = [label for _, label in CLOCK_BUCKETS] + ["180s+"]
# The clock as a percentage of the game's base time (time_trouble's second scale).
CLOCK_SHARES = ((5, "<5%"), (10, "5-10%"), (25, "10-25%"), (50, "25-50%"))
CLOCK_SHARE_LABELS = [label for _, label in CLOCK_SHARES] + ["50%+"]
SCALES = ("seconds", "base")
MISTAKES = (2, 4, 6)
# What the views count unless the variable `variant` says otherwise: standard chess, Chess960 included.
STANDARD = ("Standard", "Chess960")
# The questions that compare variants: they count every game.
EVERY_VARIANT = frozenset({"variants"})
DROPPED = (("pawn", "P"), ("knight", "N"), ("bishop", "B"), ("rook", "R"), ("queen", "Q"))


@dataclass(frozen=True)
class Game:
    """A game as the lake should hold it (`oracle.game_row`), with what only the board tells, per ply:
    whether the move gives check (mate included) and White's material lead after it."""

    row: Row
    checks: list[bool]
    white_leads: list[int]
    keys: list[int]  # PolyGlot key of the position before each move (chess.polyglot.zobrist_hash)
    sans: list[str]  # each move's SAN, as python-chess writes it from its position
    final_key: int  # PolyGlot key of the final position
    boards: list[chess.Board]  # the position after each move

    @property
    def moves(self) -> list[Row]:
        return self.row["moves"]

    @property
    def elos(self) -> tuple[int | None, int | None]:
        white, black = self.row["players"]
        return white["elo"], black["elo"]

    def points(self) -> float | None:
        """White's points, None when the result is unknown."""
        return POINTS.get(self.row["result"])


@functools.cache
def replay(path: Path) -> tuple[Game, ...]:
    """Every game of the PGN file that the lake stores (python-chess's reading), replayed."""
    games = []
    for game in read_games(path):
        if rejection(game) is not None:
            continue
        board = game.board()
        checks, leads, keys, sans, boards = [], [], [], [], []
        for move in game.mainline_moves():
            keys.append(chess.polyglot.zobrist_hash(board))
            sans.append(board.san(move))
            board.push(move)
            boards.append(board.copy(stack=False))
            checks.append(board.is_check())
            leads.append(material(board, chess.WHITE) - material(board, chess.BLACK))
        row = game_row(game)
        final = chess.polyglot.zobrist_hash(board)
        games.append(
            Game(
                row=row,
                checks=checks,
                white_leads=leads,
                keys=keys,
                sans=sans,
                final_key=final,
                boards=boards,
            )
        )
    return tuple(games)


def standard(games: tuple[Game, ...]) -> tuple[Game, ...]:
    """The games of standard chess (Chess960 included): what the views count by default."""
    return tuple(game for game in games if game.row["variant"] in STANDARD)


def expected(name: str, path: Path) -> list[Row]:
    """The answer of question `name` over the games of the PGN file at `path` that it counts."""
    games = replay(path)
    return COUNTS[name](games if name in EVERY_VARIANT else standard(games))


def material(board: chess.Board, color: chess.Color) -> int:
    return sum(VALUES[piece] * len(board.pieces(piece, color)) for piece in VALUES)


def is_white(letter: str) -> bool:
    return letter.isupper()


def phase(ply: int) -> str:
    return "opening" if ply < 20 else "middlegame" if ply < 60 else "endgame"


def bucket(value: Decimal | int, bounds: tuple[tuple[Decimal | int, str], ...], last: str) -> str:
    """The label of the first bound `value` is below, else `last`."""
    return next((label for bound, label in bounds if value < bound), last)


def mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def percent(part: int, whole: int) -> float:
    return 100 * part / whole


def mover_elo(game: Game, move: Row) -> int | None:
    white, black = game.elos
    return white if is_white(move["p"]) else black


def clock_before(game: Game, ply: int) -> Decimal | None:
    """The mover's clock after its previous move (two plies earlier), its tc_base on its first move."""
    if ply < 2:
        base = game.row["tc_base"]
        return None if base is None else Decimal(base)
    return game.moves[ply - 2]["clk"]


def think_time(game: Game, ply: int) -> Decimal | None:
    before, after = clock_before(game, ply), game.moves[ply]["clk"]
    if before is None or after is None or game.row["tc_inc"] is None:
        return None
    return before - after + game.row["tc_inc"]


def rated(game: Game) -> bool:
    """Both Elos known and a result."""
    return None not in game.elos and game.points() is not None


def game_band(game: Game) -> int:
    """Band of the mean of the two Elos: floor((w + b) / 2 / 200) * 200."""
    white, black = game.elos
    assert white is not None and black is not None
    return (white + black) // 400 * 200


def with_share(rows: list[Row], group: str, column: str) -> list[Row]:
    """Adds `column` = 100 x moves-or-games / the total of the row's `group`."""
    count = "games" if "games" in rows[0] else "moves"
    totals: Counter[Any] = Counter()
    for row in rows:
        totals[row[group]] += row[count]
    return [{**row, column: percent(row[count], totals[row[group]])} for row in rows]


def count_summary(games: tuple[Game, ...]) -> list[Row]:
    by_type = grouped(games, lambda game: game.row["type"])
    rows = [
        {
            "type": kind,
            "games": len(members),
            "avg_plies": mean(game.row["n_plies"] for game in members),
            "white_score": mean(p for game in members if (p := game.points()) is not None),
            "mated": mean(float(game.row["mate"]) for game in members),
            "with_clock": mean(float(game.row["has_clock"]) for game in members),
            "with_eval": mean(float(game.row["has_eval"]) for game in members),
        }
        for kind, members in by_type.items()
    ]
    return sorted(rows, key=lambda row: (-row["games"], row["type"]))


def ply_bucket(ply: int) -> tuple[int, str]:
    """(sort key, label) of a ply index: '<10', '10-20' ... '190-200', 'other'."""
    if ply < 10:
        return 0, "<10"
    if ply < 200:
        low = ply // 10 * 10
        return low, f"{low}-{low + 10}"
    return 200, "other"


def count_blunders(games: tuple[Game, ...]) -> list[Row]:
    moves: Counter[tuple[str, int, str]] = Counter()
    blunders: Counter[tuple[str, int, str, str]] = Counter()
    for game in games:
        if not game.row["has_eval"]:
            continue
        for ply, move in enumerate(game.moves):
            key = (game.row["type"], *ply_bucket(ply))
            moves[key] += 1
            blunders[(*key, move["p"].upper())] += move["nag"] == 4
    return [
        {
            "type": kind,
            "bucket": label,
            "piece": piece,
            "moves": moves[kind, low, label],
            "blunders": blunders[kind, low, label, piece],
            "per_1000": 1000 * blunders[kind, low, label, piece] / moves[kind, low, label],
        }
        for kind, low, label in sorted(moves)
        for piece in PIECES
    ]


def count_castling(games: tuple[Game, ...]) -> list[Row]:
    wings = {
        "white_castled": "KQ",
        "black_castled": "kq",
        "kingside_castled": "Kk",
        "queenside_castled": "Qq",
    }
    rows = []
    for kind, members in sorted(grouped(games, lambda game: game.row["type"]).items()):
        for within in (5, 10, 15):
            early = [{m["castle"] for m in game.moves[: 2 * within]} - {None} for game in members]
            row = {"type": kind, "within_moves": within, "games": len(members)}
            row["games_castled"] = sum(1 for castles in early if castles)
            row |= {
                name: sum(1 for castles in early if castles & set(sides)) for name, sides in wings.items()
            }
            rows.append(row)
    return rows


def count_clock_pace(games: tuple[Game, ...]) -> list[Row]:
    counts: Counter[tuple[str, int, int]] = Counter()
    for game in games:
        if not game.row["has_clock"] or game.row["tc_base"] is None:
            continue
        base = game.row["tc_base"]
        for ply in range(len(game.moves)):
            think = think_time(game, ply)
            if think is not None and think >= 0:
                counts[game.row["type"], 0, THINK_LABELS.index(bucket(think, THINK_BUCKETS, "120s+"))] += 1
                if base > 0:
                    share = bucket(100 * think / base, THINK_SHARES, "5%+")
                    counts[game.row["type"], 1, SHARE_LABELS.index(share)] += 1
    return scaled_rows(counts, (THINK_LABELS, SHARE_LABELS), "bucket", "pct")


def scaled_rows(
    counts: Counter[tuple[str, int, int]], labels: tuple[list[str], list[str]], column: str, share: str
) -> list[Row]:
    """Rows of every bucket of each (type, scale) counted, empty ones too, with `share` = 100 x moves / the
    (type, scale)'s moves."""
    scales = sorted({(kind, scale) for kind, scale, _ in counts})
    rows = []
    for kind, scale in scales:
        total = sum(counts[kind, scale, i] for i in range(len(labels[scale])))
        for i, label in enumerate(labels[scale]):
            moves = counts[kind, scale, i]
            rows.append({"type": kind, "scale": SCALES[scale], column: label, "moves": moves})
            rows[-1][share] = percent(moves, total)
    return rows


def count_results_by_rating(games: tuple[Game, ...]) -> list[Row]:
    groups = grouped((g for g in games if rated(g)), lambda game: (game.row["type"], game_band(game)))
    return [
        {
            "type": kind,
            "band": band,
            "games": len(members),
            "white_wins": sum(1 for game in members if game.row["result"] == "W"),
            "draws": sum(1 for game in members if game.row["result"] == "D"),
            "black_wins": sum(1 for game in members if game.row["result"] == "B"),
            "white_score": mean(game.points() or 0.0 for game in members),
        }
        for (kind, band), members in sorted(groups.items())
    ]


def rating_difference(game: Game) -> int:
    white, black = game.elos
    assert white is not None and black is not None
    return white - black


def count_results_by_rating_diff(games: tuple[Game, ...]) -> list[Row]:
    def diff_band(game: Game) -> tuple[str, int]:
        return game.row["type"], max(-400, min(300, rating_difference(game) // 100 * 100))

    groups = grouped((g for g in games if rated(g)), diff_band)
    return [
        {
            "type": kind,
            "diff_band": band,
            "games": len(members),
            "white_score": mean(game.points() or 0.0 for game in members),
            "expected_score": mean(1 / (1 + 10 ** (-rating_difference(game) / 400)) for game in members),
        }
        for (kind, band), members in sorted(groups.items())
    ]


def count_blunders_by_rating(games: tuple[Game, ...]) -> list[Row]:
    nags: defaultdict[tuple[str, int], list[int | None]] = defaultdict(list)
    for game in games:
        if game.row["has_eval"]:
            for move in game.moves:
                if (elo := mover_elo(game, move)) is not None:
                    nags[game.row["type"], elo // 200 * 200].append(move["nag"])
    rows = []
    for (kind, band), values in sorted(nags.items()):
        row = {"type": kind, "band": band, "moves": len(values)}
        row |= {"inaccuracies": values.count(6), "mistakes": values.count(2), "blunders": values.count(4)}
        row["error_pct"] = percent(sum(1 for nag in values if nag in MISTAKES), len(values))
        row["blunder_pct"] = percent(values.count(4), len(values))
        rows.append(row)
    return rows


def count_openings(games: tuple[Game, ...]) -> list[Row]:
    def family(game: Game) -> tuple[int, str]:
        return game_band(game), game.row["opening"]["generic"]

    chosen = (game for game in games if rated(game) and game.row["opening"]["generic"] is not None)
    rows = [
        {
            "band": band,
            "family": name,
            "games": len(members),
            "white_score": mean(game.points() or 0.0 for game in members),
        }
        for (band, name), members in grouped(chosen, family).items()
    ]
    rows = with_share(rows, "band", "share_pct")
    return sorted(rows, key=lambda row: (row["band"], -row["games"], row["family"]))


def count_time_trouble(games: tuple[Game, ...]) -> list[Row]:
    nags: defaultdict[tuple[str, int, int], list[int | None]] = defaultdict(list)
    for game in games:
        if not game.row["has_eval"] or game.row["tc_base"] is None:
            continue
        base = game.row["tc_base"]
        for ply, move in enumerate(game.moves):
            clock = clock_before(game, ply)
            # a later move counts when its think time is known: its own clock too
            if clock is not None and (ply < 2 or think_time(game, ply) is not None):
                kind = game.row["type"]
                nags[kind, 0, CLOCK_LABELS.index(bucket(clock, CLOCK_BUCKETS, "180s+"))].append(move["nag"])
                if base > 0:
                    share = bucket(100 * clock / base, CLOCK_SHARES, "50%+")
                    nags[kind, 1, CLOCK_SHARE_LABELS.index(share)].append(move["nag"])
    counts = Counter({key: len(values) for key, values in nags.items()})
    rows = scaled_rows(counts, (CLOCK_LABELS, CLOCK_SHARE_LABELS), "clock_bucket", "share_pct")
    for row in rows:
        scale = SCALES.index(row["scale"])
        labels = (CLOCK_LABELS, CLOCK_SHARE_LABELS)[scale]
        values = nags.get((row["type"], scale, labels.index(row["clock_bucket"])), [])
        row["mistakes"] = sum(1 for nag in values if nag in MISTAKES)
        row["mistake_pct"] = percent(row["mistakes"], len(values)) if values else None
    return rows


def count_piece_phase(games: tuple[Game, ...]) -> list[Row]:
    counts = Counter(
        (PHASES.index(phase(ply)), PIECES.index(move["p"].upper()))
        for game in games
        for ply, move in enumerate(game.moves)
    )
    rows = [{"phase": PHASES[p], "piece": PIECES[k], "moves": counts[p, k]} for p, k in sorted(counts)]
    return with_share(rows, "phase", "pct")


def count_square_heat(games: tuple[Game, ...]) -> list[Row]:
    counts: Counter[tuple[str, str]] = Counter()
    for game in games:
        for move, check in zip(game.moves, game.checks, strict=True):
            kinds = {"capture": move["x"] is not None, "check": check, "blunder": move["nag"] == 4}
            counts.update((kind, move["t"]) for kind, marked in kinds.items() if marked)
    return [
        {"kind": kind, "square": square, "file": square[0], "rank": int(square[1]), "n": counts[kind, square]}
        for kind, square in sorted(counts)
    ]


def count_material_by_phase(games: tuple[Game, ...]) -> list[Row]:
    points: defaultdict[tuple[int, int], list[float]] = defaultdict(list)
    for game in games:
        if game.row["start_fen"] is not None or (score := game.points()) is None:
            continue
        for ply, lead in enumerate(game.white_leads):
            points[PHASES.index(phase(ply)), max(-5, min(5, lead))].append(score)
    return [
        {"phase": PHASES[p], "white_lead": lead, "positions": len(values), "white_score": mean(values)}
        for (p, lead), values in sorted(points.items())
    ]


def piece_counts(board: chess.Board) -> Counter[str]:
    """Each piece letter's count on `board` (P N B R Q K for White's, lower case for Black's)."""
    return Counter(piece.symbol() for piece in board.piece_map().values())


def divider_phases(boards: list[chess.Board]) -> list[str]:
    """The phase of each position by lichess's Divider (`oracle.Divider`)."""
    divider = Divider()
    return [PHASES[divider.phase(board)] for board in boards]


def imbalance(pieces: Counter[str]) -> tuple[str, bool] | None:
    """The imbalance of a position's pieces and whether White is the side ahead in it (sql header)."""
    d = {role: pieces[role] - pieces[role.lower()] for role in "QRBNP"}
    minors = d["B"] + d["N"]
    if d["Q"] == d["R"] == 0 and {(pieces["B"], pieces["N"]), (pieces["b"], pieces["n"])} == {(2, 0), (0, 2)}:
        return "bishop pair v knight pair", pieces["B"] == 2
    if d["Q"] == 0 and abs(d["R"]) == 1 and minors == -d["R"]:
        return "the exchange", d["R"] > 0
    if abs(d["Q"]) == 1 and d["R"] == -2 * d["Q"] and minors == 0:
        return "queen v two rooks", d["Q"] > 0
    same = d["Q"] == d["R"] == 0 and pieces["B"] == pieces["b"] and pieces["N"] == pieces["n"]
    if same and abs(d["P"]) == 1:
        return "pawn up", d["P"] > 0
    return None


def count_material_imbalances(games: tuple[Game, ...]) -> list[Row]:
    scores: defaultdict[tuple[int, str], list[tuple[bool, float]]] = defaultdict(list)
    for game in games:
        if (points := game.points()) is None:
            continue
        for phase_name, pieces in zip(
            divider_phases(game.boards), map(piece_counts, game.boards), strict=True
        ):
            if (found := imbalance(pieces)) is not None:
                kind, white_ahead = found
                scores[PHASES.index(phase_name), kind].append(
                    (white_ahead, points if white_ahead else 1 - points)
                )
    return [
        {
            "phase": PHASES[p],
            "imbalance": kind,
            "positions": len(values),
            "white_ahead_pct": percent(sum(ahead for ahead, _ in values), len(values)),
            "ahead_score": mean(score for _, score in values),
        }
        for (p, kind), values in sorted(scores.items())
    ]


def endgame_type(pieces: Counter[str]) -> str:
    queens = pieces["Q"] + pieces["q"]
    rooks = pieces["R"] + pieces["r"]
    minors = sum(pieces[letter] for letter in "BbNn")
    if queens:
        return "queen and other" if rooks + minors else "queen"
    if rooks:
        return "rook and minor" if minors else "rook"
    return "minor piece" if minors else "pawn"


def count_endgame_types(games: tuple[Game, ...]) -> list[Row]:
    reached: defaultdict[str, list[tuple[Game, int]]] = defaultdict(list)
    for game in games:
        phases = divider_phases(game.boards)
        if "endgame" in phases:
            ply = phases.index("endgame")
            reached[endgame_type(piece_counts(game.boards[ply]))].append((game, ply))
    rows = [
        {
            "endgame": kind,
            "games": len(members),
            "white_wins": sum(game.row["result"] == "W" for game, _ in members),
            "draws": sum(game.row["result"] == "D" for game, _ in members),
            "black_wins": sum(game.row["result"] == "B" for game, _ in members),
            "mated": sum(bool(game.row["mate"]) for game, _ in members),
            "avg_plies": mean(len(game.moves) - ply - 1 for game, ply in members),
        }
        for kind, members in reached.items()
    ]
    return sorted(rows, key=lambda row: (-row["games"], row["endgame"]))


def count_castling_by_rating(games: tuple[Game, ...]) -> list[Row]:
    rows = []
    for band, members in sorted(grouped(filter(rated, games), game_band).items()):
        castles = {"white": [], "black": []}
        kingside = 0
        for game in members:
            for color, letters in (("white", "KQ"), ("black", "kq")):
                plies = [
                    ply for ply, move in enumerate(game.moves) if move["castle"] and move["castle"] in letters
                ]
                if plies:
                    castles[color].append(plies[0])
                    kingside += game.moves[plies[0]]["castle"] in "Kk"
        castled = len(castles["white"]) + len(castles["black"])
        rows.append(
            {
                "band": band,
                "games": len(members),
                "white_castled_pct": percent(len(castles["white"]), len(members)),
                "black_castled_pct": percent(len(castles["black"]), len(members)),
                "white_castle_move": mean(ply // 2 + 1 for ply in castles["white"]),
                "black_castle_move": mean(ply // 2 + 1 for ply in castles["black"]),
                "kingside_pct": percent(kingside, castled) if castled else None,
            }
        )
    return rows


def count_terminations(games: tuple[Game, ...]) -> list[Row]:
    groups = grouped(games, lambda game: (game.row["type"], game.row["termination"] or "?"))
    rows = [
        {
            "type": kind,
            "termination": termination,
            "games": len(members),
            "mated": sum(1 for game in members if game.row["mate"]),
            "white_wins": sum(1 for game in members if game.row["result"] == "W"),
            "draws": sum(1 for game in members if game.row["result"] == "D"),
            "black_wins": sum(1 for game in members if game.row["result"] == "B"),
        }
        for (kind, termination), members in groups.items()
    ]
    rows = with_share(rows, "type", "pct")
    return sorted(rows, key=lambda row: (row["type"], -row["games"], row["termination"]))


def count_variants(games: tuple[Game, ...]) -> list[Row]:
    rows = []
    for variant, members in grouped(games, lambda game: game.row["variant"]).items():
        known = [game for game in members if game.row["result"] in POINTS]
        moves = [move for game in members for move in game.moves]
        drops = Counter(move["p"].upper() for move in moves if move["f"] is None)
        total = sum(drops.values())
        row: Row = {
            "variant": variant,
            "games": len(members),
            "avg_plies": mean(len(game.moves) for game in members),
            "decisive_pct": percent(sum(game.row["result"] != "D" for game in known), len(known))
            if known
            else None,
            "drops": total,
        }
        row |= {
            f"{name}_drop_pct": percent(drops[letter], total) if total else None for name, letter in DROPPED
        }
        row["explosions"] = sum(move["blast"] is not None for move in moves)
        rows.append(row)
    return sorted(rows, key=lambda row: (-row["games"], row["variant"]))


def count_explorer(games: tuple[Game, ...]) -> list[Row]:
    """The explorer of the starting position (explorer_fen unset), over its first 10 plies' positions (the
    stored keys: the lake has no position index)."""
    return explorer_rows(games, chess.polyglot.zobrist_hash(chess.Board()), plies=10)


def passes_filters(
    row: Row,
    type: str | None = None,
    min_rating: int | None = None,
    max_rating: int | None = None,
    since: dt.date | None = None,
    until: dt.date | None = None,
    player: str | None = None,
) -> bool:
    """Whether a game (its oracle row) passes the game filters as the SQL views define them
    (`queries.filters`): its speed; the mean of both Elos, both known; its UTC date, bounds included; either
    player's name."""
    white, black = (p["elo"] for p in row["players"])
    mean = None if white is None or black is None else (white + black) / 2
    day = row["datetime"].date() if row["datetime"] is not None else None
    return (
        (type is None or row["type"] == type)
        and (min_rating is None or (mean is not None and mean >= min_rating))
        and (max_rating is None or (mean is not None and mean <= max_rating))
        and (since is None or (day is not None and day >= since))
        and (until is None or (day is not None and day <= until))
        and (player is None or player in (p["name"] for p in row["players"]))
    )


def explorer_rows(
    games: Iterable[Game],
    key: int,
    *,
    plies: int | None = None,
    keep: Callable[[Game], bool] = lambda _: True,
) -> list[Row]:
    """The explorer's rows at the position of PolyGlot key `key` (unsigned, as python-chess gives it): each
    game `keep` keeps counts once, by the move it played the first time it stood there (among its first
    `plies` positions when given); the columns of sql/explorer.sql."""
    played: defaultdict[str, list[tuple[Game, int]]] = defaultdict(list)
    for game in games:
        ply = next((i for i, k in enumerate(game.keys[:plies]) if k == key), None)
        if ply is not None and keep(game):
            move = game.moves[ply]
            played[move["f"] + move["t"] + (move["promote"] or "").lower()].append((game, ply))
    rows = []
    for uci, plays in played.items():
        results = Counter(game.row["result"] for game, _ in plays)
        elos = [(w + b) / 2 for w, b in (game.elos for game, _ in plays) if w is not None and b is not None]
        evals = [game.moves[ply]["eval_cp"] for game, ply in plays if game.moves[ply]["eval_cp"] is not None]
        thinks = [float(t) for game, ply in plays if (t := think_time(game, ply)) is not None]
        dates = [game.row["datetime"] for game, _ in plays if game.row["datetime"] is not None]
        game, ply = plays[0]
        rows.append(
            {
                "uci": uci,
                "san": game.sans[ply],
                "games": len(plays),
                "white_wins": results["W"],
                "draws": results["D"],
                "black_wins": results["B"],
                "mean_elo": mean(elos),
                "mean_eval_cp": mean(evals),
                "mean_think": mean(thinks),
                "first_played": min(dates).strftime("%Y-%m-%d %H:%M:%S") if dates else None,
            }
        )
    return sorted(rows, key=lambda row: (-row["games"], row["uci"]))


def digits(column: str) -> int:
    """Decimals the SQL files round a ratio column to."""
    return 1 if column == "avg_plies" else 2 if column.endswith(("pct", "per_1000")) else 3


def assert_rows_match(actual: list[Row], expected: list[Row], where: str = "") -> None:
    """Same rows in the same order, column for column; a ratio within the rounding of its SQL column.
    `where` names the answer in a failure's message."""
    where = f"{where}: " if where else ""
    assert [set(row) for row in actual[:1]] == [set(row) for row in expected[:1]], f"{where}columns differ"
    assert expected, f"{where}the source gives no rows to compare: the test would assert nothing"
    # Row by row first, the lengths last, so that a failure shows the first row that differs.
    for index, (got, want) in enumerate(zip(actual, expected, strict=False)):
        for column, value in want.items():
            if isinstance(value, float):
                tolerance = 0.5 * 10 ** -digits(column) + 1e-9
                assert got[column] == pytest.approx(value, abs=tolerance), (
                    f"{where}row {index}: {got} != {want}"
                )
            else:
                assert got[column] == value, f"{where}row {index}: {got} != {want}"
    assert len(actual) == len(expected), f"{where}{len(actual)} rows, expected {len(expected)}"


def grouped(games: Iterable[Game], key: Callable[[Game], Any]) -> dict[Any, list[Game]]:
    groups: defaultdict[Any, list[Game]] = defaultdict(list)
    for game in games:
        groups[key(game)].append(game)
    return dict(groups)


COUNTS: dict[str, Callable[[tuple[Game, ...]], list[Row]]] = {
    name.removeprefix("count_"): function
    for name, function in list(globals().items())
    if name.startswith("count_") and callable(function)
}
