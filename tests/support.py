"""What the test modules share, besides the fixtures of conftest.py: the project's commands run for
real, bounded in time and memory (`run_command`, `run_module`, `load`; `start` for a run stopped by a signal
mid-way), PGN inputs generated with known contents (the generator is the oracle for the counts), and a
lake read back as Python values."""

from __future__ import annotations

import functools
import io
import itertools
import json
import os
import re
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import zstandard

from warehouse.ingest.zstd_frames import zstd_frames
from warehouse.lake.parquet import ONE_ROW_GROUP_GAMES
from warehouse.lake.records import LoadRecord

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
SAMPLE = DATA / "lichess_2025-05_sample.pgn.zst"
SAMPLE_GAMES = 438
# Larger PGN collections beside the checkout (absent in most clones: the tests using them skip).
CORPORA = REPO.parent / "shared" / "corpora"


def present(*paths: Path) -> list[Path]:
    """`paths`, all of which exist; else the test is skipped, naming the first missing (the corpora are
    absent in most clones)."""
    missing = [path for path in paths if not path.exists()]
    if missing:
        pytest.skip(f"{missing[0]} is absent")
    return list(paths)


LOAD_MEMORY_MB = 700  # a load's peak RSS stays under this whatever the input
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

Arg = str | bytes | os.PathLike[str]  # bytes: names that are not UTF-8
Row = dict[str, Any]


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_mb: float
    max_fds: int


class Peaks:
    """The peak RSS of a running child, from its /proc/<pid>/status `VmHWM`, and the most file
    descriptors it held (/proc/<pid>/fd), sampled until `stop`.

    Not wait4's ru_maxrss: that one starts from the parent's RSS at fork (it survives the exec), so a
    child of a big pytest process would look as big as pytest."""

    def __init__(self, pid: int, every: float = 0.02):
        self.rss_mb = 0.0
        self.fds = 0
        self._proc = Path(f"/proc/{pid}")
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, args=(every,), daemon=True)
        self._thread.start()

    def _sample(self, every: float) -> None:
        while not self._done.is_set():
            try:
                for line in (self._proc / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        self.rss_mb = max(self.rss_mb, int(line.split()[1]) / 1024)
                self.fds = max(self.fds, len(os.listdir(self._proc / "fd")))
            except (OSError, ValueError):
                return  # the child is gone (or a zombie without memory)
            self._done.wait(every)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


class Started:
    """A command running in the background from the repository's root (or `cwd`), its output collected;
    `finish` waits for it, `stop` ends it with a signal first (the crash and Ctrl-C tests)."""

    def __init__(
        self,
        command: list[Arg],
        *,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
        nofile: int | None = None,
        new_session: bool = False,
        cwd: Path = REPO,
    ):
        # `ulimit -n` in the child only: the test process keeps its own limit.
        limit = (
            None if nofile is None else lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        )
        self.command = command
        self._stdin = stdin
        self._start = time.monotonic()
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            preexec_fn=limit,
            # Its own process group: a test can wait for the command's children to end too.
            start_new_session=new_session,
        )
        self._peaks = Peaks(self.proc.pid)

    def running(self) -> bool:
        return self.proc.poll() is None

    def finish(self, timeout: float = 60) -> Run:
        """Waits for the command's end; killed, and the test failed, past `timeout` seconds."""
        try:
            out, err = self.proc.communicate(self._stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            pytest.fail(f"{shown(self.command)}: killed after {timeout} s")
        finally:
            self._peaks.stop()
        return Run(
            self.proc.returncode,
            out.decode(errors="replace"),
            err.decode(errors="replace"),
            time.monotonic() - self._start,
            self._peaks.rss_mb,
            self._peaks.fds,
        )

    def stop(self, signal: int, timeout: float = 60) -> Run:
        """Sends `signal`, then waits for the end as `finish` does."""
        self.proc.send_signal(signal)
        return self.finish(timeout)


def shown(command: list[Arg]) -> str:
    return " ".join(map(str, command))


def start(command: list[Arg], **options: Any) -> Started:
    """`command` started from the repository's root (options: see `Started`)."""
    return Started(command, **options)


def run_command(command: list[Arg], *, timeout: float = 60, **options: Any) -> Run:
    """`command` from the repository's root to its end, killed and failed past `timeout` seconds, with
    its peak RSS and file descriptors (see `Peaks`); options: `stdin` bytes, `env`, `nofile`, `cwd` (see
    `Started`)."""
    return start(command, **options).finish(timeout)


def python(*args: Arg) -> list[Arg]:
    """A command of this interpreter: `python -m MODULE …`, `python -c CODE …`."""
    return [sys.executable, *args]


def module(name: str, *args: Arg) -> list[Arg]:
    """`python -m NAME ARGS`: how the tests run the project's commands."""
    return python("-m", name, *args)


def run_module(name: str, args: list[Arg], **options: Any) -> Run:
    """`python -m NAME ARGS` to its end (see `run_command`)."""
    return run_command(module(name, *args), **options)


def load(inputs: list[str | Path], lake: str | Path, *extra: str, **options: Any) -> Run:
    """`python -m loaders.pgn2parquet INPUT... --lake LAKE [EXTRA]` to its end (see `run_command`)."""
    return run_module("loaders.pgn2parquet", [*map(str, inputs), "--lake", str(lake), *extra], **options)


def json2parquet(*args: str | Path) -> Run:
    """`python -m loaders.json2parquet ARGS` to its end (see `run_command`)."""
    return run_module("loaders.json2parquet", [str(a) for a in args], timeout=300)


def loaded(inputs: list[str | Path], lake: Path, *extra: str) -> Path:
    """`lake`, after a load of `inputs` that must succeed."""
    done = load(inputs, lake, *extra)
    assert done.returncode == 0, done.stderr
    return lake


def one_line_error(run: Run, *needles: str) -> None:
    """A user error: exit 2, one line on stderr naming what went wrong, no traceback."""
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    for needle in needles:
        assert needle in run.stderr, (needle, run.stderr)


# --- inputs ---


@functools.cache
def sample_pgn() -> bytes:
    """The bundled sample, decompressed (two zstd frames)."""
    with SAMPLE.open("rb") as f:
        return zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True).read()


def sample_games() -> list[str]:
    """The bundled sample's 438 games, as text."""
    return ["[Event" + g for g in sample_pgn().decode().split("[Event") if g.strip()]


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


# --- a lake read back ---


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` (links not followed) with its content: to compare before and after."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            found[str(path.relative_to(folder))] = b"" if path.is_symlink() else path.read_bytes()
    return found


def lake_counts(lake: Path) -> tuple[int, int]:
    """(games, distinct game_id) as a DuckDB reader sees the lake through the views' glob."""
    if not any((lake / "games").glob("**/*.parquet")):
        return 0, 0
    glob = f"{lake}/games/**/*.parquet"
    ((games, ids),) = duckdb.sql(f"select count(*), count(distinct game_id) from '{glob}'").fetchall()
    return int(games), int(ids)


def read_games(lake: Path, columns: list[str] | None = None) -> list[Row]:
    """Every row of `lake/games/` (or its `columns`), hive partition columns (type, year, month)
    included; none for a lake without games."""
    games = lake / "games"
    if not games.is_dir():
        return []
    return lake_dataset(games).to_table(columns=columns).to_pylist()


def read_plies(lake: Path, columns: list[str] | None = None) -> list[Row]:
    """Every row of `lake/plies/` (or its `columns`); none for a lake without plies."""
    plies = lake / "plies"
    return lake_dataset(plies).to_table(columns=columns).to_pylist() if plies.is_dir() else []


def read_rejects(lake: Path) -> list[Row]:
    """Every record of `lake/rejects/*.jsonl`, file by file. Lines are split at "\\n" only: a reject's
    raw text may hold other line breaks (U+2028, \\x1c…), which JSON leaves unescaped."""
    return [
        json.loads(line)
        for path in sorted((lake / "rejects").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").split("\n")
        if line.strip()
    ]


def read_records(lake: Path) -> list[Row]:
    """Every commit record of `lake/_loads/`, in name order."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((lake / "_loads").glob("*.json"))]


def check_lake(lake: Path) -> None:
    """`python -m warehouse.maintenance.check` finds nothing wrong with `lake`."""
    run = run_module("warehouse.maintenance.check", ["--lake", str(lake)])
    assert run.returncode == 0, run.stdout + run.stderr


def read_inputs(lake: Path) -> list[Row]:
    """Every input file the commit records of `lake` list: a load of one is its record, a load of several
    lists them in `inputs`."""
    return [i for r in read_records(lake) for i in (r.get("inputs") or [r])]


def without_source(game: Row) -> Row:
    """A stored game but for where it was read from (which differs between inputs of the same games)."""
    return {k: v for k, v in game.items() if k not in ("source_file", "source_offset")}


# What two loads of the same input must agree on, whatever wrote them (threads, Spark).
RECORD_FIELDS = [
    "games_seen",
    "games_written",
    "games_rejected",
    "games_duplicate",
    "rejects_by_kind",
    "damage",
    "sha256",
    "compression",
    "size",
]


def load_summary(record: LoadRecord, lake: Path) -> Row:
    """A load's input, its record's `RECORD_FIELDS` and its rejects file's lines: what any two loads of
    the same input into the same lake must agree on."""
    lines = []
    if record.rejects_file:
        lines = (lake / record.rejects_file).read_text(encoding="utf-8").split("\n")
    return {"input": record.input, **{k: getattr(record, k) for k in RECORD_FIELDS}, "rejects": lines}


def lake_dataset(folder: Path) -> ds.Dataset:
    """A table of a lake (`games/`, `plies/`) as a hive-partitioned dataset of every file it holds, as the
    views' glob reads them (pyarrow's discovery would leave out the names starting with `_` or `.`)."""
    return ds.dataset(folder, format="parquet", partitioning="hive", ignore_prefixes=[])


def lake_table(lake: Path, folder: str, keys: list[str]) -> pa.Table:
    """`lake/folder` (games or plies) as one table sorted by `keys`, hive partition columns included."""
    if not (lake / folder).is_dir():
        return pa.table({})
    table = lake_dataset(lake / folder).to_table()
    return table.sort_by([(k, "ascending") for k in keys])


def interrupted_publish(lake: Path) -> bool:
    """A committed operation with staged files not yet moved into place."""
    staging = lake / "_staging"
    return staging.is_dir() and any(
        (lake / "_loads" / f"{op.name}.json").exists() and any(p.is_file() for p in op.rglob("*"))
        for op in staging.iterdir()
    )


def assert_row_groups_by_kind(lake: Path) -> tuple[int, int]:
    """Every games/ file and its plies/ twin hold the same games row group by row group, in the same order;
    a row group holds one kind of game, analysed (`has_eval`) or not, the plies' `analysed` statistics
    telling the kind (what lets DuckDB skip a row group), but for the only row group of a file of fewer
    than `ONE_ROW_GROUP_GAMES` games, which may hold the others then the analysed ones. Returns the
    analysed games seen and the row groups holding both kinds."""
    analysed = mixed = 0
    for games_file in (lake / "games").rglob("*.parquet"):
        games = pq.ParquetFile(games_file)
        plies = pq.ParquetFile(lake / "plies" / games_file.relative_to(lake / "games"))
        assert games.num_row_groups == plies.num_row_groups, games_file
        column = plies.schema_arrow.get_field_index("analysed")
        for g in range(games.num_row_groups):
            group = games.read_row_group(g, columns=["game_key", "has_eval", "n_plies"])
            flags = group["has_eval"].to_pylist()
            stats = plies.metadata.row_group(g).column(column).statistics
            if len(set(flags)) == 1:
                assert (stats.min, stats.max) == (flags[0], flags[0]), f"{games_file} row group {g}"
            else:
                assert games.num_row_groups == 1, f"{games_file}: analysed games and others in a row group"
                assert games.metadata.num_rows < ONE_ROW_GROUP_GAMES, games_file
                assert flags == sorted(flags), f"{games_file}: the others, then the analysed games"
                assert (stats.min, stats.max) == (False, True)
                mixed += 1
            keys = plies.read_row_group(g, columns=["game_key"])["game_key"].to_pylist()
            pairs = zip(group["game_key"].to_pylist(), group["n_plies"].to_pylist(), strict=True)
            played = [k for k, n in pairs if n]
            assert [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k] == played, games_file
            assert len(keys) == sum(group["n_plies"].to_pylist())
            analysed += sum(flags)
    return analysed, mixed


def httpfs_error(command: list[str]) -> str | None:
    """Why httpfs cannot be loaded by the duckdb CLI `command`, else None."""
    done = run_command([*command, "-c", "install httpfs; load httpfs"], timeout=120)
    return done.stderr.strip().splitlines()[0] if done.returncode or done.stderr else None


def needs_httpfs(command: list[str]) -> None:
    if (error := httpfs_error(command)) is not None:
        pytest.skip(f"DuckDB's httpfs extension is not available: {error}")


def damaged(path: Path) -> Path:
    """Frames with checksums, the third's data damaged: a load keeps the games before the damage."""
    cut_frames(path, make_games(1000, 300), zstandard.ZstdCompressor(write_checksum=True))
    frames = zstd_frames(str(path))
    assert frames is not None
    data = bytearray(path.read_bytes())
    middle = frames[2].offset + frames[2].size // 2
    data[middle : middle + 8] = bytes(b ^ 0x5A for b in data[middle : middle + 8])
    path.write_bytes(bytes(data))
    return path


def cut_frames(path: Path, text: str, compressor: zstandard.ZstdCompressor | None = None) -> Path:
    """`text` as zstd frames that start at a game's first byte, inside movetext, inside a comment, and at
    a tag line in the middle of a game's tags (where a part's guess of its first game is wrong)."""
    data = text.encode()
    games = [m.start() for m in re.finditer(rb"\[Event ", data)]
    cuts = [
        games[40],
        data.index(b" 10. ", games[80]) + 1,
        data.index(b"{ [%clk", games[120]) + 3,
        data.index(b"\n[Date ", games[160]) + 1,
        games[200] - 1,
    ]
    compressor = compressor or zstandard.ZstdCompressor()
    bounds = [0, *cuts, len(data)]
    path.write_bytes(b"".join(compressor.compress(data[a:b]) for a, b in itertools.pairwise(bounds)))
    return path


def games_as_values(lake: Path) -> list[dict[str, object]]:
    """The lake's games, sorted by id, but for where each was read from."""
    return [without_source(g) for g in lake_table(lake, "games", ["game_id"]).to_pylist()]


def plies_as_values(lake: Path) -> list[dict[str, object]]:
    """The lake's plies, sorted by game and ply."""
    return lake_table(lake, "plies", ["game_key", "ply"]).to_pylist()
