"""Round trips through JSON: PGN → lake → study JSON → lake → PGN gives the source's games (python-chess
reads both), BGN JSON → lake → BGN JSON gives the same lines, and hand-written study documents come back
as written. Every study document exported validates against the spec's JSON Schema."""

from __future__ import annotations

import bz2
import copy
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import chess.variant
import jsonschema
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest
from corpora import CorpusLoader, folder_batches, folder_lakes
from pgn_round_trip import FOLDERS, compare, next_offsets, original_game, read
from support import SAMPLE, read_records, read_rejects

from warehouse.exports.bgn_json import export_json
from warehouse.exports.pgn import pgn_games
from warehouse.exports.study import export_study, study_documents
from warehouse.ingest import json_files
from warehouse.ingest.json_files import load_json
from warehouse.ingest.load import load_input
from warehouse.lake import Lake

ROOT = Path(__file__).resolve().parents[1]
# The spec's schema and example (../shared/specs), unchanged.
SCHEMA = json.loads((ROOT / "docs" / "study.schema.json").read_text())
EXAMPLE = ROOT / "tests" / "data" / "json" / "study-game.example.json"
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
MAX_REPORTED = 10
# A tournament folder's documents are validated, and its games compared with python-chess, on an even
# sample of about this many (`stride`): pure-Python JSON Schema validation and two python-chess parses a
# game took 3 of this test's 4 minutes on the two big tournament folders, whose games are alike. Every game
# still goes through the export and the import, and the PGN export test compares each one. Other folders,
# the edge cases, are checked whole.
SAMPLED = 200
SAMPLED_FOLDERS = "corpora/tournament"


def stride(folder: str, games: int) -> int:
    """Every how many of a folder's `games` a test checks: all of them but in the tournament folders."""
    return -(-games // SAMPLED) if folder.startswith(SAMPLED_FOLDERS) else 1


def import_json(path: Path, lake: Path) -> dict[str, Any]:
    """Loads one JSON input; its load record."""
    result = load_json(str(path), Lake.open(lake), dedup=False, jobs=1)
    assert result.already_loaded is None
    return read_records(lake)[-1]


@pytest.mark.parametrize("folder", FOLDERS)
def test_pgn_study_lake_pgn(folder: str, corpus_loads: CorpusLoader, tmp_path: Path) -> None:
    lakes = folder_lakes(folder, corpus_loads)
    if not lakes:
        pytest.skip(f"the lake stored no game of {folder}")
    sources: list[tuple[str, int]] = []
    for n, lake in enumerate(lakes):
        # The study export walks the lake in the PGN export's order: its lines pair with their sources.
        sources += [(source, offset) for source, offset, _ in pgn_games(Lake.open(lake))]
        export_study(Lake.open(lake), tmp_path / f"{n}.jsonl", lines=True)
    lake2 = tmp_path / "lake2"
    line_of: dict[tuple[str, int], int] = {}
    loaded_texts: set[bytes] = set()
    every = stride(folder, len(sources))
    for n in range(len(lakes)):
        path = tmp_path / f"{n}.jsonl"
        offset = 0
        for line in path.read_bytes().splitlines(keepends=True):
            if len(line_of) % every == 0:
                errors = [e.message for e in VALIDATOR.iter_errors(json.loads(line))]
                assert not errors, errors[:3]
            line_of[str(path), offset] = len(line_of)
            offset += len(line)
        # Two batches holding copies of the same file export the same bytes: one load of them (the
        # second would be skipped as already loaded), compared against the first copy's source.
        if path.read_bytes() not in loaded_texts:
            loaded_texts.add(path.read_bytes())
            record = import_json(path, lake2)
            assert record["games_rejected"] == 0, read_rejects(lake2)[:3]
    ends = next_offsets(sources)
    exported = list(pgn_games(Lake.open(lake2)))
    assert len(exported) == sum(text.count(b"\n") for text in loaded_texts)
    mismatches = []
    for json_file, json_offset, text in exported:
        if line_of[json_file, json_offset] % every:
            continue
        source, offset = sources[line_of[json_file, json_offset]]
        original = original_game(Path(source), offset, ends[source, offset])
        mismatches += [f"{Path(source).name} @{offset}: {p}" for p in compare(original, read(text))]
    if mismatches:
        shown = "\n".join(mismatches[:MAX_REPORTED])
        pytest.fail(f"{len(mismatches)} mismatches in {folder}:\n{shown}", pytrace=False)


def bgn_lines(root: Path) -> list[str]:
    return sorted(
        line
        for path in root.glob("**/*.json.bz2")
        for line in bz2.decompress(path.read_bytes()).decode().splitlines()
    )


@pytest.mark.parametrize("folder", ["data", "data/edge", "corpora/edge/python-chess/data/pgn"])
def test_bgn_lake_bgn(folder: str, corpus_loads: CorpusLoader, tmp_path: Path) -> None:
    (inputs,) = folder_batches(folder) or pytest.skip(f"no input under {folder}")
    lake1 = corpus_loads(tuple(inputs)).lake
    export_json(Lake.open(lake1), tmp_path / "bgn1")
    lake2 = tmp_path / "lake2"
    for path in sorted((tmp_path / "bgn1").glob("**/*.json.bz2")):
        record = import_json(path, lake2)
        assert record["games_rejected"] == 0, read_rejects(lake2)[:3]
    export_json(Lake.open(lake2), tmp_path / "bgn2")
    first = bgn_lines(tmp_path / "bgn1")
    assert first and bgn_lines(tmp_path / "bgn2") == first
    # A BGN line has no SAN: the lake stores none (the position's SAN is the export's).
    moves = ds.dataset(lake2 / "games", format="parquet", partitioning="hive").to_table(columns=["moves"])
    flat = pc.list_flatten(moves.column("moves"))
    assert flat.combine_chunks().field("san").null_count == len(flat)


def test_bgn_export_reimports_as_the_pgn_load(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A real BGN export (.json.zst) of the sample, read back in blocks of 1,000 bytes (most cut a line:
    offsets and line numbers carried across), is the PGN load as values, but for where each game was read
    from and the SAN a BGN line does not hold."""
    monkeypatch.setattr(json_files, "BLOCK_BYTES", 1000)
    pgn = tmp_path / "pgn"
    load_input(str(SAMPLE), Lake.open(pgn), dedup=False, jobs=1)
    export_json(Lake.open(pgn), tmp_path / "bgn", compression="zst")
    lake = tmp_path / "lake"
    paths = sorted((tmp_path / "bgn").glob("**/*.json.zst"))
    assert paths
    for path in paths:
        record = import_json(path, lake)
        assert record["games_rejected"] == 0, read_rejects(lake)[:3]
    for table in ("games", "plies"):
        assert lake_values(lake, table) == lake_values(pgn, table)


def lake_values(lake: Path, table: str) -> list[Any]:
    """A table's rows sorted by game (and ply), without where each game was read from and without SAN."""
    data = ds.dataset(lake / table, format="parquet", partitioning="hive").to_table()
    data = data.drop_columns([c for c in ("source_file", "source_offset", "san") if c in data.column_names])
    keys = ["game_key", "ply"] if table == "plies" else ["game_id"]
    return without_san(data.sort_by([(k, "ascending") for k in keys]).to_pylist())


def without_san(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_san(v) for k, v in value.items() if k != "san"}
    if isinstance(value, list):
        return [without_san(v) for v in value]
    return value


def doc(moves: list[dict[str, Any]], **metadata: Any) -> dict[str, Any]:
    base = {"event": "Hand", "date": "2025-11-28", "white": "W", "black": "B", "result": "*"}
    return {"game_id": "hand", "metadata": {**base, **metadata}, "moves": moves}


def move(san: str, number: int, color: str, **annotations: Any) -> dict[str, Any]:
    variations = annotations.pop("variations", [])
    return {
        "san": san,
        "move_number": number,
        "color": color,
        "annotations": annotations,
        "variations": variations,
    }


HAND_WRITTEN = {
    "everything": {
        **doc(
            [
                move(
                    "e4", 1, "w", comment="King's pawn", eval="+0.20", clock="0:03:00", tags=["$1", "opening"]
                ),
                move(
                    "e5",
                    1,
                    "b",
                    tags=["$2", "$18", "a ] tag }"],
                    variations=[
                        {
                            "label": "Sicilian",
                            "line": [
                                move("c5", 1, "b", eval="-0.10"),
                                move(
                                    "Nf3",
                                    2,
                                    "w",
                                    variations=[
                                        {
                                            "line": [
                                                move(
                                                    "Nc3",
                                                    2,
                                                    "w",
                                                    variations=[
                                                        {
                                                            "label": "deep",
                                                            "line": [move("c3", 2, "w", comment="deepest")],
                                                        }
                                                    ],
                                                )
                                            ]
                                        }
                                    ],
                                ),
                            ],
                        },
                        {"line": [move("e6", 1, "b", eval="#-3")]},
                    ],
                ),
                move("Qh5", 2, "w", clock="1:02:03.5"),
            ],
            site="En Croissant",
            round="1",
            result="1-0",
            time_control="15+0",
            other_tags={"Annotator": "me", "WhiteElo": "2100", "ECO": "C20"},
        ),
        "game_id": "benoni_training_2025_11_28",
        "notes": "Modern Benoni training game",
    },
    "from a FEN, black to move": doc(
        [move("Kb1", 40, "b"), move("Kh2", 41, "w", comment="draw")],
        date="2024-??-??",
        other_tags={"SetUp": "1", "FEN": "8/8/8/8/8/8/k7/7K b - - 0 40"},
    ),
    "no moves, a lichess id": {**doc([], result="1/2-1/2", date="????-??-??"), "game_id": "abcdEFGH"},
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_hand_written_study_comes_back(name: str, tmp_path: Path) -> None:
    written = HAND_WRITTEN[name]
    assert not list(VALIDATOR.iter_errors(written))
    path = tmp_path / "game.json"
    path.write_text(json.dumps(written, indent=2))
    record = import_json(path, tmp_path / "lake")
    assert (record["games_written"], record["games_rejected"]) == (1, 0), read_rejects(tmp_path / "lake")
    ((_, text),) = study_documents(Lake.open(tmp_path / "lake"))
    assert json.loads(text) == written
    # With --fen, the same document with each move's position (the import reads no `fen`).
    ((_, text),) = study_documents(Lake.open(tmp_path / "lake"), fen=True)
    assert json.loads(text) == written_with_fen(written)


def written_with_fen(written: dict[str, Any]) -> dict[str, Any]:
    """`written` with python-chess's position after each move, from its SAN."""
    out = copy.deepcopy(written)
    board = chess.Board(out["metadata"].get("other_tags", {}).get("FEN", chess.STARTING_FEN))
    for m, fen in positions_by_san(board, out["moves"]):
        m["fen"] = fen
    return out


def test_the_specs_example_is_refused_for_its_illegal_mainline(tmp_path: Path) -> None:
    # The example's mainline is 1. d4 then 2. c4 (White twice), and its variation of d4 starts with a
    # Black move: no game. It is rejected in one line; the same document with 1... Nf6 comes back.
    example = json.loads(EXAMPLE.read_text())
    (tmp_path / "example.json").write_text(json.dumps(example, indent=2))
    record = import_json(tmp_path / "example.json", tmp_path / "lake")
    assert (record["games_seen"], record["games_rejected"]) == (1, 1)
    (reject,) = read_rejects(tmp_path / "lake")
    assert (
        reject["reason"]
        == "line 1: moves[0].variations[0].line[0] 'Nf6' is numbered 1 b where the game is at 1 w"
    )
    fixed = copy.deepcopy(example)
    fixed["moves"][0]["variations"][0]["line"][0].update(san="e4", color="w")
    fixed["moves"][0]["annotations"]["eval"] = "+0.20"
    fixed["moves"].insert(1, move("Nf6", 1, "b"))
    del fixed["moves"][0]["fen"]  # written only with --fen, and then on every move
    (tmp_path / "fixed.json").write_text(json.dumps(fixed))
    import_json(tmp_path / "fixed.json", tmp_path / "lake2")
    ((_, text),) = study_documents(Lake.open(tmp_path / "lake2"))
    assert json.loads(text) == fixed


def positions_by_san(board: chess.Board, moves: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], str]]:
    """Each move of `moves` and of their variations, with python-chess's position (FEN) after the move read
    from its SAN, `board` the position before the first."""
    stack = [(board, moves)]
    while stack:
        position, line = stack.pop()
        for m in line:
            for variation in m["variations"]:
                stack.append((position.copy(), variation["line"]))
            position.push_san(m["san"])
            yield m, position.fen(en_passant="fen")


def fens_by_san(board: chess.Board, moves: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(the document's fen, python-chess's position after the move) for every move (`positions_by_san`)."""
    return [(m["fen"], fen) for m, fen in positions_by_san(board, moves)]


@pytest.mark.parametrize("folder", ["data/edge", "corpora/edge/python-chess/data/pgn", "corpora/tournament"])
def test_fen_is_the_position_after_each_move(folder: str, corpus_loads: CorpusLoader, tmp_path: Path) -> None:
    (inputs, *_) = folder_batches(folder) or pytest.skip(f"no input under {folder}")
    export_study(Lake.open(corpus_loads(tuple(inputs)).lake), tmp_path / "s.jsonl", lines=True, fen=True)
    pairs = []
    lines = (tmp_path / "s.jsonl").read_text().splitlines()
    for line in lines[:: stride(folder, len(lines))]:
        document = json.loads(line)
        assert not list(VALIDATOR.iter_errors(document))
        tags = document["metadata"].get("other_tags", {})
        # The lake's own Variant tag is its last (`Variant (2)` when the source wrote another text first).
        variant = ([value for name, value in tags.items() if name.startswith("Variant")] or ["Standard"])[-1]
        chess960 = variant == "Chess960"
        board = chess.variant.find_variant("Standard" if chess960 else variant)
        pairs += fens_by_san(board(tags.get("FEN", board.starting_fen), chess960=chess960), document["moves"])
    assert pairs and all(ours == theirs for ours, theirs in pairs)


# Tag names of each odd kind of character: python-chess drops their lines (its TAG_REGEX), and so does the
# load; the names of its grammar beside them are kept.
ODD_TAG_NAMES = [
    "Weird{",
    "Clo}se",
    'Quo"te',
    "Back\\slash",
    "Two words",
    "Per%cent",
    "Semi;colon",
    "Ünï",
    "",
    "_x",
    "X]",
]
KEPT_TAG_NAMES = ["A1_+#=:-b", "1st"]


def test_tag_names_round_trip(tmp_path: Path) -> None:
    """A game with a tag line of any name the load accepts as python-chess reads it, and comes back the same
    from its study JSON and its BGN JSON."""
    source = tmp_path / "tags.pgn"
    source.write_text(
        "".join(
            f'[Event "odd {i}"]\n[{name} "value {i}"]\n[{KEPT_TAG_NAMES[i % 2]} "kept {i}"]\n'
            '[Result "1-0"]\n\n1. e4 e5 1-0\n\n'
            for i, name in enumerate(ODD_TAG_NAMES)
        ),
        encoding="utf-8",
    )
    want = {g.headers["Event"]: dict(g.headers) for g in games_of(source.read_text(encoding="utf-8"))}
    assert all(len(headers) == 8 for headers in want.values())  # the roster and the kept tag
    lake = tmp_path / "lake"
    load_input(str(source), Lake.open(lake), jobs=1)
    assert read_records(lake)[-1]["games_written"] == len(ODD_TAG_NAMES), read_rejects(lake)

    def exported(lake: Path) -> dict[str, dict[str, str]]:
        texts = "".join(text for _, _, text in pgn_games(Lake.open(lake)))
        return {g.headers["Event"]: dict(g.headers) for g in games_of(texts)}

    assert exported(lake) == want
    export_study(Lake.open(lake), tmp_path / "study.jsonl", lines=True)
    record = import_json(tmp_path / "study.jsonl", tmp_path / "study_lake")
    assert record["games_rejected"] == 0, read_rejects(tmp_path / "study_lake")
    assert exported(tmp_path / "study_lake") == want
    export_json(Lake.open(lake), tmp_path / "bgn1")
    for path in sorted((tmp_path / "bgn1").glob("**/*.json.bz2")):
        record = import_json(path, tmp_path / "bgn_lake")
        assert record["games_rejected"] == 0, read_rejects(tmp_path / "bgn_lake")
    export_json(Lake.open(tmp_path / "bgn_lake"), tmp_path / "bgn2")
    assert bgn_lines(tmp_path / "bgn2") == bgn_lines(tmp_path / "bgn1")


def games_of(text: str) -> Iterator[chess.pgn.Game]:
    handle = io.StringIO(text)
    while (game := chess.pgn.read_game(handle)) is not None:
        yield game


@pytest.mark.parametrize("name", ODD_TAG_NAMES + KEPT_TAG_NAMES)
def test_study_tag_names_as_the_load_reads_them(name: str, tmp_path: Path) -> None:
    """The import keeps the other tags of the names the load keeps, and refuses the document of another."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc([move("e4", 1, "w")], other_tags={name: "v"})), encoding="utf-8")
    record = import_json(path, tmp_path / "lake")
    assert record["games_rejected"] == (name not in KEPT_TAG_NAMES), read_rejects(tmp_path / "lake")
