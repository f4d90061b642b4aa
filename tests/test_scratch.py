"""Scratch space outside the lake: DuckDB's spill in a folder of the process's own in the system's temporary
folder (never `.tmp` in the working directory, DuckDB's default), removed at exit, and removed by the next
process when a kill left it; a folder a live process holds is never touched."""

from __future__ import annotations

import os
import signal
import textwrap
import time
from pathlib import Path

import pytest
from support import SAMPLE, loaded, python, run_command, start

from warehouse import scratch

# A query that spills (a table of ~150 MB in 50 MB), over a connection to the lake, then prints where
# DuckDB's files are while it is open; then does what the test's `then` says.
SPILLING = """
    import os, signal, sys
    from warehouse.queries.sql import connect
    con = connect(sys.argv[1])
    con.execute("set memory_limit = '50MB'; set threads = 1")
    con.execute("create table t as select i, md5(i::varchar) s from range(3000000) t(i)")
    spill = con.sql("select current_setting('temp_directory')").fetchall()[0][0]
    print(spill, len(os.listdir(spill)), flush=True)
    {then}
"""


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return loaded([SAMPLE], tmp_path_factory.mktemp("scratch") / "lake")


def run_spilling(lake: Path, tmp_path: Path, then: str) -> tuple[int, str, Path]:
    """Runs `SPILLING` in a working directory and a system temporary folder of its own (`TMPDIR`); returns
    its exit code, the spill folder and its number of files it printed, and the temporary folder."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    code = textwrap.dedent(SPILLING.format(then=then))
    done = run_command(python("-c", code, str(lake)), cwd=work, env={**os.environ, "TMPDIR": str(tmp)})
    assert not list(work.iterdir()), "nothing in the working directory"
    assert done.returncode in (0, -signal.SIGKILL), done.stderr
    return done.returncode, done.stdout.strip(), tmp


def test_a_query_spills_into_the_process_folder_removed_at_exit(lake: Path, tmp_path: Path) -> None:
    code, printed, tmp = run_spilling(lake, tmp_path, then="con.close()")
    assert code == 0, printed
    spill, files = printed.rsplit(" ", 1)
    assert int(files) > 0, "the query spilled"
    assert Path(spill).parent.parent == tmp and Path(spill).parent.name.startswith(scratch.PREFIX)
    assert not list(tmp.iterdir())


def test_a_killed_query_s_folder_is_removed_by_the_next_process(lake: Path, tmp_path: Path) -> None:
    code, printed, tmp = run_spilling(lake, tmp_path, then="os.kill(os.getpid(), signal.SIGKILL)")
    assert code == -signal.SIGKILL
    (left,) = tmp.iterdir()
    assert left.name.startswith(scratch.PREFIX) and any(left.rglob("duckdb_temp*")), printed
    env = {**os.environ, "TMPDIR": str(tmp)}
    mine = "from warehouse import scratch; print(scratch.process_folder())"
    done = run_command(python("-c", mine), env=env)
    assert done.returncode == 0, done.stderr
    assert not left.exists()
    assert not list(tmp.iterdir()), "the new process's folder went at its exit"


def test_a_live_process_s_folder_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    holds = "import sys\nfrom warehouse import scratch\nprint(scratch.process_folder(), flush=True)\n"
    holds += "sys.stdin.read()"  # until the test lets it end
    holder = start(python("-c", holds), stdin=b"", env={**os.environ, "TMPDIR": str(tmp_path)})
    assert holder.proc.stdout is not None
    folder = Path(holder.proc.stdout.readline().decode().strip())
    assert folder.parent == tmp_path and folder.is_dir()
    assert scratch.remove_left_folders() == []
    assert folder.is_dir()
    assert holder.finish().returncode == 0
    assert not folder.exists()


def test_a_folder_left_half_made_goes_once_it_is_old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kill between making a process folder and locking it leaves it under its making name: removed once
    older than a process takes to lock it, never while it may still be being made."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    old, new = tmp_path / f"{scratch.MAKING}1-old", tmp_path / f"{scratch.MAKING}2-new"
    for folder in (old, new):
        folder.mkdir()
        (folder / scratch.LOCK).touch()
    past = time.time() - scratch.HALF_MADE_SECONDS - 5
    os.utime(old, (past, past))
    assert scratch.remove_left_folders() == [str(old)]
    assert not old.exists() and new.is_dir()


def test_a_folder_its_owner_was_removing_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process killed while its exit removed its folder may have removed the lock file and left the rest:
    a process folder without its lock is one nobody holds."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    left = tmp_path / f"{scratch.PREFIX}1-left"
    (left / "duckdb-1-0").mkdir(parents=True)
    (left / "duckdb-1-0" / "duckdb_temp_storage.tmp").write_bytes(b"x")
    assert scratch.remove_left_folders() == [str(left)]
    assert not left.exists()
