"""The explorer page (`python -m loaders.serve`) driven in a real headless Chromium over the sample lake: the
moves table after 1. e4 c5, unfiltered and filtered, equal to python-chess's count over the sample's games
(`pychess_counts.explorer_rows`), the move list back, the PGN download read by python-chess, an illegal FEN
and a folder that stopped being a lake as one line in the page, a screenshot that is not blank; and the
command's own one-line errors. One browser and one server for the module."""

from __future__ import annotations

import datetime as dt
import io
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import pytest
import support
from browser import chromium, click_and_load, downloaded, served
from PIL import Image
from pychess_counts import Game, explorer_rows, replay
from selenium import webdriver
from selenium.webdriver.common.by import By

from warehouse.lake.plies import KEYED_PLIES

E4_C5 = ("e2e4", "c7c5")
SINCE, UNTIL = dt.date(2025, 5, 1), dt.date(2025, 5, 1)
MIN_RATING = 1500


@pytest.fixture(scope="module")
def games() -> tuple[Game, ...]:
    return replay(support.SAMPLE)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory, sample_lake: Path) -> Path:
    """A copy of the sample lake (a test takes it away)."""
    copy = tmp_path_factory.mktemp("serve") / "lake"
    shutil.copytree(sample_lake, copy)
    return copy


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def page(lake: Path, downloads: Path) -> Iterator[tuple[webdriver.Chrome, str]]:
    """The browser, and the server's base URL."""
    with served(lake) as url, chromium(downloads) as driver:
        yield driver, url


def key_after(moves: tuple[str, ...]) -> int:
    board = chess.Board()
    for uci in moves:
        board.push_uci(uci)
    return chess.polyglot.zobrist_hash(board)


def kept(min_rating: int | None = None, since: dt.date | None = None, until: dt.date | None = None):
    """Whether a game passes the page's filters (sql/explorer.sql's definitions)."""

    def keep(game: Game) -> bool:
        white, black = game.elos
        mean = None if white is None or black is None else (white + black) / 2
        day = game.row["datetime"].date() if game.row["datetime"] is not None else None
        return (
            (min_rating is None or (mean is not None and mean >= min_rating))
            and (since is None or (day is not None and day >= since))
            and (until is None or (day is not None and day <= until))
        )

    return keep


def expected_table(
    games: tuple[Game, ...],
    moves: tuple[str, ...],
    keep: Callable[[Game], bool],
    plies: int | None = KEYED_PLIES,
) -> list:
    """python-chess's rows of the table at the position after `moves`: the games that stand there within
    their first `plies` plies (the page's count without the position index), None: at any ply."""
    rows = explorer_rows(games, key_after(moves), keep=keep, plies=plies)
    return [(r["san"], r["games"], r["white_wins"], r["draws"], r["black_wins"]) for r in rows]


def shown_table(driver: webdriver.Chrome) -> list:
    """The moves table's rows: SAN, games and the white/draw/black counts of the bar."""
    rows = []
    for row in driver.find_elements(By.CSS_SELECTOR, "#moves tr.move"):
        bar = row.find_element(By.CSS_SELECTOR, ".wdb")
        counts = [int(bar.get_attribute(f"data-{name}") or "") for name in ("white", "draws", "black")]
        games = int(row.find_element(By.CSS_SELECTOR, "td.games").text.replace(",", ""))
        rows.append((row.find_element(By.CSS_SELECTOR, "td.san").text, games, *counts))
    return rows


def click_move(driver: webdriver.Chrome, san: str) -> None:
    click_and_load(
        driver, driver.find_element(By.XPATH, f"//table[@id='moves']//td[@class='san']/a[text()='{san}']")
    )


def found_how(driver: webdriver.Chrome) -> str | None:
    return driver.find_element(By.ID, "found").get_attribute("data-how")


def line_of(game: Game, plies: int) -> tuple[str, ...]:
    return tuple(m["f"] + m["t"] + (m["promote"] or "").lower() for m in game.moves[:plies])


def error_line(driver: webdriver.Chrome) -> str:
    text = driver.find_element(By.ID, "error").text
    assert len(text.splitlines()) == 1 and "Traceback" not in driver.page_source, text
    return text


def test_click_through_filter_and_back(page: tuple[webdriver.Chrome, str], games: tuple[Game, ...]) -> None:
    driver, url = page
    driver.get(url + "/")
    assert shown_table(driver) == expected_table(games, (), kept())
    click_move(driver, "e4")
    click_move(driver, "c5")
    assert "Sicilian Defense" in driver.find_element(By.CLASS_NAME, "opening").text
    unfiltered = expected_table(games, E4_C5, kept())
    assert shown_table(driver) == unfiltered and unfiltered
    assert found_how(driver) == "stored"

    form = driver.find_element(By.ID, "filters")
    form.find_element(By.NAME, "min_rating").send_keys(str(MIN_RATING))
    for name, day in (("since", SINCE), ("until", UNTIL)):  # a date input's typing depends on the locale
        driver.execute_script("arguments[0].value = arguments[1]", form.find_element(By.NAME, name), str(day))
    click_and_load(driver, form.find_element(By.CSS_SELECTOR, "button[type=submit]"))
    filtered = expected_table(games, E4_C5, kept(MIN_RATING, SINCE, UNTIL))
    assert shown_table(driver) == filtered and filtered != unfiltered
    assert f"min_rating={MIN_RATING}" in driver.current_url and "moves=e2e4+c7c5" in driver.current_url

    # Back through the move list: 1. e4, under the same filters (they live in the URL).
    click_and_load(driver, driver.find_element(By.CSS_SELECTOR, "#line a.ply[data-ply='1']"))
    assert shown_table(driver) == expected_table(games, E4_C5[:1], kept(MIN_RATING, SINCE, UNTIL))
    # A date range no game is in: no move.
    driver.get(f"{url}/?moves=e2e4&until=2025-04-30")
    assert (
        shown_table(driver) == [] and expected_table(games, E4_C5[:1], kept(until=dt.date(2025, 4, 30))) == []
    )


def test_pgn_download(page: tuple[webdriver.Chrome, str], games: tuple[Game, ...], downloads: Path) -> None:
    driver, url = page
    driver.get(f"{url}/?moves=e2e4+c7c5&min_rating={MIN_RATING}")
    driver.find_element(By.ID, "pgn").click()
    saved = downloaded(downloads, "explorer.pgn")
    read = []
    with io.StringIO(saved.read_text(encoding="utf-8")) as text:
        while (game := chess.pgn.read_game(text)) is not None:
            assert not game.errors, game.errors
            read.append(game.headers["Site"])
    key = key_after(E4_C5)
    keep = kept(MIN_RATING)
    # The stored keys': a game at the position in its first plies, or ending there.
    expected = [
        g.row["site"] for g in games if (key in g.keys[:KEYED_PLIES] or g.final_key == key) and keep(g)
    ]
    assert sorted(read) == sorted(expected) and len(read) > 0


def test_illegal_fen_is_one_line(page: tuple[webdriver.Chrome, str]) -> None:
    driver, url = page
    driver.get(url + "/")
    form = driver.find_element(By.ID, "position")
    form.find_element(By.NAME, "fen").send_keys("8/8/8/8/8/8/8/8 w - - 0 1")  # no king
    click_and_load(driver, form.find_element(By.CSS_SELECTOR, "button[type=submit]"))
    assert "FEN" in error_line(driver)
    # A move sequence the position cannot play, and an illegal move in the URL.
    driver.get(f"{url}/?line=1.+e4+e4")
    assert "not a move sequence" in error_line(driver)
    driver.get(f"{url}/?moves=e2e5")
    assert "not a legal move" in error_line(driver)


def test_screenshot_is_not_blank(page: tuple[webdriver.Chrome, str]) -> None:
    driver, url = page
    driver.get(f"{url}/?moves=e2e4+c7c5&flip=1")
    png = driver.get_screenshot_as_png()
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colors = image.getcolors(image.width * image.height) or []
    # Drawn: many colours (board, pieces, bars, text), none covering nearly all of it.
    most = max(count for count, _ in colors) / (image.width * image.height)
    assert image.width >= 1000 and len(png) > 30_000, (image.size, len(png))
    assert len(colors) > 50 and most < 0.9, (len(colors), most)


def test_deeper_by_replay_then_by_the_index(
    page: tuple[webdriver.Chrome, str], games: tuple[Game, ...], lake: Path
) -> None:
    """Past the stored keys, the page replays the games; once the position index is built, it counts every
    game at any ply (a transposition after the first plies too). After the tests of the stored keys: it builds
    the index."""
    driver, url = page
    deep = line_of(next(g for g in games if len(g.moves) > 20), 14)
    driver.get(f"{url}/?moves={'+'.join(deep)}")
    assert found_how(driver) == "replay"
    assert shown_table(driver) == expected_table(games, deep, kept(), plies=None) != []
    assert support.run_module("loaders.position_index", ["--lake", lake]).returncode == 0
    for moves in (deep, E4_C5, ()):
        driver.get(f"{url}/?moves={'+'.join(moves)}")
        assert found_how(driver) == "index"
        assert shown_table(driver) == expected_table(games, moves, kept(), plies=None)


def test_a_damaged_lake_then_no_lake_is_one_line(page: tuple[webdriver.Chrome, str], lake: Path) -> None:
    """A file of the lake cut short (as a copy or a disk can leave it), then the lake taken away (last)."""
    driver, url = page
    plies = sorted((lake / "plies").rglob("*.parquet"))[0]
    plies.write_bytes(plies.read_bytes()[: plies.stat().st_size // 2])
    driver.get(url + "/?moves=e2e4")
    assert "damaged" in error_line(driver)
    aside = lake.parent / "aside"
    aside.mkdir()
    for name in ("games", "plies", "_loads"):
        (lake / name).rename(aside / name)
    driver.get(url + "/?moves=e2e4")
    assert "not a lake" in error_line(driver)


def test_command_errors(tmp_path: Path) -> None:
    support.one_line_error(support.run_module("loaders.serve", ["--lake", tmp_path]), "not a lake")
    support.one_line_error(support.run_module("loaders.serve", ["--lake", tmp_path / "none"]), "no such lake")
    support.one_line_error(support.run_module("loaders.serve", ["--port", "70000"]), "--port")
