"""Loader benchmark: games/s per core, end to end, beside baselines measured in the same run.

    python bench/bench_load.py [--games 200000] [--oracle-games 2000] [--jobs 1 2 ...] [--runs 1]

Builds a realistic multi-frame `.pgn.zst` with ../shared/tools/make-bench-dump (cached in bench/out/),
then measures on that file:
  - the loader, pinned to one core (`taskset -c 0`): zstd → replay → Parquet, per CPU-second and wall;
  - the loader with `--jobs N` for each N of --jobs (default: 1 and every core this process may use),
    unpinned: games/s wall, games per CPU-second, and the wall speed-up over --jobs 1; beside it, N
    independent `--jobs 1` loads run at once (the machine's own ceiling for N cores' work);
  - python-chess replaying the first --oracle-games games with a visitor extracting the same fields;
  - the peer binding (rust-pgn-reader-python-binding, installed into a throwaway venv in bench/out/ when
    missing) parsing and replaying the same games on one thread, writing nothing;
  - `zstd -d` alone;
  - the loader's peak RSS, on the full dump and on a quarter of it (memory must not grow with input);
  - where a game's CPU goes, stage by stage, in this process on the quarter dump: the Rust reader
    (decompress, parse, replay, Arrow, the games' plies and position columns), the split of its batches
    into the two tables, pyarrow's Parquet encoding of `games/` then of `plies/` (µs per game, CPU time);
  - where a load's CPU goes, thread by thread, for each --jobs N (a load of the quarter dump in this
    process): what N > 1 costs more than N = 1, and how often fewer than N of its threads could run.
`--jobs N` is N cores' work (`warehouse.cores.load_threads`): `--jobs 1` reads and encodes on the loading
thread alone, so the speed-up over it is the scaling; `--jobs 2` reads the dump (many zstd frames) in parts
of its frames on two reader threads and encodes on two; more, N reader threads (beside one that
decompresses and frames) and N encoder threads.
Not a test: it prints figures, it asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import chess.pgn
import pyarrow as pa
import zstandard

from warehouse import _core
from warehouse.ingest.load import load_input
from warehouse.lake.location import Lake
from warehouse.lake.parquet import ROW_GROUP_GAMES, open_parquet_writer
from warehouse.lake.positions import derive, reader_openings

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
MAKE_DUMP = ROOT.parent / "shared" / "tools" / "make-bench-dump"
PEER = "rust-pgn-reader-python-binding==4.1.0"
PEER_VENV = OUT / "peer-venv"


def build_dump(games: int) -> Path:
    path = OUT / f"dump-{games}.pgn.zst"
    if not path.exists():
        if not MAKE_DUMP.exists():
            sys.exit(f"need {MAKE_DUMP} to build the benchmark dump")
        OUT.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(MAKE_DUMP), str(path), "--games", str(games)], check=True)
    return path


def run_measured(cmd: list[str], stdout=subprocess.DEVNULL) -> tuple[float, float, int]:
    """Runs `cmd`; returns (wall seconds, CPU seconds, peak RSS in MB) of that process alone.

    The peak is the child's /proc/<pid>/status `VmHWM`, read every 10 ms while it runs (a peak in its
    last 10 ms can be missed): wait4's ru_maxrss starts from this process's RSS at the fork, so a child
    of a bench that has grown (bench_positions builds books in process first) looked as big as it."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, cwd=ROOT)
    peak_kb = 0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        peak_kb = max(peak_kb, high_water_kb(proc.pid))
        time.sleep(0.01)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen would think it running
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime, (peak_kb or usage.ru_maxrss) // 1024


def high_water_kb(pid: int) -> int:
    """The peak RSS of the running process `pid` in KB (its `VmHWM`), 0 where /proc does not say."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next((int(line.split()[1]) for line in status if line.startswith("VmHWM:")), 0)
    except OSError:
        return 0


def pinned(cmd: list[str]) -> list[str]:
    return (["taskset", "-c", "0"] if shutil.which("taskset") else []) + cmd


def load_command(dump: Path, lake: str, jobs: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "loaders.pgn2parquet",
        str(dump),
        "--lake",
        lake,
        "--progress",
        "never",
        # make-bench-dump repeats real games: dedup would skip most of them.
        "--allow-duplicates",
        "--jobs",
        str(jobs),
    ]


def loader(dump: Path, jobs: int | None = None) -> tuple[float, float, int]:
    """The loader on `dump`: pinned to one core with --jobs 1, or unpinned with `jobs`."""
    with tempfile.TemporaryDirectory() as lake:
        if jobs is None:
            return run_measured(pinned(load_command(dump, lake, 1)))
        return run_measured(load_command(dump, lake, jobs))


def loaders_at_once(dump: Path, n: int) -> tuple[float, float]:
    """`n` independent `--jobs 1` loads of `dump` started together: the wall time until the last ends and
    the CPU seconds of one (their mean). Against one such load alone, what the machine itself gives n
    cores' work (cores sharing caches, memory and, on a VM, the host's), whatever the loader does."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        procs = [
            subprocess.Popen(load_command(dump, f"{tmp}/lake{i}", 1), stdout=subprocess.DEVNULL, cwd=ROOT)
            for i in range(n)
        ]
        cpu = 0.0
        for proc in procs:
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                sys.exit(f"failed: {' '.join(map(str, proc.args))}")
            cpu += usage.ru_utime + usage.ru_stime
        return time.perf_counter() - start, cpu / n


def python_chess(dump: Path, n: int) -> float:
    """Games/s of python-chess replaying `n` games and reading the same per-ply fields as the lake."""
    with open(dump, "rb") as raw:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        return _replay(io.TextIOWrapper(reader, encoding="utf-8"), n)


def _replay(text: io.TextIOWrapper, n: int) -> float:
    start = time.process_time()
    for _ in range(n):
        game = chess.pgn.read_game(text)
        if game is None:
            break
        board = game.board()
        checks = [0, 0]
        for node in game.mainline():
            move = node.move
            piece, captured = board.piece_at(move.from_square), board.piece_at(move.to_square)
            castle = board.is_castling(move)
            en_passant = board.is_en_passant(move)
            mover = board.turn
            board.push(move)
            if board.is_check() and not board.is_checkmate():
                checks[mover] += 1
            _ = (piece, captured, castle, en_passant, move.promotion, node.nags, node.eval(), node.clock())
    return n / (time.process_time() - start)


def peer_rate(dump: Path, games: int) -> float | None:
    """Games per CPU-second of the peer binding (bench/peer_binding.py in its own venv); None when it
    cannot be installed (offline)."""
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        install = [str(python), "-m", "pip", "install", "-q", PEER, "zstandard"]
        if subprocess.run(install).returncode != 0:
            shutil.rmtree(PEER_VENV)
            return None
    script = ROOT / "bench" / "peer_binding.py"
    out = subprocess.run([str(python), str(script), str(dump), str(games)], capture_output=True, text=True)
    return float(out.stdout) if out.returncode == 0 else None


def zstd_rate(dump: Path, games: int) -> float | None:
    if not shutil.which("zstd"):
        return None
    with open(os.devnull, "wb") as sink:
        # zstd refuses symbolic links (bench/out/ may link to a shared dump).
        _, cpu, _ = run_measured(["zstd", "-dc", str(dump.resolve())], stdout=sink)
    return games / cpu


def stages(dump: Path) -> dict[str, float]:
    """CPU µs per game of each stage of a load of `dump` on this thread, in order (the games held in
    memory between stages: run it on a small dump)."""
    spent: dict[str, float] = {}

    def timed(name: str, work):
        start = time.process_time()
        out = work()
        spent[name] = time.process_time() - start
        return out

    def read() -> dict[tuple, list[pa.RecordBatch]]:
        parts: dict[tuple, list[pa.RecordBatch]] = {}
        for partition, batch, _ in _core.PgnReader(str(dump), jobs=1, openings=reader_openings()):
            if partition is not None:
                parts.setdefault(partition, []).append(pa.record_batch(batch))
        return parts

    reader_openings()  # read once per process, as a load reads it: not a cost per game
    parts = timed("read: zstd, parse, replay, Arrow, plies (Rust)", read)
    derived = timed(
        "split into games and plies (Arrow, no copy)",
        lambda: [[derive(batch) for batch in batches] for batches in parts.values()],
    )
    games = sum(batch.num_rows for batches in parts.values() for batch in batches)
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake.open(tmp)
        for table, name in ((0, "games"), (1, "plies")):

            def encode(table: int = table, name: str = name) -> None:
                for i, pairs in enumerate(derived):
                    schema = pairs[0][table].schema
                    writer = open_parquet_writer(lake, f"{name}-{i}.parquet", schema)
                    # Row groups of a partition's games as a load cuts them (≤ ROW_GROUP_GAMES games),
                    # and the plies of the same games.
                    for group in _row_groups(pairs):
                        part = pa.Table.from_batches([pair[table] for pair in group])
                        writer.write_table(part, row_group_size=max(part.num_rows, 1))
                    writer.close()

            timed(f"Parquet encoding of {name}/ (pyarrow, zstd)", encode)
    return {name: seconds * 1e6 / games for name, seconds in spent.items()}


def thread_kind(tid: int, name: str, encoders: set[int], readers: set[int]) -> str:
    """What a thread of this process does in a load, from its OS name (the Rust core names its threads)
    or, for Python's threads, which are not named for the OS, their native id."""
    if tid == os.getpid():
        return "loading thread (all of --jobs 1; encoding with 2)"
    if tid in encoders:
        return "encoder pool: derive, Parquet (pyarrow)"
    if name.startswith("bgn-reader") or tid in readers:
        return "readers: zstd, parse, replay, Arrow"
    if name.startswith("bgn-framer"):
        return "framer: zstd, cut into chunks"
    return "collector and the rest"


def threads(dump: Path, jobs: int) -> tuple[dict[str, float], float]:
    """A load of `dump` with `jobs` in this process: CPU µs per game of each kind of thread
    (`thread_kind`), from /proc/self/task sampled every 20 ms (a thread's last ~20 ms may be missed),
    and the share of samples in which fewer than `jobs` of its threads could run: the bubbles of its
    pipeline, whatever else the machine runs."""
    tick = os.sysconf("SC_CLK_TCK")
    cpu: dict[int, tuple[str, float]] = {}
    short = [0, 0]  # samples with fewer than `jobs` threads runnable, samples
    done = threading.Event()
    sampler_id = [0]  # the sampling thread's own id, not counted

    def sample() -> None:
        encoders = {t.native_id for t in threading.enumerate() if t.name.startswith("parquet")}
        # A multi-frame dump's parts, read on Python threads (and the file's checksum beside them).
        readers = {t.native_id for t in threading.enumerate() if t.name.startswith("frame-parts")}
        runnable = 0
        for tid in map(int, os.listdir("/proc/self/task")):
            if tid == sampler_id[0]:
                continue
            with contextlib.suppress(OSError), open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
                name = stat[stat.index("(") + 1 : stat.rindex(")")]
                fields = stat[stat.rindex(")") + 2 :].split()
                runnable += fields[0] == "R"
                seconds = (int(fields[11]) + int(fields[12])) / tick
                cpu[tid] = (thread_kind(tid, name, encoders, readers), seconds)
        short[0] += runnable < jobs
        short[1] += 1

    def sampler() -> None:
        sampler_id[0] = threading.get_native_id()
        while not done.wait(0.02):
            sample()

    watcher = threading.Thread(target=sampler, name="sampler")
    with tempfile.TemporaryDirectory() as tmp:
        sample()
        start = {tid: seconds for tid, (_, seconds) in cpu.items()}
        short[:] = [0, 0]
        watcher.start()
        try:
            record = load_input(str(dump), Lake.open(tmp), jobs=jobs, dedup=False).record
        finally:
            done.set()
            watcher.join()
    sample()
    by_kind: dict[str, float] = {}
    for tid, (kind, seconds) in cpu.items():
        by_kind[kind] = by_kind.get(kind, 0.0) + seconds - start.get(tid, 0.0)
    games = record.games_written
    micros = {kind: seconds * 1e6 / games for kind, seconds in sorted(by_kind.items(), key=lambda kv: -kv[1])}
    return micros, short[0] / max(short[1], 1)


def _row_groups(pairs: list[tuple[pa.RecordBatch, pa.RecordBatch]]):
    """`pairs` (games, plies) in runs of at most `ROW_GROUP_GAMES` games."""
    group: list[tuple[pa.RecordBatch, pa.RecordBatch]] = []
    rows = 0
    for pair in pairs:
        group.append(pair)
        rows += pair[0].num_rows
        if rows >= ROW_GROUP_GAMES:
            yield group
            group, rows = [], 0
    if group:
        yield group


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200_000)
    ap.add_argument("--oracle-games", type=int, default=2_000)
    ap.add_argument("--peer-games", type=int, default=50_000, help="games the peer binding parses")
    cores = len(os.sched_getaffinity(0))
    ap.add_argument(
        "--jobs",
        type=int,
        nargs="+",
        default=sorted({1, cores}),
        help=f"loader --jobs values to measure, unpinned (default: 1 and {cores}, the cores available)",
    )
    ap.add_argument("--runs", type=int, default=1, help="runs of each --jobs value, the fastest kept")
    args = ap.parse_args()

    dump = build_dump(args.games)
    small = build_dump(args.games // 4)
    wall, cpu, rss = loader(dump)
    _, _, rss_small = loader(small)
    ours = args.games / cpu
    baseline = python_chess(dump, args.oracle_games)
    zstd = zstd_rate(dump, args.games)
    peer = peer_rate(dump, args.peer_games)
    # Best of --runs (the fastest wall clock): on a machine shared with other jobs, a run that the others
    # left fewer cores is not the loader's scaling. Runs go in rounds (jobs 1, 2, …, then again), so that
    # a machine whose speed drifts during the bench (a VM's neighbours) weighs on every N alike.
    runs: dict[int, list[tuple[float, float, int]]] = {jobs: [] for jobs in args.jobs}
    most = max(args.jobs)
    at_once: list[tuple[float, float]] = []
    for _ in range(args.runs):
        for jobs in args.jobs:
            runs[jobs].append(loader(dump, jobs))
        if most > 1:
            at_once.append(loaders_at_once(dump, most))
    scaling = [(jobs, *min(runs[jobs])) for jobs in args.jobs]
    breakdown = stages(small)
    by_thread = [(jobs, *threads(small, jobs)) for jobs in args.jobs]

    print(f"dump: {dump.name}, {args.games:,} games, {dump.stat().st_size / 1e6:.1f} MB")
    print(f"{'what':44s} {'games/s':>12s}")
    print(f"{'loader, per CPU-second (pinned to 1 core)':44s} {ours:12,.0f}")
    print(f"{'loader, wall clock on 1 core':44s} {args.games / wall:12,.0f}")
    print(f"{'python-chess replay, 1 core':44s} {baseline:12,.0f}")
    peer_name = f"{PEER.split('==')[0]}, 1 core"
    print(f"{peer_name:44s} {peer:12,.0f}" if peer else f"{peer_name:44s} {'unavailable':>12s}")
    if zstd:
        print(f"{'zstd -d alone, 1 core':44s} {zstd:12,.0f}")
    print(f"speed-up over python-chess: {ours / baseline:.0f}x")
    reader = 1e6 / next(iter(breakdown.values()))  # the first stage: the Rust reader alone
    if peer:
        # Issue 30's goals, as same-run ratios: the VM's speed drifts between runs, ratios less.
        print(f"loader end to end / peer: {ours / peer:.2f}x (goal >= 0.5x)")
        print(
            f"Rust reader alone / peer: {reader / peer:.2f}x ({reader:,.0f} games per CPU-second; goal >= 1x)"
        )
    header = f"{'games/s wall':>13s} {'per CPU-s':>10s} {'CPU %':>6s} {'speed-up':>9s}"
    print(f"\n{'loader --jobs N (N cores), unpinned':36s} {header}   (best of {args.runs})")
    first_wall = scaling[0][1]
    for jobs, jwall, jcpu, jrss in scaling:
        print(
            f"{'--jobs ' + str(jobs):36s} {args.games / jwall:13,.0f} {args.games / jcpu:10,.0f} "
            f"{100 * jcpu / jwall:6.0f} {first_wall / jwall:8.2f}x   peak RSS {jrss} MB"
        )
    if len(scaling) > 1 and scaling[0][0] == 1:
        most, most_wall = scaling[-1][0], scaling[-1][1]
        print(
            f"--jobs {most} against --jobs 1, wall: {first_wall / most_wall:.2f}x (goal >= 1.8x on 2 cores)"
        )
    if at_once and scaling[0][0] == 1:
        # The same work as --jobs N (N loads' games in the wall time of one), by N processes that share
        # nothing but the machine: the most --jobs N could give here.
        wall_n, cpu_one = min(at_once)
        print(
            f"the machine's own ceiling: {most} independent --jobs 1 loads at once, "
            f"{most * scaling[0][1] / wall_n:.2f}x the games per wall second of one alone; "
            f"each took {cpu_one / scaling[0][2]:.2f}x the CPU of one alone"
        )
    print(f"peak RSS: {rss} MB for {args.games:,} games, {rss_small} MB for {args.games // 4:,}")
    print(f"\nwhere a game's CPU goes (one thread, {args.games // 4:,} games)   µs/game")
    for name, micros in breakdown.items():
        print(f"  {name:52s} {micros:6.1f}")
    total = sum(breakdown.values())
    print(f"  {'total (' + f'{1e6 / total:,.0f}' + ' games per CPU-second)':52s} {total:6.1f}")
    for jobs, micros, short in by_thread:
        title = f"where a load's CPU goes with --jobs {jobs}, by thread ({args.games // 4:,} games)"
        print(f"\n{title}   µs/game")
        for kind, spent in micros.items():
            print(f"  {kind:52s} {spent:6.1f}")
        print(f"  {'total':52s} {sum(micros.values()):6.1f}")
        print(f"  fewer than {jobs} of its threads runnable: {short:.0%} of the samples")


if __name__ == "__main__":
    main()
