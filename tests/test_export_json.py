"""BGN JSON-lines export: layout, the JSON Schema, and every field against python-chess's reading of the
source PGN (tests/oracle.py), alternate lines included."""

from __future__ import annotations

import bz2
import io
import json
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Any

import chess.pgn
import jsonschema
import pytest
from corpora import CorpusLoad
from oracle import Row, expected_games, read_bytes
from support import CORPORA, REPO, SAMPLE, Run, loaded, read_games, read_rejects, run_module

from warehouse.exports.bgn_json import export_json
from warehouse.lake import Lake

# Small annotated collections with nested variations, NAGs, comments before lines.
ANNOTATED = CORPORA / "tournament" / "scoutfish"
ANNOTATED_FILES = ["exeter_lessons_from_tal.pgn", "hayes.pgn", "pon_korch.pgn", "romero.pgn"]
SCHEMA = json.loads((REPO / "docs" / "bgn.schema.json").read_text(encoding="utf-8"))


def parquet2json(*args: str) -> Run:
    return run_module("loaders.parquet2json", list(args), timeout=300)


def read_export(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Each file's games, by path relative to `out`."""
    return {
        str(path.relative_to(out)): [json.loads(line) for line in bz2.open(path, "rt", encoding="utf-8")]
        for path in sorted(out.rglob("*.json.bz2"))
    }


@pytest.fixture(scope="module")
def sample_export(sample_lake: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("json") / "out"
    process = parquet2json("--lake", str(sample_lake), str(out), "--games-per-file", "100")
    assert process.returncode == 0, process.stderr
    assert "438 games in 8 files" in process.stdout
    return sample_lake, out


def test_layout_is_the_bgn_archive(sample_export: tuple[Path, Path]) -> None:
    _, out = sample_export
    files = read_export(out)
    assert list(files) == [
        "blitz/2025/5/G.0.blitz.json.bz2",
        "blitz/2025/5/G.1.blitz.json.bz2",
        "blitz/2025/5/G.2.blitz.json.bz2",
        "bullet/2025/5/G.0.bullet.json.bz2",
        "bullet/2025/5/G.1.bullet.json.bz2",
        "classical/2025/5/G.0.classical.json.bz2",
        "rapid/2025/5/G.0.rapid.json.bz2",
        "ultrabullet/2025/5/G.0.ultrabullet.json.bz2",
    ]
    assert [len(games) for games in files.values()] == [100, 100, 19, 100, 28, 3, 86, 2]
    for name, games in files.items():
        assert {game["type"] for game in games} == {name.split("/")[0]}
    assert not list(out.rglob(".*")), "temporary file left behind"


def test_sample_validates_against_the_schema(sample_export: tuple[Path, Path]) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    validator.check_schema(SCHEMA)
    for name, games in read_export(sample_export[1]).items():
        for game in games:
            errors = sorted(validator.iter_errors(game), key=lambda e: list(e.path))
            assert not errors, f"{name} {game['id']}: {errors[0].message} at {list(errors[0].path)}"


def test_sample_matches_python_chess(sample_export: tuple[Path, Path]) -> None:
    lake, out = sample_export
    expected = expected_by_id(lake, [SAMPLE])
    games = [game for file_games in read_export(out).values() for game in file_games]
    assert len(games) == len(expected) == 438
    source = io.TextIOWrapper(io.BytesIO(read_bytes(SAMPLE)), encoding="utf-8").read()
    for game in games:
        assert game == expected[game["id"]], game["id"]
        # Evals as lichess writes them: the exported text is the source's text.
        evals = {e for move in game["moves"] for a in move.get("a", []) for e in a.get("eval", [])}
        assert all(f"[%eval {e}]" in source for e in evals)


def test_alternate_lines_match_python_chess(tmp_path: Path) -> None:
    if not ANNOTATED.is_dir():
        pytest.skip(f"{ANNOTATED} not found")
    inputs = [ANNOTATED / name for name in ANNOTATED_FILES]
    lake = loaded(inputs, tmp_path / "lake")
    result = export_json(Lake.open(lake), tmp_path / "out")
    expected = expected_by_id(lake, inputs)
    games = [game for file_games in read_export(tmp_path / "out").values() for game in file_games]
    assert result.games == len(games) == len(expected)
    assert sum('"alt"' in json.dumps(game) for game in games) >= 10, "too few games with variations"
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for game in games:
        assert not list(validator.iter_errors(game)), game["id"]
        assert game == expected[game["id"]], game["id"]


def test_variant_games_match_python_chess(
    random_variant_files: dict[str, Path], random_variant_load: CorpusLoad, tmp_path: Path
) -> None:
    """Every lichess variant: the `variant` key, drops as `"f":null`, explosions as `blast`."""
    lake = random_variant_load.lake
    result = export_json(Lake.open(lake), tmp_path / "out")
    expected = expected_by_id(lake, list(random_variant_files.values()))
    games = [game for file_games in read_export(tmp_path / "out").values() for game in file_games]
    assert result.games == len(games) == len(expected)
    assert {game["variant"] for game in games} == set(random_variant_files)
    text = json.dumps(games)
    assert '"f": null' in text and '"blast"' in text
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for game in games:
        assert not list(validator.iter_errors(game)), game["id"]
        assert game == expected[game["id"]], game["id"]


def test_one_game_beside_its_pgn(tmp_path: Path) -> None:
    """The shape of docs/exports.md, on a small game with every kind of annotation."""
    pgn = textwrap.dedent(
        """\
        [Event "Rated Blitz game"]
        [Site "https://lichess.org/abcdEFGH"]
        [Date "2025.05.01"]
        [Round "-"]
        [White "alice"]
        [Black "bob"]
        [Result "1-0"]
        [UTCDate "2025.05.01"]
        [UTCTime "12:00:00"]
        [WhiteElo "1500"]
        [BlackElo "1450"]
        [ECO "C20"]
        [Opening "King's Pawn Game: Wayward Queen Attack"]
        [TimeControl "180+0"]

        1. e4 { [%eval 0.17] [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] } 2. Qh5 $6 { [%clk 0:02:58.5] }
        ( 2. Nf3 { the main line } 2... Nc6 ) 2... Nc6 $2 $18 { [%eval #3] Oops. } 3. Bc4 Nf6 $4
        4. Qxf7# 1-0
        """
    )
    source = tmp_path / "game.pgn"
    source.write_text(pgn)
    out = tmp_path / "out"
    export_json(Lake.open(loaded([source], tmp_path / "lake")), out)
    (game,) = read_export(out)["blitz/2025/5/G.0.blitz.json.bz2"]
    assert game == {
        "id": "abcdEFGH",
        "site": "https://lichess.org/abcdEFGH",
        "event": "Rated Blitz game",
        "round": "-",
        "type": "blitz",
        "result": "W",
        "datetime": "2025-05-01T12:00:00Z",
        "timeControl": "180+0",
        "opening": {
            "ECO": "C20", "verbose": "King's Pawn Game: Wayward Queen Attack", "generic": "King's Pawn Game"
        },
        "players": [
            {"handle": {"domain": "org.lichess", "value": "alice"}, "ELO_blitz": 1500},
            {"handle": {"domain": "org.lichess", "value": "bob"}, "ELO_blitz": 1450},
        ],
        "moves": [
            {"p": "P", "f": "e2", "t": "e4", "a": [{"eval": ["0.17"], "clk": ["0:03:00"]}]},
            {"p": "p", "f": "e7", "t": "e5", "a": [{"clk": ["0:03:00"]}]},
            {
                "p": "Q", "f": "d1", "t": "h5",
                "a": [
                    {"nag": 6, "clk": ["0:02:58.5"]},
                    {"alt": [[
                        {"p": "N", "f": "g1", "t": "f3", "a": [{"comment": "the main line"}]},
                        {"p": "n", "f": "b8", "t": "c6"},
                    ]]},
                ],
            },
            {
                "p": "n", "f": "b8", "t": "c6",
                "a": [{"nag": 2, "eval": ["#3"], "comment": "Oops."}, {"nag": 18}],
            },
            {"p": "B", "f": "f1", "t": "c4"},
            {"p": "n", "f": "g8", "t": "f6", "a": [{"nag": 4}]},
            {"p": "Q", "f": "h5", "t": "f7", "x": "p"},
        ],
    }  # fmt: skip


def test_user_errors_are_one_line(sample_export: tuple[Path, Path], tmp_path: Path) -> None:
    lake, out = sample_export
    for args, message in [
        (["--lake", str(tmp_path / "nowhere"), str(tmp_path / "x")], "not a lake"),
        (["--lake", str(lake), str(out)], "already holds files"),
        (["--lake", str(lake), str(tmp_path / "y"), "--games-per-file", "0"], "at least 1"),
    ]:
        process = parquet2json(*args)
        assert process.returncode == 2, process
        assert message in process.stderr
        assert len(process.stderr.strip().splitlines()) == 1, process.stderr


# What the export should be, from python-chess's reading of the source (oracle rows), built here
# independently of the exporter's SQL.


def expected_by_id(lake: Path, inputs: list[Path]) -> dict[str, dict[str, Any]]:
    """The expected BGN object of every stored game, by its lake id (lake rows give id and offset)."""
    stored = {(row["source_file"], row["source_offset"]): row for row in read_games(lake)}
    rejected = {(row["source_file"], row["source_offset"]) for row in read_rejects(lake)}
    expected: dict[str, dict[str, Any]] = {}
    for path in inputs:
        offsets = sorted(key for key in [*stored, *rejected] if key[0] == str(path))
        wants = expected_games(path)
        assert len(offsets) == len(wants), path
        for key, want in zip(offsets, wants, strict=True):
            if key in stored:
                assert want.row is not None
                row = stored[key]
                expected[row["game_id"]] = bgn(want.row, row["game_id"])
    return expected


def bgn(row: Row, game_id: str) -> dict[str, Any]:
    kind = row["type"]
    lichess = (row["site"] or "").startswith("https://lichess.org/")
    game = present(
        id=game_id,
        site=row["site"],
        event=row["event"],
        round=row["round"],
        type=kind,
        result=row["result"],
        datetime=row["datetime"] and row["datetime"].strftime("%Y-%m-%dT%H:%M:%SZ"),
        timeControl=row["time_control"],
        termination=row["termination"],
        variant=None if row["variant"] == "Standard" else row["variant"],
        fen=row["start_fen"],
        opening=present(
            ECO=row["opening"]["eco"], verbose=row["opening"]["verbose"], generic=row["opening"]["generic"]
        )
        or None,
        players=[
            present(
                handle=None
                if p["name"] is None
                else present(domain="org.lichess" if lichess else None, value=p["name"]),
                **{f"ELO_{kind}": p["elo"]},
                ratingDiff=p["rating_diff"],
                title=p["title"],
            )
            for p in row["players"]
        ],
        comment=row["comment"],
    )
    children: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for line in row["variations"]:
        children.setdefault((line["parent"], line["ply"]), []).append(line)
    game["moves"] = moves(0, row["moves"], None, children)
    return game


def moves(
    line_id: int, line: list[Row], starting: str | None, children: dict[tuple[int, int], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    out = []
    for ply, m in enumerate(line):
        nags = m["nags"] or []
        first = present(
            nag=nags[0] if nags else None,
            eval=[eval_text(m["eval_cp"], m["eval_mate"])]
            if m["eval_cp"] is not None or m["eval_mate"] is not None
            else None,
            clk=None if m["clk"] is None else [clock_text(m["clk"])],
            comment=m["comment"],
        )
        annotations = ([first] if first else []) + [{"nag": nag} for nag in nags[1:]]
        if ply == 0 and starting:
            annotations.append({"precomment": starting})
        alts = children.get((line_id, ply), [])
        if alts:
            annotations.append({"alt": [moves(a["id"], a["moves"], a["comment"], children) for a in alts]})
        # `f` is always there: null for a drop.
        move = {"p": m["p"], "f": m["f"], "t": m["t"]}
        move |= present(x=m["x"], c=m["c"], castle=m["castle"], promote=m["promote"], blast=m["blast"])
        if annotations:
            move["a"] = annotations
        out.append(move)
    return out


def eval_text(cp: int | None, mate: int | None) -> str:
    if mate is not None:
        return f"#{mate}"
    assert cp is not None
    text = f"{abs(cp) / 100:.2f}".removesuffix("0")  # lichess: 0.1, 0.17, 1.0
    return f"-{text}" if cp < 0 else text


def clock_text(seconds: Decimal) -> str:
    whole = int(seconds)
    text = f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
    tenth = int((seconds - whole) * 10)
    return f"{text}.{tenth}" if tenth else text


def present(**fields: Any) -> dict[str, Any]:
    """The fields that have a value (absent values are omitted in BGN, never null)."""
    return {name: value for name, value in fields.items() if value is not None}


def test_oracle_helpers_read_python_chess_as_documented() -> None:
    """The expected-value helpers above agree with python-chess's own parsing of the texts they write."""
    node = chess.pgn.read_game(io.StringIO("1. e4 { [%eval -0.06] [%clk 1:02:03.5] } *"))
    assert node is not None
    move = node.next()
    assert move is not None and move.eval() is not None and move.clock() == 3723.5
    assert eval_text(-6, None) == "-0.06" and eval_text(10, None) == "0.1" and eval_text(0, None) == "0.0"
    assert clock_text(Decimal("3723.5")) == "1:02:03.5" and clock_text(Decimal("180.0")) == "0:03:00"
