"""Every file of sql/ against python-chess: its answer over a lake loaded from a PGN file equals, row for
row, the count `pychess_counts` makes from a python-chess replay of that same file.

Each question runs twice: through the duckdb CLI (`duckdb -json < sql/<file>.sql` from the project's root,
the lake in $CHESS_LAKE) and through `warehouse.query`. Sources: the bundled lichess sample, the sample
mixed with games of every lichess variant (the questions count standard chess unless asked otherwise,
variants.sql every variant) and, when present, the lichess files of ../shared/corpora/lichess.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from pychess_counts import COUNTS, Row, assert_rows_match, expected, replay, standard
from random_variants import BOARDS, random_games
from support import CORPORA, REPO, SAMPLE, loaded, run_command, sample_pgn

from warehouse.queries.sql import PREAMBLE, SQL_DIR, connect, query, questions

CORPUS = CORPORA / "lichess"
MIXED = "mixed"  # the sample and variant games, written by the `source` fixture
VARIANT_GAMES = 30  # random games per variant in the mixed source
SOURCES = [pytest.param(SAMPLE, id="data-sample"), pytest.param(MIXED, id="mixed-variants")] + (
    [pytest.param(path, id=f"corpora-{path.name}") for path in sorted(CORPUS.glob("*.pgn*"))]
    if CORPUS.is_dir()
    else [pytest.param(None, id="corpora-lichess", marks=pytest.mark.skip(reason=f"{CORPUS} is absent"))]
)
HEADER = re.compile(r"Question: .+ Grain: .+ Definitions: .+ Output: ([^;.]+)[;.].*")


@pytest.fixture(scope="module", params=SOURCES)
def source(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if request.param != MIXED:
        return request.param
    games = [game for variant in BOARDS for game in random_games(variant, VARIANT_GAMES, seed=2)]
    path = tmp_path_factory.mktemp("mixed") / "mixed.pgn"
    path.write_text(sample_pgn().decode() + "\n\n" + "".join(f"{game}\n\n" for game in games))
    return path


@pytest.fixture(scope="module")
def lake(source: Path, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if source == SAMPLE:  # the run's one lake of the sample
        return request.getfixturevalue("sample_lake")
    return loaded([source], tmp_path_factory.mktemp("lake"))


def run_cli(name: str, lake: Path, before: str = "") -> list[Row]:
    """`duckdb -json < sql/<name>.sql` from the project's root, with CHESS_LAKE=lake, the statements
    `before` first."""
    done = run_command(
        ["duckdb", "-json"],
        stdin=before.encode() + (SQL_DIR / f"{name}.sql").read_bytes(),
        env={"PATH": str(Path(shutil.which("duckdb") or "duckdb").parent), "CHESS_LAKE": str(lake)},
        timeout=300,
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    return json.loads(done.stdout or "[]")


@pytest.mark.parametrize("name", questions())
def test_python_api_matches_python_chess(name: str, source: Path, lake: Path) -> None:
    assert_rows_match(query(name, lake).rows(named=True), expected(name, source))


@pytest.mark.parametrize("name", questions())
def test_duckdb_cli_matches_python_chess(name: str, source: Path, lake: Path) -> None:
    assert_rows_match(run_cli(name, lake), expected(name, source))


def test_every_question_is_counted_in_python() -> None:
    assert set(questions()) == set(COUNTS)


@pytest.mark.parametrize("name", questions())
def test_header_states_the_output_columns(name: str, lake: Path) -> None:
    """A header comment says the question, grain, definitions and output columns (those of the answer);
    the views import is the first statement."""
    lines = (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8").splitlines()
    header = " ".join(line.removeprefix("--").strip() for line in lines if line.startswith("--"))
    sections = HEADER.fullmatch(header)
    assert sections is not None, f"sql/{name}.sql: header comment missing or out of order"
    columns = [re.sub(r" \(.*\)$", "", column.strip()) for column in sections.group(1).split(",")]
    assert columns == query(name, lake).columns
    code = [line for line in lines if line and not line.startswith("--")]
    assert "\n".join(code[:3]) == PREAMBLE


def test_min_sample_is_stated_as_the_views_define_it(lake: Path) -> None:
    """The questions whose rates the notebooks leave out below min_sample() moves state the views' value
    in their header; the notebooks that plot them read it from the views."""
    value = connect(lake).sql("select min_sample()").fetchall()[0][0]
    stating = []
    for name in questions():
        lines = (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8").splitlines()
        header = " ".join(line.removeprefix("--").strip() for line in lines if line.startswith("--"))
        if "min_sample()" in header:
            assert f"min_sample() moves (sql/views/schema.sql: {value})" in header, name
            stating.append(name)
    assert {"blunders", "blunders_by_rating", "clock_pace", "time_trouble"} <= set(stating)
    for notebook in ("blunders", "clock_pace", "ratings"):
        assert "select min_sample()" in (REPO / "notebooks" / f"{notebook}.ipynb").read_text()


def test_lake_from_environment(
    source: Path, lake: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """connect() reads $CHESS_LAKE when given no lake, else ./lake; an explicit lake wins over both."""
    games = len(standard(replay(source)))
    count = "select count(*) from games"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHESS_LAKE", str(lake))
    assert connect().sql(count).fetchall() == [(games,)]
    monkeypatch.setenv("CHESS_LAKE", "")
    (tmp_path / "lake").symlink_to(lake)
    assert connect().sql(count).fetchall() == [(games,)]
    monkeypatch.setenv("CHESS_LAKE", str(tmp_path / "nowhere"))
    assert connect(lake).sql(count).fetchall() == [(games,)]


@pytest.mark.parametrize("variant", ["Crazyhouse", "Atomic", "Chess960", "all"])
def test_a_variable_selects_the_variant(source: Path, lake: Path, variant: str) -> None:
    """`set variable variant` (the CLI) or `variant=` (Python): the questions count those games only."""
    if source != SAMPLE and not source.name.startswith(MIXED):
        pytest.skip("the variants are in the mixed source")
    games = replay(source)
    chosen = games if variant == "all" else tuple(game for game in games if game.row["variant"] == variant)
    want = COUNTS["summary"](chosen)
    if chosen:  # the sample holds no variant: an empty answer, which assert_rows_match refuses
        assert_rows_match(query("summary", lake, variant=variant).rows(named=True), want)
        assert_rows_match(run_cli("summary", lake, f"set variable variant = '{variant}';\n"), want)
    else:
        assert query("summary", lake, variant=variant).is_empty()
        assert run_cli("summary", lake, f"set variable variant = '{variant}';\n") == []


def test_a_lake_of_standard_games_is_read_without_a_variant_test(source: Path, lake: Path) -> None:
    """The sample's row groups hold Standard games only (their `variant` statistics say so): the views read
    its files without testing each row's variant (the tested part of the scan reads none of them). The mixed
    source's row groups mix variants: every row is tested, and `set variable variant = 'all'` still reads
    without a test."""
    if source != SAMPLE and not source.name.startswith(MIXED):
        pytest.skip("the sample and the mixed source cover both cases")
    con = connect(lake)

    def tested() -> bool:
        plans = [
            con.sql(f"explain select count(*) from {view}").fetchall()[0][1] for view in ("games", "plies")
        ]
        return all("variant" in plan and "Scanning Files: 0/" not in plan for plan in plans)

    assert tested() == (source != SAMPLE)
    con.execute("set variable variant = 'all'")
    assert not tested()


def test_a_connection_kept_open_counts_no_variant_loaded_since(tmp_path: Path, sample_lake: Path) -> None:
    """A connection opened on a lake of standard games, which reads its files without a variant test, then
    variant games loaded by another process: the views test the new files' rows, so they count what a new
    connection and python-chess count."""
    lake = tmp_path / "lake"
    shutil.copytree(sample_lake, lake)
    con = connect(lake)
    assert con.sql("select count(*) from games").fetchall() == [(len(standard(replay(SAMPLE))),)]
    games = [game for variant in BOARDS for game in random_games(variant, 5, seed=3)]
    variants = tmp_path / "variants.pgn"
    variants.write_text("".join(f"{game}\n\n" for game in games))
    loaded([variants], lake)
    counted = standard(replay(SAMPLE)) + standard(replay(variants))
    assert len(counted) < len(replay(SAMPLE)) + len(replay(variants))  # variant games were loaded
    want = [(len(counted), sum(len(game.moves) for game in counted))]
    views = "select (select count(*) from games), (select count(*) from plies)"
    assert con.sql(views).fetchall() == want
    assert connect(lake).sql(views).fetchall() == want


def test_an_unknown_variant_is_one_line(lake: Path) -> None:
    done = run_command(
        ["duckdb"],
        stdin=b"set variable variant = 'Atomc';\n" + (SQL_DIR / "summary.sql").read_bytes(),
        env={"PATH": str(Path(shutil.which("duckdb") or "duckdb").parent), "CHESS_LAKE": str(lake)},
    )
    assert "unknown variant 'Atomc'" in done.stderr and len(done.stderr.strip().splitlines()) == 1, (
        done.stderr
    )


def test_unknown_question_names_the_known_ones(lake: Path) -> None:
    with pytest.raises(ValueError, match="blunders"):
        query("no_such_question", lake)


OTHER_SITES = [CORPORA / "chesscom", CORPORA / "engine"]
LICHESS_WORDS = {"Normal", "Time forfeit", "Abandoned", "Rules infraction", "Unterminated", "Adjudication"}


@pytest.mark.parametrize("folder", OTHER_SITES, ids=[folder.name for folder in OTHER_SITES])
def test_other_sites_end_in_lichess_words(folder: Path, tmp_path: Path) -> None:
    """chess.com's and TCEC's games: terminations.sql counts them by lichess's words (not one row per
    player's `X won by checkmate`), summary.sql by speed (chess.com's daily games correspondence, TCEC's
    per-side and fractional time controls typed), as python-chess's reading of the files does."""
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    files = sorted(folder.glob("*.pgn"))
    lake = loaded(files, tmp_path / "lake", "--allow-duplicates")
    games = tuple(game for path in files for game in standard(replay(path)))
    terminations = query("terminations", lake).rows(named=True)
    assert_rows_match(terminations, COUNTS["terminations"](games))
    assert {row["termination"] for row in terminations} <= LICHESS_WORDS | {"?"}
    assert_rows_match(query("summary", lake).rows(named=True), COUNTS["summary"](games))
    if folder.name == "chesscom":
        assert "correspondence" in {row["type"] for row in terminations}


def test_every_view_and_macro_of_the_views_is_defined_once() -> None:
    """`create or replace` lets a second definition of a name silently replace the first (a macro of the
    explorer's once changed every question's rating bands): each name of sql/views is defined once."""
    names = [
        name
        for file in sorted((SQL_DIR / "views").glob("*.sql"))
        for name in re.findall(
            r"create\s+(?:or\s+replace\s+)?(?:temp(?:orary)?\s+)?(?:macro|view)\s+(\w+)",
            file.read_text(),
            re.I,
        )
    ]
    assert len(names) > 40, names
    assert sorted({n for n in names if names.count(n) > 1}) == []
