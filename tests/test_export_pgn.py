"""PGN → lake → PGN, checked with python-chess: every stored game, exported again, must read as the
original game at its source offset: moves, variations, NAGs, comments, clocks, evals and tags.

Cases: tests/data/ and every folder of ../shared/corpora/ (skipped when absent): the files python-chess
and the lake read alike, loaded in the batches of test_oracle_corpora, whose lakes this module shares
(corpora.py). Games the lake rejected are not compared; the rest must all round-trip. Known losses of the
lake (see LOSSY_TAGS) are the only differences allowed.
"""

from __future__ import annotations

import bz2
import io
from pathlib import Path

import pytest
import zstandard
from corpora import CorpusLoad, CorpusLoader, folder_lakes
from oracle import termination
from pgn_round_trip import (
    FOLDERS,
    assert_round_trip,
    read,
)
from support import Run, loaded, read_games, run_module

from warehouse.exports.pgn import pgn_games
from warehouse.lake import Lake


@pytest.mark.parametrize("folder", FOLDERS)
def test_round_trip(folder: str, corpus_loads: CorpusLoader) -> None:
    lakes = folder_lakes(folder, corpus_loads)
    if not lakes:
        pytest.skip(f"the lake stored no game of {folder}")
    assert_round_trip(lakes, folder)


def test_random_variant_games_round_trip(random_variant_load: CorpusLoad) -> None:
    """Seeded random games of every lichess variant (drops `N@f3`, explosions, horde and racing kings'
    own starts, FEN starts with pockets): the `Variant` tag and every move come back."""
    assert random_variant_load.returncode == 0, random_variant_load.stderr
    assert_round_trip([random_variant_load.lake], "random variant games")


# The PGN of games with one tag each: what the Rust core writes for them (export_pgn.rs), read back.
NUMBERED = """[Result "*"]

1. e4 e5 { hi } ( { Sicilian } 1... c5 2. Nf3 ( 2. Nc3 ) ( ) ) 2. Nf3 { dev } Nc6 *

[Result "*"]
[FEN "8/8/8/8/8/8/8/K6k b - - 0 12"]

{ late } 12... Kg2 13. Kb2 *

[Result "*"]

{ %s } 1. e4 e5 *

"""
ROSTER = '[Event "?"]\n[Site "?"]\n[Date "????.??.??"]\n[Round "?"]\n[White "?"]\n[Black "?"]\n[Result "*"]\n'


def test_movetext_numbers_moves_nests_lines_and_wraps(tmp_path: Path) -> None:
    """Black's move is numbered first in a line and after a comment or a variation; an empty line is left
    out; a line inside a line is opened after the move it replaces; lines break at 79 characters, between
    tokens only; a bare game gets the Seven Tag Roster."""
    long = "c" * 100
    (tmp_path / "games.pgn").write_text(NUMBERED % long)
    lake = loaded([tmp_path / "games.pgn"], tmp_path / "lake")
    texts = [text for _, _, text in pgn_games(Lake.open(lake))]
    assert texts == [
        ROSTER
        + "\n1. e4 e5 { hi } ( { Sicilian } 1... c5 2. Nf3 ( 2. Nc3 ) ) 2. Nf3 { dev }\n2... Nc6 *\n\n",
        ROSTER + '[FEN "8/8/8/8/8/8/8/K6k b - - 0 12"]\n\n{ late } 12... Kg2 13. Kb2 *\n\n',
        ROSTER + f"\n{{ {long} }}\n1. e4 e5 *\n\n",
    ]


def parquet2pgn(*args: str) -> Run:
    return run_module("loaders.parquet2pgn", list(args), timeout=300)


@pytest.mark.parametrize("name", ["games.pgn", "games.pgn.bz2", "games.pgn.zst"])
def test_cli_writes_the_games(sample_lake: Path, tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    process = parquet2pgn("--lake", str(sample_lake), str(out))
    assert process.returncode == 0, process.stderr
    assert "438 games" in process.stdout
    data = out.read_bytes()
    if name.endswith(".bz2"):
        data = bz2.decompress(data)
    elif name.endswith(".zst"):
        data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
    assert data.decode() == "".join(text for _, _, text in pgn_games(Lake.open(sample_lake)))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temporary file left behind"


def test_cli_selects_partitions(sample_lake: Path) -> None:
    process = parquet2pgn("--lake", str(sample_lake), "--type", "classical", "--type", "ultrabullet", "-")
    assert process.returncode == 0, process.stderr
    games = process.stdout.count("[Event ")
    assert games == 5  # 3 classical + 2 ultrabullet games in the sample


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lake", "{tmp}/nowhere", "{tmp}/out.pgn"], "not a lake"),
        (["--lake", "{lake}", "{lake}/_loads"], "inside the lake"),
        (["--lake", "gs://bucket/lake", "{tmp}/out.pgn"], "unsupported location"),
        (["--lake", "s3://", "{tmp}/out.pgn"], "no bucket"),
    ],
)
def test_cli_user_errors_are_one_line(
    sample_lake: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    process = parquet2pgn(*(a.format(tmp=tmp_path, lake=sample_lake) for a in args))
    assert process.returncode == 2
    assert message in process.stderr
    assert len(process.stderr.strip().splitlines()) == 1, process.stderr


# Other sites' wordings, the column's text for each (the test's own reading of what lichess writes), and
# the time controls they write: chess.com's daily `1/259200`, TCEC's per-side tags.
OTHER_SOURCES = [
    ("cancer0707 won by checkmate", "Normal", '[TimeControl "180"]', "blitz"),
    ("Game drawn by repetition", "Normal", '[TimeControl "1/259200"]', "correspondence"),
    ("hikaru won on time", "Time forfeit", '[TimeControl "1/86400"]', "correspondence"),
    ("someone won - game abandoned", "Abandoned", '[TimeControl "600"]', "rapid"),
    ("Game drawn by timeout vs insufficient material", "Time forfeit", '[TimeControl "60"]', "bullet"),
    ("Game drawn by 50-move rule", "Normal", '[WhiteTimeControl "180+0.5"]\n[BlackTimeControl "180+0.5"]',
     "blitz"),
    ("adjudication", "Adjudication", '[WhiteTimeControl "40/900"]\n[BlackTimeControl "40/900"]', "rapid"),
    ("White mates", "White mates", '[WhiteTimeControl "60+1"]\n[BlackTimeControl "600+1"]', "unknown"),
]  # fmt: skip


def test_other_sources_terminations_and_time_controls(tmp_path: Path) -> None:
    """chess.com's and TCEC's tags: the `termination` column in lichess's words, the text in `headers`,
    written back as it was by the PGN export; daily and per-side time controls typed."""
    source = tmp_path / "others.pgn"
    source.write_text(
        "".join(
            f'[Event "game {i}"]\n[Result "1-0"]\n{tc}\n[Termination "{raw}"]\n\n1. e4 e5 1-0\n\n'
            for i, (raw, _, tc, _) in enumerate(OTHER_SOURCES)
        )
    )
    lake = loaded([source], tmp_path / "lake")
    games = sorted(read_games(lake, ["event", "termination", "type", "headers"]), key=lambda g: g["event"])
    for game, (raw, word, _, kind) in zip(games, OTHER_SOURCES, strict=True):
        assert (game["termination"], game["type"]) == (termination(raw), kind) == (word, kind)
        assert ("Termination", raw) in game["headers"] or raw == word
    exported = {read(text).headers["Event"]: read(text).headers for _, _, text in pgn_games(Lake.open(lake))}
    for i, (raw, _, _, _) in enumerate(OTHER_SOURCES):
        assert exported[f"game {i}"]["Termination"] == raw


def test_an_earlier_fen_goes_before_the_roster_as_every_column_tag(tmp_path: Path) -> None:
    """A repeated FEN tag: the `start_fen` column holds the last, `headers` the earlier, which the export
    writes before the roster as it writes an earlier occurrence of any tag a column holds (the load's list of
    column tags, FEN among them); the export loads back to the same values."""
    first, last = "8/8/8/8/8/8/8/K6k w - - 0 5", "8/8/8/8/8/8/8/K6k b - - 0 5"
    (tmp_path / "games.pgn").write_text(
        f'[Event "e"]\n[Date "2024.01.01"]\n[SetUp "1"]\n[FEN "{first}"]\n[FEN "{last}"]\n[Result "*"]\n'
        "\n5... Kg2 *\n\n"
    )
    lake = loaded([tmp_path / "games.pgn"], tmp_path / "lake")
    [(_, _, text)] = pgn_games(Lake.open(lake))
    assert text.startswith(f'[FEN "{first}"]\n[Event "e"]\n'), text
    assert text.index('[SetUp "1"]') < text.index(f'[FEN "{last}"]') == text.rindex("[FEN ")
    (tmp_path / "out.pgn").write_text(text)
    again = loaded([tmp_path / "out.pgn"], tmp_path / "again")
    columns = ["start_fen", "headers", "moves"]
    [want], [got] = read_games(lake, columns), read_games(again, columns)
    assert want["start_fen"] == got["start_fen"] == last
    assert dict(want["headers"]) == dict(got["headers"]) and ("FEN", first) in got["headers"]
    assert want["moves"] == got["moves"]
