"""What a hostile-input probe broke on the lake's side (issue 16), through the real commands: a load of
thousands of partitions under a small `ulimit -n`, S3 connections that die or stall while a load
publishes, damaged `_loads` records, and options and lake paths out of range or odd (numbers, names that
are not UTF-8, glob characters, a file or an empty folder given as the lake, Ctrl-C in compaction).

Every failure must be one line and a non-zero exit, never a traceback, and leave a lake that a rerun
completes; every game the input holds must be written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import chess.pgn
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from s3_server import S3Server
from support import (
    LOAD_MEMORY_MB,
    lake_counts,
    load,
    make_games,
    module,
    one_line_error,
    python,
    read_games,
    run_command,
    run_module,
    start,
    tree,
    write_zst,
)

from warehouse import connect
from warehouse.lake.location import Lake
from warehouse.lake.storage import filesystem
from warehouse.maintenance.check import check

# --- item 6: thousands of partitions in one load ---


def one_game_a_month(count: int, first_game: int = 0, first_year: int = 1850) -> str:
    """Games `first_game`… (see `make_games`), one per month from January of `first_year` on: one
    partition per game."""
    games = ["[Event" + g for g in make_games(first_game, count).split("[Event") if g.strip()]
    return "".join(
        re.sub(r'\[(UTCDate|Date) "\d{4}\.\d\d', rf'[\1 "{first_year + n // 12}.{n % 12 + 1:02d}', g)
        for n, g in enumerate(games)
    )


def test_a_historical_archive_loads_within_256_file_descriptors(tmp_path: Path) -> None:
    """1,100 months (1850-1941), one game each: more partitions than `ulimit -n 256` allows open files.
    Every game is written; the files the loader holds open stay bounded whatever the partitions."""
    path = tmp_path / "archive.pgn"
    path.write_text(one_game_a_month(1100))
    lake = tmp_path / "lake"
    run = run_module("loaders.pgn2parquet", [str(path), "--lake", str(lake)], nofile=256, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "1,100 games seen = 1,100 written" in run.stdout, run.stdout
    assert lake_counts(lake) == (1100, 1100)
    assert len(list((lake / "games").glob("**/*.parquet"))) == 1100  # sorted by month: one file each
    assert run.max_fds < 160, f"{run.max_fds} file descriptors open at once"
    assert run.max_rss_mb < LOAD_MEMORY_MB, f"peak RSS {run.max_rss_mb:.0f} MB"
    assert run_module("warehouse.maintenance.check", ["--lake", str(lake)]).returncode == 0


def test_partitions_revisited_out_of_order_lose_nothing(tmp_path: Path) -> None:
    """Games cycling through more partitions than the writer keeps open: files are closed and reopened
    as new files, every game is written once, and compaction merges the extra files."""
    # 300 games over 150 months, visited 1, 2, …, 150, then again: each partition's file was closed.
    path = tmp_path / "cycle.pgn"
    path.write_text(one_game_a_month(150) + one_game_a_month(150, first_game=1000))
    lake = tmp_path / "lake"
    run = run_module("loaders.pgn2parquet", [str(path), "--lake", str(lake)], nofile=128)
    assert run.returncode == 0, run.stderr
    assert lake_counts(lake) == (300, 300)
    assert run_module("warehouse.maintenance.compact", ["--lake", str(lake)]).returncode == 0
    assert lake_counts(lake) == (300, 300)
    assert run_module("warehouse.maintenance.check", ["--lake", str(lake), "--full"]).returncode == 0


# --- item 8: S3 connections that die or stall ---


class Proxy:
    """A TCP proxy to `target` that, once it has forwarded `copies` server-side copy requests (how a
    publish moves a staged file on S3), drops every connection and refuses new ones: the endpoint dies
    in the middle of publishing."""

    def __init__(self, target: tuple[str, int], copies: int):
        self.target, self.copies, self.dead = target, copies, False
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.dead:
                client.close()
                continue
            server = socket.create_connection(self.target)
            self._open += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, requests: bool) -> None:
        try:
            while data := src.recv(1 << 16):
                if requests:
                    self.copies -= data.lower().count(b"x-amz-copy-source:")
                    if self.copies < 0:
                        self.die()
                        return
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                sock.close()

    def die(self) -> None:
        self.dead = True
        for sock in self._open:
            sock.close()

    def close(self) -> None:
        self.die()
        self.listener.close()


def s3_env(endpoint: str, **limits: str) -> dict[str, str]:
    return {**os.environ, "AWS_ENDPOINT_URL": endpoint, **limits}


def test_s3_publish_cut_midway_says_committed_and_a_rerun_finishes(
    s3_server: S3Server, tmp_path: Path
) -> None:
    """The connection dies after 2 of the load's files were moved into place: the error says the load is
    committed and a rerun finishes it (not "nothing was added"); the rerun makes every game visible."""
    url = s3_server.bucket("publish-cut") + "/lake"
    source = write_zst(tmp_path / "may.pgn.zst", make_games(0, 438))
    endpoint = s3_server.endpoint.removeprefix("http://").split(":")
    proxy = Proxy((endpoint[0], int(endpoint[1])), copies=2)
    try:
        env = s3_env(proxy.endpoint, CHESS_S3_ATTEMPTS="1", CHESS_S3_CONNECT_TIMEOUT="2")
        cut = run_module("loaders.pgn2parquet", [str(source), "--lake", url], env=env)
    finally:
        proxy.close()
    one_line_error(cut, str(source), "committed", "run again to finish publishing")
    assert "nothing of it was added" not in cut.stderr
    rerun = run_module("loaders.pgn2parquet", [str(source), "--lake", url])
    assert rerun.returncode == 0, rerun.stderr
    assert "finished publishing" in rerun.stderr and "already loaded" in rerun.stdout
    fs, root = filesystem(url)
    games = ds.dataset(f"{root}/games", filesystem=fs, format="parquet", partitioning="hive").count_rows()
    assert games == 438
    assert run_module("warehouse.maintenance.check", ["--lake", url]).returncode == 0


@pytest.fixture
def stalled_endpoint() -> Iterator[str]:
    """An endpoint that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()
    for sock in held:
        sock.close()


@pytest.mark.parametrize(
    "name", ["loaders.pgn2parquet", "warehouse.maintenance.check", "warehouse.maintenance.compact"]
)
def test_stalled_s3_endpoint_ends_within_the_timeouts(
    s3_server: S3Server, stalled_endpoint: str, tmp_path: Path, name: str
) -> None:
    """With 1 s timeouts and one attempt, a command on a stalled endpoint ends in seconds with one line."""
    source = tmp_path / "one.pgn"
    source.write_text(make_games(0, 1))
    args = [str(source)] if name == "loaders.pgn2parquet" else []
    env = s3_env(
        stalled_endpoint, CHESS_S3_CONNECT_TIMEOUT="1", CHESS_S3_REQUEST_TIMEOUT="1", CHESS_S3_ATTEMPTS="1"
    )
    run = run_module(name, [*args, "--lake", "s3://stalled/lake"], env=env)
    one_line_error(run)
    assert run.seconds < 7, f"{run.seconds:.1f} s"


@pytest.mark.parametrize("value", ["abc", "0", "nan"])
def test_s3_timeout_settings_are_checked(s3_server: S3Server, stalled_endpoint: str, value: str) -> None:
    env = s3_env(stalled_endpoint, CHESS_S3_REQUEST_TIMEOUT=value)
    run = run_module("warehouse.maintenance.check", ["--lake", "s3://any/lake"], env=env)
    one_line_error(run, "CHESS_S3_REQUEST_TIMEOUT")


def test_compaction_cut_while_retiring_files_is_finished_by_the_next_run(tmp_path: Path) -> None:
    """A compaction whose publish fails after the new files are in place, while deleting the old ones:
    the error says it is committed; the next run finds it and deletes them (the lake checks clean)."""
    lake = tmp_path / "lake"
    sources = [write_zst(tmp_path / f"own-{i}.pgn.zst", make_games(i * 40, 40)) for i in range(4)]
    assert load(sources, lake).returncode == 0
    fail_deletes = (
        "import sys, warehouse.lake as lake\n"
        "def refuse(self, rel): raise PermissionError(13, 'Permission denied', rel)\n"
        "lake.Lake.delete = refuse\n"
        "from loaders.compact import main\n"
        "sys.exit(main(['--lake', sys.argv[1]]))\n"
    )
    cut = run_command(python("-c", fail_deletes, str(lake)))
    one_line_error(cut, "committed", "run again to finish publishing")
    rerun = run_module("warehouse.maintenance.compact", ["--lake", str(lake)])
    assert rerun.returncode == 0, rerun.stderr
    checked = run_module("warehouse.maintenance.check", ["--lake", str(lake)])
    assert checked.returncode == 0, checked.stdout
    assert lake_counts(lake) == (160, 160)


# --- item 10: damaged records of _loads/ ---


DAMAGES = {
    "truncated": lambda text: text[: len(text) // 2],
    "not-an-object": lambda text: "[1, 2, 3]\n",
    "missing-key": lambda text: json.dumps({k: v for k, v in json.loads(text).items() if k != "games_seen"}),
    "wrong-type": lambda text: json.dumps({**json.loads(text), "file_rows": ["x"]}),
    "path-outside-the-lake": lambda text: json.dumps({**json.loads(text), "removes": ["../../outside"]}),
    "nested-too-deep": lambda text: "[" * 100_000,
    "not-utf8": lambda text: "\udcff",
}


@pytest.fixture(scope="module")
def loaded_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake of two loads, to copy and damage."""
    tmp = tmp_path_factory.mktemp("damaged")
    sources = [write_zst(tmp / f"part-{i}.pgn.zst", make_games(i * 30, 30)) for i in range(2)]
    assert load(sources, tmp / "lake").returncode == 0
    return tmp / "lake"


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_record_is_reported_and_refused(damage: str, loaded_lake: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    shutil.copytree(loaded_lake, lake)
    record = sorted((lake / "_loads").glob("*.json"))[0]
    record.write_bytes(DAMAGES[damage](record.read_text()).encode(errors="surrogateescape"))
    checked = run_module("warehouse.maintenance.check", ["--lake", str(lake)])
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    assert f"problem: {lake}/_loads/{record.name}: damaged record" in checked.stdout, checked.stdout
    source = tmp_path / "new.pgn"
    source.write_text(make_games(1000, 5))
    one_line_error(load([source], lake), record.name, "damaged record")
    compacted = run_module("warehouse.maintenance.compact", ["--lake", str(lake)])
    one_line_error(compacted, record.name, "damaged record")


def test_a_damaged_record_of_an_interrupted_publish_is_refused(loaded_lake: Path, tmp_path: Path) -> None:
    """Recovery reads the record of a staged operation: damaged, the load refuses by name, not a crash."""
    lake = tmp_path / "lake"
    shutil.copytree(loaded_lake, lake)
    op_id = "20250101T000000-deadbeef"
    (lake / "_staging" / op_id / "games").mkdir(parents=True)
    (lake / "_staging" / op_id / "games" / "x.parquet").write_bytes(b"PAR1")
    (lake / "_loads" / f"{op_id}.json").write_text('{"load_id": "20250101T0')
    source = tmp_path / "new.pgn"
    source.write_text(make_games(1000, 5))
    one_line_error(load([source], lake), f"{op_id}.json", "damaged record")


# --- item 12: options and lake paths ---


@pytest.mark.parametrize("value", ["0", "-1", "50001", "99999999999999999999999", "x"])
def test_batch_games_out_of_range(value: str, tmp_path: Path) -> None:
    source = tmp_path / "one.pgn"
    source.write_text(make_games(0, 1))
    one_line_error(load([source], tmp_path / "lake", "--batch-games", value), "--batch-games")
    assert not (tmp_path / "lake").exists()


@pytest.mark.parametrize("value", ["1", "0", "-5", "99999999999999999999999", "x"])
def test_target_games_out_of_range(value: str, loaded_lake: Path) -> None:
    run = run_module("warehouse.maintenance.compact", ["--lake", str(loaded_lake), "--target-games", value])
    one_line_error(run, "--target-games")


def test_input_name_not_utf8(tmp_path: Path) -> None:
    """A file named with Latin-1 bytes: one line naming it (bytes escaped), the other input still loads."""
    bad = os.fsencode(tmp_path) + b"/caf\xe9.pgn"
    Path(os.fsdecode(bad)).write_text(make_games(0, 3))
    good = tmp_path / "good.pgn"
    good.write_text(make_games(10, 2))
    lake = tmp_path / "lake"
    run = run_module("loaders.pgn2parquet", [bad, str(good), "--lake", str(lake)])
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.count("\n") == 1 and "caf\\xe9.pgn" in run.stderr and "UTF-8" in run.stderr
    assert lake_counts(lake) == (2, 2)


@pytest.mark.parametrize(
    "name", ["loaders.pgn2parquet", "warehouse.maintenance.check", "warehouse.maintenance.compact"]
)
def test_lake_name_not_utf8(name: str, tmp_path: Path) -> None:
    lake = os.fsencode(tmp_path) + b"/l\xe9ke"
    os.mkdir(lake)
    source = tmp_path / "one.pgn"
    source.write_text(make_games(0, 1))
    args = [str(source)] if name == "loaders.pgn2parquet" else []
    run = run_module(name, [*args, "--lake", lake])
    one_line_error(run, "l\\xe9ke", "UTF-8")


@pytest.mark.parametrize("name", ["lake?", "lake[1]", "la*ke", "lake]"])
def test_lake_named_with_glob_characters_is_read_alone(name: str, tmp_path: Path) -> None:
    """The views read the lake of that exact name, not a sibling its name would match as a pattern."""
    lake = tmp_path / name
    assert load([write_zst(tmp_path / "five.pgn.zst", make_games(0, 5))], lake).returncode == 0
    sibling = tmp_path / name.replace("?", "X").replace("[1]", "1").replace("*", "XY").replace("]", "")
    assert load([write_zst(tmp_path / "three.pgn.zst", make_games(100, 3))], sibling).returncode == 0
    con = connect(lake)
    ((games, files),) = con.sql("select count(*), count(distinct filename) from games").fetchall()
    assert (games, files) == (5, len(list(lake.glob("games/**/*.parquet"))))
    if shutil.which("duckdb"):  # the same views through the duckdb CLI, as `duckdb < sql/<file>.sql` runs
        cli_run = run_command(
            ["duckdb", "-csv", "-noheader", "-c", "import database 'sql/views'; select count(*) from games"],
            env={**os.environ, "CHESS_LAKE": str(lake)},
        )
        assert cli_run.stdout.strip() == "5", cli_run.stdout + cli_run.stderr


@pytest.mark.parametrize("name", ["warehouse.maintenance.check", "warehouse.maintenance.compact"])
@pytest.mark.parametrize("kind", ["file", "empty-dir", "missing"])
def test_lake_that_is_no_lake(name: str, kind: str, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    if kind == "file":
        lake.write_text("not a lake")
    elif kind == "empty-dir":
        lake.mkdir()
    one_line_error(run_module(name, ["--lake", str(lake)]), str(lake))
    assert kind == "file" or not lake.exists() or not any(lake.iterdir()), "nothing created in it"


def test_load_into_a_file_or_an_empty_directory(tmp_path: Path) -> None:
    source = tmp_path / "one.pgn"
    source.write_text(make_games(0, 1))
    (tmp_path / "file").write_text("not a lake")
    one_line_error(load([source], tmp_path / "file"), "is a file")
    (tmp_path / "empty").mkdir()
    assert load([source], tmp_path / "empty").returncode == 0  # a new lake
    assert lake_counts(tmp_path / "empty") == (1, 1)


@pytest.fixture
def many_small_files(tmp_path: Path) -> Path:
    """40 loads of 60 games into one month: 40 small files per speed to merge."""
    sources = [write_zst(tmp_path / f"own-{i}.pgn.zst", make_games(i * 60, 60)) for i in range(40)]
    lake = tmp_path / "lake"
    assert load(sources, lake, timeout=120).returncode == 0
    return lake


def test_ctrl_c_during_compaction(many_small_files: Path) -> None:
    """SIGINT once compaction has started writing: one line, a non-zero exit, the lake as consistent as
    before (every game once) and compacted by the next run."""
    lake = many_small_files
    compaction = start(module("warehouse.maintenance.compact", "--lake", str(lake)))
    deadline = time.monotonic() + 30
    while (
        not any((lake / "_staging").glob("*/games")) and compaction.running() and time.monotonic() < deadline
    ):
        time.sleep(0.005)
    stopped = compaction.stop(signal.SIGINT)
    err = stopped.stderr
    assert stopped.returncode == 130, (stopped.returncode, stopped.stdout, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "interrupted" in err, err
    assert lake_counts(lake) == (2400, 2400)
    assert run_module("warehouse.maintenance.compact", ["--lake", str(lake)]).returncode == 0
    assert run_module("warehouse.maintenance.check", ["--lake", str(lake)]).returncode == 0
    assert lake_counts(lake) == (2400, 2400)


def test_compaction_prints_no_warning(tmp_path: Path) -> None:
    """The content hash is a sum modulo 2**64 (no numpy overflow warning)."""
    lake = tmp_path / "lake"
    sources = [write_zst(tmp_path / f"own-{i}.pgn.zst", make_games(i * 50, 50)) for i in range(3)]
    assert load(sources, lake).returncode == 0
    run = run_module("warehouse.maintenance.compact", ["--lake", str(lake)])
    assert run.returncode == 0 and "merged" in run.stdout, run.stderr
    assert run.stderr == "", run.stderr


# --- issue 26, item 2: nothing is written, moved or deleted through a symbolic link ---

STALE_OP = "20250101T000000-deadbeef"  # a staging folder without a record: what a writer drops


@pytest.mark.parametrize("name", ["_staging", "_loads", "games", "plies", "rejects", "_lock", "_layout.json"])
def test_a_lake_whose_own_entry_is_a_link_is_refused(name: str, loaded_lake: Path, tmp_path: Path) -> None:
    """The entry moved elsewhere and linked back (`_staging`: linked to another lake's, holding a load in
    flight there): a load, a compaction and a check are refused in one line naming it, and nothing changes,
    in the lake or where the link leads."""
    lake, other = tmp_path / "lake", tmp_path / "other"
    shutil.copytree(loaded_lake, lake)
    shutil.copytree(loaded_lake, other)
    target = other / name if name == "_staging" else tmp_path / "elsewhere" / name
    target.parent.mkdir(exist_ok=True)
    if name == "_staging":
        (target / STALE_OP / "games").mkdir(parents=True)
        (target / STALE_OP / "games" / "x.parquet").write_bytes(b"the other lake's load in flight")
        shutil.rmtree(lake / name, ignore_errors=True)
    elif (lake / name).exists():
        shutil.move(lake / name, target)
    else:
        target.mkdir()
    (lake / name).symlink_to(target)
    before = (tree(lake), tree(target.parent))
    source = tmp_path / "new.pgn"
    source.write_text(make_games(1000, 5))
    for command in (
        ["loaders.pgn2parquet", str(source), "--lake", str(lake)],
        ["warehouse.maintenance.compact", "--lake", str(lake)],
        ["warehouse.maintenance.check", "--lake", str(lake)],
    ):
        one_line_error(run_module(command[0], command[1:]), f"{lake}/{name}", "symbolic link")
        assert (tree(lake), tree(target.parent)) == before, command


def test_a_forced_reload_does_not_delete_through_a_linked_partition(tmp_path: Path) -> None:
    """A partition folder moved to another disk and linked back: `--force` would retire the input's files
    there; it is refused before its commit, and nothing is deleted or added, in the lake or the other
    disk."""
    source = write_zst(tmp_path / "games.pgn.zst", make_games(0, 60))
    lake = tmp_path / "lake"
    assert load([source], lake).returncode == 0
    partition = next((lake / "games").glob("type=*/year=*/month=*"))
    elsewhere = tmp_path / "disk2" / "month"
    elsewhere.parent.mkdir()
    shutil.move(partition, elsewhere)
    partition.symlink_to(elsewhere)
    before = (tree(lake), tree(elsewhere))
    forced = load([source], lake, "--force")
    one_line_error(forced, str(partition.relative_to(lake)), "symbolic link")
    assert (tree(lake), tree(elsewhere)) == before


# --- issue 26: data files deleted by hand, or damaged on the disk ---


def chess_plies(sources: list[Path]) -> dict[str, int]:
    """The mainline plies of each game of `sources` by its lichess id, as python-chess reads them."""
    plies = {}
    for source in sources:
        with source.open(encoding="utf-8") as f:
            while (game := chess.pgn.read_game(f)) is not None:
                plies[game.headers["Site"].rsplit("/", 1)[1]] = len(list(game.mainline_moves()))
    return plies


@pytest.fixture(scope="module")
def plain_sources(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two inputs of games over two months, as plain PGN (python-chess reads them)."""
    tmp = tmp_path_factory.mktemp("plain")
    sources = [tmp / f"month-{m}.pgn" for m in (4, 5)]
    for i, (source, month) in enumerate(zip(sources, (4, 5), strict=True)):
        source.write_text(make_games(i * 40, 40, month=month))
    return sources


@pytest.fixture(scope="module")
def two_month_lake(plain_sources: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`plain_sources` loaded by the loader: files of several speeds in two months. Copy it to change it."""
    lake = tmp_path_factory.mktemp("two-months") / "lake"
    assert load(plain_sources, lake).returncode == 0
    return lake


def games_files(lake: Path) -> list[Path]:
    return sorted((lake / "games").rglob("*.parquet"))


def test_plies_whose_games_file_was_deleted_are_not_counted(
    plain_sources: list[Path], two_month_lake: Path, tmp_path: Path
) -> None:
    """Each games file deleted in turn, its plies file left: the views count the plies of the games left
    (python-chess's count of their moves), through Python and the duckdb CLI, and `check --full` names both
    files in one line each."""
    plies_of = chess_plies(plain_sources)
    views = "select (select count(*) from plies), (select count(*) from all_plies), "
    views += "(select count(*) from stored_plies), (select count(*) from game_plies)"
    for n in range(len(games_files(two_month_lake))):
        lake = tmp_path / f"lake-{n}"
        shutil.copytree(two_month_lake, lake)
        deleted = games_files(lake)[n]
        deleted.unlink()
        left = [row["game_id"] for row in read_games(lake, ["game_id"])]
        want = sum(plies_of[game_id] for game_id in left)
        assert connect(lake).sql(views).fetchall() == [(want,) * 4], deleted
        cli_run = run_command(
            ["duckdb", "-csv", "-noheader", "-c", f"import database 'sql/views'; {views}"],
            env={**os.environ, "CHESS_LAKE": str(lake)},
        )
        assert cli_run.stdout.strip() == ",".join([str(want)] * 4), cli_run.stdout + cli_run.stderr
        checked = run_module("warehouse.maintenance.check", ["--lake", str(lake), "--full"])
        assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
        games_rel = str(deleted.relative_to(lake))
        plies_rel = "plies" + games_rel.removeprefix("games")
        lines = checked.stdout.splitlines()
        assert f"problem: {games_rel}: listed by a committed record but missing" in lines, checked.stdout
        assert any(
            line.startswith(f"problem: {plies_rel}: its games file {games_rel} is missing") for line in lines
        )


def flipped(path: Path, offset: int) -> bytes:
    """`path`'s bytes before one bit of the byte at `offset` is flipped in place."""
    data = path.read_bytes()
    path.write_bytes(data[:offset] + bytes([data[offset] ^ 0x10]) + data[offset + 1 :])
    return data


def page_ends(path: Path) -> list[tuple[str, int]]:
    """Each column chunk of `path`'s first row group, with the offset of the last byte of its data pages
    and, when it has one, of its dictionary page (the byte before its first data page)."""
    meta = pq.read_metadata(path).row_group(0)
    ends = []
    for c in range(meta.num_columns):
        chunk = meta.column(c)
        start = chunk.dictionary_page_offset or chunk.data_page_offset
        ends.append((chunk.path_in_schema, start + chunk.total_compressed_size - 1))
        if chunk.dictionary_page_offset:
            ends.append((f"{chunk.path_in_schema} (dictionary)", chunk.data_page_offset - 1))
    return ends


def test_check_full_finds_a_bit_flipped_in_any_column(two_month_lake: Path, tmp_path: Path) -> None:
    """One bit flipped in the last byte of each page kind of each column chunk of a games file and of its
    plies twin, in turn: `check --full` reports the file every time. Without page checksums a flip in a
    player's name, a result, a clock… decoded as another value and checked clean."""
    lake = tmp_path / "lake"
    shutil.copytree(two_month_lake, lake)
    games = games_files(lake)[0]
    missed = []
    for path in (games, lake / "plies" / games.relative_to(lake / "games")):
        rel = str(path.relative_to(lake))
        for column, offset in page_ends(path):
            before = flipped(path, offset)
            problems, _ = check(Lake.open(str(lake)), full=True)
            path.write_bytes(before)
            if not any(line.startswith(f"{rel}: ") for line in problems):
                missed.append(f"{rel}: {column}")
    assert missed == []
    flipped(games, page_ends(games)[0][1])
    checked = run_module("warehouse.maintenance.check", ["--lake", str(lake), "--full"])
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    assert f"problem: {games.relative_to(lake)}: unreadable: " in checked.stdout, checked.stdout


EXPORTS = {
    "pgn": ("loaders.parquet2pgn", [], "out.pgn"),
    "bgn": ("loaders.parquet2json", [], "out"),
    "study": ("loaders.parquet2json", ["--format", "study"], "out.json"),
}


def test_a_damaged_moves_page_stops_every_reader_in_one_line(two_month_lake: Path, tmp_path: Path) -> None:
    """A bit flipped in the page of the games' moves' destination squares: `check --full` reports the file,
    and every export stops in one line naming it and writes nothing. Before, the PGN and study exports
    died with tracebacks and the BGN export wrote the impossible move."""
    lake = tmp_path / "lake"
    shutil.copytree(two_month_lake, lake)
    damaged = games_files(lake)[0]
    flipped(damaged, dict(page_ends(damaged))["moves.list.element.t"])
    checked = run_module("warehouse.maintenance.check", ["--lake", str(lake), "--full"])
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    assert f"problem: {damaged.relative_to(lake)}: unreadable: " in checked.stdout, checked.stdout
    for name, (command, options, out) in EXPORTS.items():
        run = run_module(command, [*options, "--lake", str(lake), str(tmp_path / out)])
        one_line_error(run, str(damaged), "damaged")
        assert not (tmp_path / out).exists(), name
        assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")], name


def without_checksums(path: Path, change: Callable[[pa.Table], pa.Table] = lambda table: table) -> None:
    """Rewrites the lake's file `path` as the lake wrote it before page checksums (its row groups kept),
    its content changed by `change`."""
    parquet = pq.ParquetFile(path)
    groups = [change(parquet.read_row_group(g)) for g in range(parquet.num_row_groups)]
    with pq.ParquetWriter(path, parquet.schema_arrow, compression="zstd") as writer:
        for group in groups:
            writer.write_table(group, row_group_size=max(group.num_rows, 1))


def test_files_without_checksums_are_read_and_checked(two_month_lake: Path, tmp_path: Path) -> None:
    """Files written before the lake wrote page checksums: checked clean and exported as the same files
    with checksums are. A move changed in one of them (a flip that decoded as another square) is found by
    `check --full`, which names the file, and stops the PGN export in one line naming the game."""
    lake = tmp_path / "lake"
    shutil.copytree(two_month_lake, lake)
    games = games_files(lake)[0]
    plies = lake / "plies" / games.relative_to(lake / "games")
    for path in (games, plies):
        without_checksums(path)
    checked = run_module("warehouse.maintenance.check", ["--lake", str(lake), "--full"])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for source, out in ((two_month_lake, tmp_path / "with.pgn"), (lake, tmp_path / "without.pgn")):
        assert run_module("loaders.parquet2pgn", ["--lake", str(source), str(out)]).returncode == 0
    assert (tmp_path / "with.pgn").read_bytes() == (tmp_path / "without.pgn").read_bytes()

    def another_square(table: pa.Table) -> pa.Table:
        """The first game's 6th move going to a square no piece of its can reach."""
        games = table.to_pylist()
        games[0]["moves"][5]["t"] = "h1" if games[0]["moves"][5]["t"] != "h1" else "a8"
        return pa.Table.from_pylist(games, table.schema)

    without_checksums(games, another_square)
    checked = run_module("warehouse.maintenance.check", ["--lake", str(lake), "--full"])
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    assert f"problem: {games.relative_to(lake)}: " in checked.stdout, checked.stdout
    one_line_error(run_module("loaders.parquet2pgn", ["--lake", str(lake), str(tmp_path / "x.pgn")]), "ply 6")
    assert not (tmp_path / "x.pgn").exists()


def test_a_truncated_plies_file_is_named_by_the_position_commands(
    two_month_lake: Path, tmp_path: Path
) -> None:
    """A plies file cut short: the position search (DuckDB reads it) and the book (pyarrow reads it) stop in
    one line naming that file, not its games twin."""
    lake = tmp_path / "lake"
    shutil.copytree(two_month_lake, lake)
    cut = lake / "plies" / games_files(lake)[-1].relative_to(lake / "games")
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    one_line_error(run_module("loaders.positions", [fen, "--lake", str(lake)]), str(cut), "damaged")
    one_line_error(run_module("loaders.book", ["--lake", str(lake), str(tmp_path / "b.parquet")]), str(cut))
    assert not (tmp_path / "b.parquet").exists()
