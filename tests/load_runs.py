"""Helpers for the load, crash, hostile-input and maintenance tests: the real CLIs, bounded in time and
memory, and PGN inputs generated with known contents (the generator is the oracle for the counts)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import zstandard

REPO = Path(__file__).resolve().parents[1]
SAMPLE_ZST = REPO / "tests" / "data" / "lichess_2025-05_sample.pgn.zst"
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_mb: float


class PeakRss:
    """The peak RSS of a running child, from its /proc/<pid>/status `VmHWM`, sampled until `stop`.

    Not wait4's ru_maxrss: that one starts from the parent's RSS at fork (it survives the exec), so a
    child of a big pytest process would look as big as pytest."""

    def __init__(self, pid: int, every: float = 0.02):
        self.mb = 0.0
        self._status = Path(f"/proc/{pid}/status")
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, args=(every,), daemon=True)
        self._thread.start()

    def _sample(self, every: float) -> None:
        while not self._done.is_set():
            try:
                for line in self._status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        self.mb = max(self.mb, int(line.split()[1]) / 1024)
            except (OSError, ValueError):
                return  # the child is gone (or a zombie without memory)
            self._done.wait(every)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def run_module(module: str, args: list[str], *, timeout: float = 60, stdin: bytes | None = None) -> Run:
    """`python -m MODULE ARGS` from the repository's root, killed and failed past `timeout` seconds;
    the child's own peak RSS is sampled from /proc (see `PeakRss`)."""
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        inp.write(stdin or b"")
        inp.seek(0)
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", module, *args], cwd=REPO, stdin=inp, stdout=out, stderr=err
        )
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        peak = PeakRss(proc.pid)
        _, status, _ = os.wait4(proc.pid, 0)
        timer.cancel()
        peak.stop()
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        result = Run(
            proc.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            seconds,
            peak.mb,
        )
    assert seconds < timeout, f"{module} {' '.join(args)}: killed after {timeout} s"
    return result


def load(
    inputs: list[str | Path], lake: str | Path, *extra: str, timeout: float = 60, stdin: bytes | None = None
) -> Run:
    return run_module(
        "loaders.pgn2parquet", [*map(str, inputs), "--lake", str(lake), *extra], timeout=timeout, stdin=stdin
    )


def sample_games() -> list[str]:
    """The bundled sample's 438 games, as text."""
    with SAMPLE_ZST.open("rb") as f:
        text = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True).read().decode()
    return ["[Event" + g for g in text.split("[Event") if g.strip()]


def lichess_id(n: int) -> str:
    digits = []
    for _ in range(8):
        n, d = divmod(n, len(ALPHABET))
        digits.append(ALPHABET[d])
    return "".join(reversed(digits))


def make_games(first: int, count: int, *, year: int = 2025, month: int = 5) -> str:
    """`count` distinct games: the sample's games in turn, each with the lichess id of its number
    (`first`, `first + 1`, …) and the given month; so games `first…first+count-1` are the same wherever
    they are generated."""
    games = sample_games()
    out = io.StringIO()
    for n in range(first, first + count):
        g = games[n % len(games)]
        g = re.sub(r'\[Site "[^"]*"\]', f'[Site "https://lichess.org/{lichess_id(n)}"]', g)
        g = re.sub(r'\[(UTCDate|Date) "\d{4}\.\d\d', rf'[\1 "{year}.{month:02d}', g)
        out.write(g)
    return out.getvalue()


def write_zst(path: Path, text: str) -> Path:
    path.write_bytes(zstandard.ZstdCompressor().compress(text.encode()))
    return path


def lake_counts(lake: Path) -> tuple[int, int]:
    """(games, distinct game_id) as a DuckDB reader sees the lake through the views' glob."""
    if not any((lake / "games").glob("**/*.parquet")):
        return 0, 0
    glob = f"{lake}/games/**/*.parquet"
    ((games, ids),) = duckdb.sql(f"select count(*), count(distinct game_id) from '{glob}'").fetchall()
    return int(games), int(ids)


def one_line_error(run: Run, *needles: str) -> None:
    """A user error: exit 2, one line on stderr naming what went wrong, no traceback."""
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    for needle in needles:
        assert needle in run.stderr, (needle, run.stderr)
