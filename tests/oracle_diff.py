"""The lake's games beside python-chess's (`oracle.expected_games`), field by field, as mismatch lines."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from corpora import CorpusLoad
from oracle import Expected, Row

MISSING = object()


def compare_file(expected: list[Expected], loaded: CorpusLoad, source: str) -> Iterator[str]:
    """The lake's games and rejects of one file, in file order, against python-chess's games."""
    seen = [(row, False) for row in loaded.games.get(source, [])]
    seen += [(reject, True) for reject in loaded.rejects.get(source, [])]
    seen.sort(key=lambda entry: entry[0]["source_offset"])
    if len(seen) != len(expected):
        rejected = sum(is_reject for _, is_reject in seen)
        yield f"games seen: expected {len(expected)}, got {len(seen)} ({rejected} of them rejected)"
        return
    for index, (want, (got, rejected)) in enumerate(zip(expected, seen, strict=True)):
        where = f"game {index} (offset {got['source_offset']})"
        if want.rejected or rejected:
            yield from compare_reject(where, want, got, rejected)
        else:
            assert want.row is not None
            yield from compare_game(where, want.row, got | stored_plies(want.row, loaded, got["game_key"]))


def stored_plies(want: Row, loaded: CorpusLoad, game_key: int) -> Row:
    """The plies' columns of the stored game of key `game_key`; of the one equal to `want` when the lake
    holds the key more than once (a game repeated in several files); none for a game without plies."""
    copies = loaded.plies.get(game_key, [])
    fields = ("ply_material", "ply_phase")
    equal = [c for c in copies if all(c[f] == want[f] for f in fields)]
    return (equal or copies or [{f: [] for f in fields}])[0]


def compare_reject(where: str, want: Expected, got: Row, rejected: bool) -> Iterator[str]:
    if not rejected:
        yield f"{where}: expected a reject ({want.reason}), got a stored game"
    elif not want.rejected:
        yield f"{where}: expected a stored game, got a reject ({got['reason']})"
    elif not got["reason"] or "\n" in got["reason"]:
        yield f"{where}: a reject's reason must be one non-empty line, got {got['reason']!r}"


def compare_game(where: str, want: Row, got: Row) -> Iterator[str]:
    for field, value in want.items():
        if field in ("moves", "variations") or (field == "game_id" and value is None):
            continue  # game_id: only a lichess id is predictable
        yield from compare_value(f"{where} {field}", value, got.get(field, MISSING))
    yield from compare_line(f"{where} mainline", want["moves"], got.get("moves", MISSING))
    yield from compare_variations(where, want["variations"], got.get("variations", MISSING))


def compare_variations(where: str, want: list[Row], got: Any) -> Iterator[str]:
    if got is MISSING or got is None or len(got) != len(want):
        yield f"{where} variations: expected {len(want)} lines, got {describe(got)}"
        return
    for line, lake_line in zip(want, got, strict=True):
        line_where = f"{where} line {line['id']}"
        for field in ("id", "parent", "ply", "comment"):
            yield from compare_value(f"{line_where} {field}", line[field], lake_line.get(field, MISSING))
        yield from compare_line(line_where, line["moves"], lake_line.get("moves", MISSING))


def compare_line(where: str, want: list[Row], got: Any) -> Iterator[str]:
    if got is MISSING or got is None or len(got) != len(want):
        yield f"{where}: expected {len(want)} plies, got {describe(got)}"
        return
    for ply, (move, lake_move) in enumerate(zip(want, got, strict=True)):
        for field, value in move.items():
            lake_value = lake_move.get(field, MISSING)
            if lake_value != value:  # equal values make no mismatch (see compare_value): skip the call
                yield from compare_value(f"{where} ply {ply} {field}", value, lake_value)


def compare_value(where: str, want: Any, got: Any) -> Iterator[str]:
    """`want` against `got`; structs (players, opening) field by field."""
    if got is MISSING:
        yield f"{where}: missing from the lake"
    elif isinstance(want, dict) and isinstance(got, dict):
        for key, value in want.items():
            yield from compare_value(f"{where}.{key}", value, got.get(key, MISSING))
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got) and want != got:
        for index, (item, lake_item) in enumerate(zip(want, got, strict=True)):
            yield from compare_value(f"{where}[{index}]", item, lake_item)
    elif got != want:
        yield f"{where}: expected {short(want)}, got {short(got)}"


def describe(value: Any) -> str:
    return "nothing" if value is MISSING or value is None else f"{len(value)}"


def short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}…"
