"""The page's HTML: the board (python-chess's SVG, drawn here), the line played, the moves table, the games
and the forms; an error page of one line. Every link is a plain link carrying the view in its query (the
page works without its script)."""

from __future__ import annotations

import html
from collections.abc import Iterable

import chess
import chess.svg
import polars as pl

from warehouse.explorer_page.answers import INDEX, STORED, TOP_GAMES
from warehouse.explorer_page.view import View
from warehouse.lake.layout import SPEEDS
from warehouse.lake.plies import KEYED_PLIES

BOARD_SIZE = 360
RESULTS = {"W": "1-0", "B": "0-1", "D": "½-½"}


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value))


def page(title: str, lake: str, body: str, error: str | None = None) -> str:
    shown = f'<p class="error" id="error">{esc(error)}</p>' if error else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/assets/explorer.css"><script src="/assets/explorer.js" defer></script></head>
<body><header><h1><a href="/">Opening explorer</a></h1><span class="lake">{esc(lake)}</span></header>
{shown}{body}</body></html>
"""


def error_page(lake: str, message: str, entered: dict[str, str] | None = None) -> str:
    """One line saying what is wrong, with the position form (as entered) to try again."""
    body = (
        f'<main><section class="side">{position_form(entered or {})}<p><a href="/">The start position</a></p>'
    )
    return page("Opening explorer: error", lake, body + "</section></main>", message)


def explorer_page(
    lake: str,
    view: View,
    moves: pl.DataFrame,
    games: pl.DataFrame,
    opening: tuple[str | None, bool],
    how: str,
) -> str:
    board = view.board()
    side = (
        f'<div class="board">{board_svg(view, board)}</div>'
        f"{opening_line(opening)}{line_links(view)}"
        f'<p><a id="flip" href="/?{esc(view.query(flip=not view.flip))}">Flip the board</a></p>'
        f'<p class="fen">{esc(board.fen())}</p>'
        f"{position_form({})}"
    )
    tables = (
        f"{filters_form(view)}{found_note(how)}{moves_table(view, moves)}"
        f"<h2>Games through this position</h2>{games_part(view, games)}"
    )
    body = f'<main><section class="side">{side}</section><section class="tables">{tables}</section></main>'
    return page(f"Opening explorer: {board.fen()}", lake, body)


def board_svg(view: View, board: chess.Board) -> str:
    last = board.peek() if board.move_stack else None
    return chess.svg.board(board, size=BOARD_SIZE, flipped=view.flip, lastmove=last)


def opening_line(opening: tuple[str | None, bool]) -> str:
    name, own = opening
    if name is None:
        return '<p class="opening">No named opening</p>'
    return f'<p class="opening">{esc(name)}{"" if own else " (the line left it)"}</p>'


def line_links(view: View) -> str:
    """The moves played so far, each a link back to the position after it."""
    board = chess.Board(view.fen)
    links = [f'<a class="ply" data-ply="0" href="/?{esc(view.query(moves=()))}">Start</a>']
    for ply, uci in enumerate(view.moves, 1):
        move = chess.Move.from_uci(uci)
        number = f"{board.fullmove_number}." if board.turn == chess.WHITE else f"{board.fullmove_number}…"
        san = board.san(move)
        board.push(move)
        href = esc(view.query(moves=view.moves[:ply]))
        links.append(f'<a class="ply" data-ply="{ply}" href="/?{href}">{number}&nbsp;{esc(san)}</a>')
    return f'<nav class="line" id="line">{" ".join(links)}</nav>'


def position_form(entered: dict[str, str]) -> str:
    return (
        '<form id="position" action="/" method="get"><h2>Enter a position</h2>'
        f'<label>FEN <input name="fen" value="{esc(entered.get("fen"))}" size="40"></label>'
        f'<label>Moves <input name="line" value="{esc(entered.get("line"))}" placeholder="1. e4 c5 2. Nf3">'
        '</label><button type="submit">Go</button></form>'
    )


def filters_form(view: View) -> str:
    kept = view.kept
    hidden = "".join(
        f'<input type="hidden" name="{name}" value="{esc(value)}">'
        for name, value in (
            ("fen", view.fen),
            ("moves", " ".join(view.moves)),
            ("flip", "1" if view.flip else ""),
        )
        if value
    )
    speeds = "".join(
        f'<option value="{s}"{" selected" if s == kept.type else ""}>{s}</option>' for s in ("", *SPEEDS)
    )

    def field(name: str, label: str, value: object, kind: str = "text") -> str:
        return f'<label>{label} <input type="{kind}" name="{name}" value="{esc(value)}"></label>'

    return (
        f'<form id="filters" action="/" method="get">{hidden}'
        f'<label>Speed <select name="speed">{speeds}</select></label>'
        f"{field('min_rating', 'Mean rating from', kept.min_rating, 'number')}"
        f"{field('max_rating', 'to', kept.max_rating, 'number')}"
        f"{field('since', 'Dates from', kept.since, 'date')}{field('until', 'to', kept.until, 'date')}"
        f"{field('player', 'Player', kept.player)}{field('variant', 'Variant', view.variant)}"
        '<button type="submit">Apply</button></form>'
    )


def found_note(how: str) -> str:
    """Which games the page counts, as `Answers.found` found them."""
    index = "<code>python -m loaders.position_index</code>"
    text = {
        INDEX: "Every game through this position, at any ply (the position index).",
        STORED: f"The games that stand here within their first {KEYED_PLIES} plies (the stored keys, fast); "
        f"one reaching it later by another move order counts once {index} has built the position index.",
    }.get(
        how,
        f"Found by a replay of every game (no game stands here within its first {KEYED_PLIES} plies; "
        f"slow on a large lake: {index} builds the position index).",
    )
    return f'<p class="found" id="found" data-how="{how}">{text}</p>'


def moves_table(view: View, moves: pl.DataFrame) -> str:
    rows = "".join(move_row(view, row) for row in moves.iter_rows(named=True))
    total = int(moves["games"].sum()) if len(moves) else 0
    head = "<tr><th>Move</th><th>Games</th><th>White / draw / black</th><th>Mean rating</th>"
    head += "<th>Mean eval</th><th>Mean think</th><th>First played</th></tr>"
    empty = '<tr><td colspan="7">No game the filters keep plays a move from here.</td></tr>'
    return (
        f'<table id="moves"><thead>{head}</thead><tbody>{rows or empty}</tbody>'
        f'<tfoot><tr><td>Σ</td><td class="games">{total:,}</td><td colspan="5"></td></tr></tfoot></table>'
    )


def move_row(view: View, row: dict) -> str:
    href = esc(view.query(moves=(*view.moves, row["uci"])))
    shares = [row["white_wins"], row["draws"], row["black_wins"]]
    bar = "".join(
        f'<span class="{kind}" style="width:{100 * n / row["games"]:.1f}%">{percent(n, row["games"])}</span>'
        for kind, n in zip(("w", "d", "b"), shares, strict=True)
    )
    eval_after = row["mean_eval_cp"] / 100 if row["mean_eval_cp"] is not None else None
    cells = [
        f'<td class="san"><a href="/?{href}">{esc(row["san"])}</a></td>',
        f'<td class="games">{row["games"]:,}</td>',
        f'<td class="bar"><div class="wdb" data-white="{shares[0]}" data-draws="{shares[1]}" '
        f'data-black="{shares[2]}">{bar}</div></td>',
        f'<td class="num">{number(row["mean_elo"], 0)}</td>',
        f'<td class="num">{number(eval_after, 2, signed=True)}</td>',
        f'<td class="num">{number(row["mean_think"], 1, " s")}</td>',
        f'<td title="{esc(row["first_played"])}">{esc((row["first_played"] or "")[:10])}</td>',
    ]
    return f'<tr class="move" data-uci="{esc(row["uci"])}">{"".join(cells)}</tr>'


def percent(part: int, whole: int) -> str:
    share = 100 * part / whole
    return f"{share:.0f}%" if share >= 8 else ""


def number(value: float | None, digits: int, unit: str = "", signed: bool = False) -> str:
    return "" if value is None else f"{value:{'+' if signed else ''},.{digits}f}{unit}"


def games_part(view: View, games: pl.DataFrame) -> str:
    link = (
        f'<p><a id="pgn" href="/pgn?{esc(view.query())}" download="explorer.pgn">'
        f"Download the {len(games):,} games as PGN</a></p>"
    )
    head = "<tr><th>White</th><th>Black</th><th>Result</th><th>Date</th><th>Speed</th><th>Game</th></tr>"
    rows = "".join(game_row(row) for row in games.head(TOP_GAMES).iter_rows(named=True))
    shown = f"<p>The {min(len(games), TOP_GAMES)} best rated, then the latest:</p>" if len(games) else ""
    return f'{link}{shown}<table id="games"><thead>{head}</thead><tbody>{rows}</tbody></table>'


def game_row(row: dict) -> str:
    # Lichess's ids are the games whose key is not negative (docs/schema.md: content ids' keys are).
    game = esc(row["game_id"])
    if row["game_key"] >= 0:
        game = f'<a href="https://lichess.org/{game}">{game}</a>'
    date = row["datetime"].strftime("%Y-%m-%d") if row["datetime"] is not None else ""
    cells: Iterable[str] = (
        f"{esc(row['white_name'])} ({esc(row['white_elo'] or '?')})",
        f"{esc(row['black_name'])} ({esc(row['black_elo'] or '?')})",
        esc(RESULTS.get(row["result"], "*")),
        date,
        esc(row["type"]),
        game,
    )
    return f'<tr class="game">{"".join(f"<td>{c}</td>" for c in cells)}</tr>'
