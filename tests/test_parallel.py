"""`--jobs`: the lake's content is the same for any number of reader threads.

Each input is loaded with jobs=1 (the single-threaded reader), jobs=2 (that reader on a thread of its
own, the row groups encoded beside it: `load_threads`) and jobs=4 cutting tiny chunks (`BGN_CHUNK_BYTES`),
so that even small files cross chunk boundaries at every place; the lakes are compared as values: games
sorted by (source_file, source_offset), plies sorted by their keys, the rejects files line by line in
order, and each load record's counts. File names differ (load ids), contents do not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import zstandard
from support import (
    CORPORA,
    DATA,
    cut_frames,
    damaged,
    lake_table,
    load,
    load_summary,
    make_games,
    present,
    python,
    read_records,
    run_command,
)

from warehouse import _core
from warehouse.cores import default_jobs
from warehouse.ingest import frame_parts
from warehouse.ingest.load import load_input
from warehouse.lake import parquet
from warehouse.lake.encoders import Encoders
from warehouse.lake.layout import Partition
from warehouse.lake.location import Lake
from warehouse.lake.parquet import coalesced
from warehouse.lake.positions import reader_openings

EDGE_WITH_REJECTS = [
    "edge/pgn-extract/eco.pgn",  # not_a_game among 2,000 games
    "edge/pychess/testing/gamefiles/schess.pgn",  # unreadable_move, unsupported_variant
    "edge/pgn-extract/test/infiles/odds.pgn",  # null_move
    "edge/python-chess/data/games_history/immortal-games.pgn",  # ambiguous_move
    "edge/pychess/learn/puzzles/lichess_study_lichess-practice-the-fork_by_arex_2017.01.29.pgn",
    "edge/duckdb-chess/test/pgn_files/parse_errors.pgn",  # truncated
    "edge/duckdb-chess/test/pgn_files/parser_stage_error.pgn",  # unterminated_comment
    "edge/pgn-extract/test/infiles/test-nobadresults.pgn",  # unparsable
    "edge/duckdb-chess/test/pgn_files/malformed.pgn",
    "edge/scid/gtest/res_gameLatin1.pgn",
    "edge/scalachess/fixtures/unclosedQuote.pgn",
]


def _load_all(inputs: list[Path], lake: Path, jobs: int) -> list[dict[str, Any]]:
    """Loads `inputs` one after the other into `lake`; each load's record fields and rejects lines."""
    opened = Lake.open(str(lake))
    return [load_summary(load_input(str(path), opened, jobs=jobs).record, lake) for path in inputs]


def assert_same_lakes(
    inputs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> list[dict[str, Any]]:
    """Loads `inputs` with jobs=1, 2 and 4 (chunks of `chunk` bytes); asserts the lakes hold the same
    values; returns the loads' records and rejects lines."""
    one = tmp_path / "jobs1"
    serial = _load_all(inputs, one, jobs=1)
    monkeypatch.setenv("BGN_CHUNK_BYTES", str(chunk))
    game_keys = ["type", "year", "month", "source_file", "source_offset"]
    games1 = lake_table(one, "games", game_keys)
    assert games1.num_rows == sum(r["games_written"] for r in serial)
    ply_keys = ["type", "year", "month", "game_key", "ply"]
    plies1 = lake_table(one, "plies", ply_keys)
    for jobs in (2, 4):
        lake = tmp_path / f"jobs{jobs}"
        assert _load_all(inputs, lake, jobs=jobs) == serial, jobs
        assert lake_table(lake, "games", game_keys).equals(games1), jobs
        assert lake_table(lake, "plies", ply_keys).equals(plies1), jobs
    return serial


def test_lichess_sample_and_tournament(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = present(DATA / "lichess_2025-05_sample.pgn.zst", CORPORA / "tournament" / "twic1599_sample.pgn")
    assert_same_lakes(inputs, tmp_path, monkeypatch, chunk=20_000)


def test_engine_games(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = sorted(present(CORPORA / "engine")[0].glob("*.pgn"))
    assert inputs
    assert_same_lakes(inputs, tmp_path, monkeypatch, chunk=200_000)


@pytest.mark.parametrize("chunk", [1, 3000])
def test_edge_files_with_rejects(chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = present(*(CORPORA / rel for rel in EDGE_WITH_REJECTS))
    loads = assert_same_lakes(inputs, tmp_path, monkeypatch, chunk=chunk)
    kinds = {kind for load in loads for kind in load["rejects_by_kind"]}
    assert {"not_a_game", "unsupported_variant", "null_move", "truncated"} <= kinds, kinds


def test_damaged_and_truncated_zst_and_cr_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = make_games(0, 400).encode()
    frames = zstandard.ZstdCompressor(level=1).compress(text)
    damaged = tmp_path / "damaged.pgn.zst"
    damaged.write_bytes(frames[: len(frames) * 2 // 3] + b"\xab" * 64)
    # A download stopped inside the last game: the game is rejected as truncated at the end.
    cut = tmp_path / "cut.pgn.zst"
    cut.write_bytes(zstandard.ZstdCompressor().compress(text[: text.rindex(b"} ") + 2]))
    cr = tmp_path / "cr.pgn"
    cr.write_bytes(make_games(400, 300).replace("\n", "\r").encode())
    loads = assert_same_lakes([damaged, cut, cr], tmp_path, monkeypatch, chunk=2000)
    damaged_load, cut_load, cr_load = loads
    assert damaged_load["damage"] and "damaged_input" in damaged_load["rejects_by_kind"]
    assert cut_load["rejects_by_kind"] == {"truncated": 1}
    assert cr_load["games_written"] == 300


def test_multi_frame_inputs_read_in_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two jobs read a multi-frame `.pgn.zst` in parts of its frames, on two readers (`frame_parts`): cut
    in games, in a comment, in a game's tags (where a part's guess of its first game is wrong and it is
    read again), and damaged in its third frame (nothing after the damage is kept), the lake is the one
    read of the whole file makes, and so is its record (its checksum too)."""
    monkeypatch.setattr(frame_parts, "PART_BYTES", 1)  # a part a frame
    cut = cut_frames(tmp_path / "cut.pgn.zst", make_games(0, 300))
    broken = damaged(tmp_path / "damaged.pgn.zst")
    sample = DATA / "lichess_2025-05_sample.pgn.zst"  # two frames
    assert all(len(frame_parts.parts_to_read(str(p))) > 1 for p in (cut, broken, sample))
    with monkeypatch.context() as small:  # frames larger than a part may be: read as one, memory bounded
        small.setattr(frame_parts, "MAX_PART_BYTES", 1)
        assert frame_parts.parts_to_read(str(cut)) == []
    reads: list[int] = []
    real_read = frame_parts.PartsReader._read

    def counted(self: frame_parts.PartsReader, part: int, first_game: int | None = None) -> Any:
        reads.append(part)
        return real_read(self, part, first_game)

    monkeypatch.setattr(frame_parts.PartsReader, "_read", counted)
    loads = assert_same_lakes([cut, broken, sample], tmp_path, monkeypatch, chunk=5000)
    assert len(reads) > len(set(reads)), reads  # the part cut in a game's tags was read again
    cut_load, damaged_load, sample_load = loads
    assert cut_load["games_written"] == 300 and cut_load["sha256"]
    assert damaged_load["damage"] and "damaged_input" in damaged_load["rejects_by_kind"]
    assert 0 < damaged_load["games_seen"] < 300
    assert sample_load["sha256"]


def test_batches_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below the lake: the reader hands over the same batches, rejects and counts in the same order."""
    path = str(present(CORPORA / "edge/pychess/testing/gamefiles/schess.pgn")[0])

    def read(jobs: int) -> tuple[list[Any], tuple[int, int, int]]:
        reader = _core.PgnReader(path, batch_games=3, jobs=jobs)
        out = [(p, pa.record_batch(b).to_pylist(), r) for p, b, r in reader]
        return out, (reader.games_seen, reader.games_written, reader.games_rejected)

    serial = read(1)
    monkeypatch.setenv("BGN_CHUNK_BYTES", "1")
    assert read(4) == serial
    assert serial[1][2] > 0


def test_cli_jobs(tmp_path: Path) -> None:
    sample = DATA / "lichess_2025-05_sample.pgn.zst"
    runs = {}
    for jobs in ("1", "2"):
        lake = tmp_path / jobs
        run = load([sample], lake, "--jobs", jobs, "--progress", "never")
        assert run.returncode == 0, run.stderr
        (record,) = read_records(lake)
        runs[jobs] = {k: record[k] for k in ("games_seen", "games_written", "games_rejected")}
    assert runs["1"] == runs["2"]
    assert default_jobs() >= 1


def test_two_jobs_write_row_groups_on_the_loading_thread_while_reading_then_on_both() -> None:
    """The pipeline of two jobs: while the reader has a core of its own, a file's row groups are written
    on the thread that loads, one at a time; once the input is read, its last ones on the pool, each
    lane's tasks still in the order given."""
    encoders = Encoders(2, inline_while_reading=True)
    lane = encoders.lane()
    ran: list[tuple[int, str]] = []

    all_ran = threading.Event()

    def task(n: int) -> Callable[[], None]:
        def run() -> None:
            ran.append((n, threading.current_thread().name))
            if len(ran) == 9:
                all_ran.set()

        return run

    for n in range(3):
        lane.submit(task(n))
    loading = threading.current_thread().name
    assert ran == [(n, loading) for n in range(3)]
    encoders.use_pool()
    last = [encoders.lane(), encoders.lane()]
    for n in range(3, 9):
        last[n % 2].submit(task(n))
    assert all_ran.wait(10)
    encoders.shutdown()
    assert sorted(n for n, _ in ran) == list(range(9))
    for parity in (0, 1):
        in_lane = [n for n in range(3, 9) if n % 2 == parity]
        assert [n for n, _ in ran if n in in_lane] == in_lane
    assert all(name.startswith("parquet") for n, name in ran if n >= 3)


def test_coalesced_joins_runs_of_small_batches_in_order() -> None:
    """A parallel reader's pieces are derived and encoded in batches of at least `rows` rows; a batch of
    that size or more goes as it is (no copy)."""
    sizes = [3, 2, 10, 1, 1, 4, 2]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    batches = [pa.record_batch({"x": pa.array(range(s, s + n))}) for s, n in zip(starts, sizes, strict=True)]
    out = coalesced(batches, rows=5)
    assert [b.num_rows for b in out] == [5, 10, 6, 2]
    assert out[1] is batches[2]
    assert pa.Table.from_batches(out)["x"].to_pylist() == list(range(sum(sizes)))


def test_an_encoder_error_fails_the_load_and_commits_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row group that fails on an encoder thread fails the load (no hang, no commit), whichever of a
    load's row groups it is."""
    real_derive = parquet.derive
    calls = 0

    def derive_failing_second(games: pa.RecordBatch) -> tuple[pa.RecordBatch, pa.RecordBatch]:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise OSError("no space left on device (injected)")
        return real_derive(games)

    monkeypatch.setattr(parquet, "derive", derive_failing_second)
    lake = tmp_path / "lake"
    with pytest.raises(OSError, match="injected"):
        load_input(str(DATA / "lichess_2025-05_sample.pgn.zst"), Lake.open(str(lake)), jobs=2)
    assert calls >= 2
    assert read_records(lake) == []
    assert not list(lake.glob("games/**/*.parquet"))


def test_a_file_waits_for_every_write_before_it_raises_the_first_error() -> None:
    """A failed row group does not close its file under a later one still encoding: `wait` lets every
    write of the file end, then raises the first error, and the file stays open for `close_quietly`."""
    failed: Future[None] = Future()
    failed.set_exception(OSError("no space left on device (injected)"))
    running: Future[None] = Future()
    file = parquet._PartitionFile("f", None, None, None, None, writing=[failed, running])  # type: ignore[arg-type]
    threading.Timer(0.2, running.set_result, (None,)).start()
    with pytest.raises(OSError, match="injected"):
        file.wait()
    assert running.done()


# Reads a PGN with two jobs, holding its last 6 batches at most, drops them all, then prints how much the
# process grew (MB of VmRSS) since before the read.
_GROWTH_AFTER_A_READ = """
import sys
import pyarrow as pa
from warehouse import _core
from warehouse.lake.positions import reader_openings

def rss_mb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS:"))

openings = reader_openings()
before = rss_mb()
held = []
for _, batch, _ in _core.PgnReader(sys.argv[1], jobs=2, openings=openings):
    held = [*held[-5:], pa.table(batch)]
del held
print(rss_mb() - before)
"""


def test_a_read_gives_its_batches_memory_back(tmp_path: Path) -> None:
    """The reader threads' batches, freed by another thread in another order, go back to the system:
    glibc kept them in its arenas, free but resident (a 1M-game load with --jobs 2 ended with ~500 MB of
    them, and peaked at 1.8 GB). 40,000 games read: the process kept 370 MB more than before the read,
    now ~130 MB (glibc's holes of blocks under 64 KiB, `crates/bgn-py/src/alloc.rs`)."""
    dump = tmp_path / "games.pgn.zst"
    games = make_games(0, 2000).encode()
    with open(dump, "wb") as raw, zstandard.ZstdCompressor(level=1).stream_writer(raw) as out:
        for _ in range(20):
            out.write(games)
    run = run_command(python("-c", _GROWTH_AFTER_A_READ, dump), timeout=120)
    assert run.returncode == 0, run.stderr
    assert int(run.stdout) < 200, f"{run.stdout.strip()} MB kept after the read"


def test_the_writers_pending_row_groups_hold_at_most_their_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The games pending in the writer's row groups of all partitions, with the plies the reader derived,
    hold at most `PENDING_BYTES` (and the batch just written). They were counted at their derived row
    groups' size (a ply at 20 bytes, not the ~50 that the reader's plies take): a 1M-game load with
    --jobs 2 held ~1.35x the bound."""
    monkeypatch.setattr(parquet, "PENDING_BYTES", 2 << 20)
    pgn = tmp_path / "games.pgn"
    pgn.write_text("".join(make_games(i * 300, 300, month=1 + i) for i in range(6)) * 2)
    reader = _core.PgnReader(str(pgn), batch_games=50, openings=reader_openings())
    writer = parquet.PartitionWriter(Lake.open(tmp_path / "lake"), "op", "games")
    most = 0
    for partition, batch, _ in reader:
        parts = pa.table(batch).to_batches()
        writer.write(Partition(*partition), *parts)
        pending = [p for f in writer._open.values() for p in f.pending.values()]
        held = sum(b.nbytes for p in pending for b in p.batches)
        assert held <= parquet.PENDING_BYTES + sum(p.nbytes for p in parts)
        most = max(most, held)
    writer.finish()
    assert most > parquet.PENDING_BYTES / 2  # the bound was reached
