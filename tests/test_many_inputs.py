"""Many input files, one load: a folder or glob of study JSON or of PGN files is one commit, its files cut
by partition (not by input), each input recorded with its fingerprint, so that a rerun is a no-op and a
changed file is noticed; rejects name their file and offset; the lake holds what a load of the same games
from one PGN file holds, value for value."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
import zstandard
from support import (
    CORPORA,
    SAMPLE_GAMES,
    assert_row_groups_by_kind,
    check_lake,
    games_as_values,
    lake_counts,
    lake_table,
    load,
    loaded,
    make_games,
    one_line_error,
    plies_as_values,
    present,
    python,
    read_inputs,
    read_records,
    read_rejects,
    run_command,
    run_module,
    sample_games,
    write_zst,
)

from warehouse.errors import LoadError
from warehouse.exports.bgn_json import export_json
from warehouse.exports.study import export_study
from warehouse.ingest import json_files, merge
from warehouse.ingest import load as load_module
from warehouse.lake import Lake, parquet
from warehouse.lake.layout import plies_twin

GAME_KEYS = ["game_id"]


def games_of_files(lake: Path, files: list[str]) -> list[dict[str, object]]:
    """The games of `lake` (`games_as_values`) whose study files (named by game id) are among `files`."""
    names = {Path(f).name for f in files}
    return [g for g in games_as_values(lake) if f"{g['game_id']}.json" in names]


def test_a_folder_of_study_files_is_one_load(sample_lake: Path, tmp_path: Path) -> None:
    studies = tmp_path / "studies"
    export_study(Lake.open(sample_lake), studies)  # one file a game
    files = sorted(studies.glob("*.json"))
    assert len(files) == SAMPLE_GAMES
    (studies / "broken.json").write_text('{"metadata": {"white": "x"}, "moves": [}\n')
    lake = tmp_path / "lake"
    done = run_module("loaders.json2parquet", [str(studies), "--lake", str(lake)])
    assert done.returncode == 0, done.stderr
    (record,) = read_records(lake)
    inputs = {Path(i["input"]).name: i for i in record["inputs"]}
    assert len(inputs) == SAMPLE_GAMES + 1
    assert all(i["fingerprint"] and i["sha256"] for i in inputs.values())
    assert inputs["broken.json"]["games_rejected"] == 1
    assert record["games_seen"] == record["games_written"] + record["games_rejected"] == SAMPLE_GAMES + 1
    # Files cut by partition, not by input: one games file (and its plies twin) a partition.
    partitions = {str(Path(f).parent) for f in record["files"]}
    assert len(record["files"]) == len(partitions) < 20
    (reject,) = read_rejects(lake)
    assert (Path(reject["source_file"]).name, reject["source_offset"], reject["kind"]) == (
        "broken.json",
        0,
        "not_json",
    )
    # The same games as the PGN load, value for value, and each game's own input named.
    assert games_as_values(lake) == games_as_values(sample_lake)
    assert plies_as_values(lake) == plies_as_values(sample_lake)
    sources = lake_table(lake, "games", GAME_KEYS).column("source_file").to_pylist()
    ids = lake_table(lake, "games", GAME_KEYS).column("game_id").to_pylist()
    assert all(Path(s).name == f"{i}.json" for s, i in zip(sources, ids, strict=True))
    check_lake(lake)

    again = run_module("loaders.json2parquet", [str(studies), "--lake", str(lake)])
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already loaded") == SAMPLE_GAMES + 1
    assert len(read_records(lake)) == 1

    # A changed file (the same game, pretty-printed) is noticed, loaded, its game a duplicate.
    changed = files[0]
    changed.write_text(json.dumps(json.loads(changed.read_text()), indent=1) + "\n")
    third = run_module("loaders.json2parquet", [str(studies), "--lake", str(lake)])
    assert third.returncode == 0, third.stderr
    assert third.stdout.count("already loaded") == SAMPLE_GAMES
    last = max(read_records(lake), key=lambda r: r["finished"])
    assert (last["input"], last["games_seen"], last["games_duplicate"]) == (str(changed), 1, 1)
    assert [Path(i["input"]).name for i in read_inputs(lake)].count(changed.name) == 2
    check_lake(lake)


def test_a_folder_of_pgn_files_is_one_load(sample_lake: Path, tmp_path: Path) -> None:
    games = sample_games()
    folder = tmp_path / "pgn"
    (folder / "sub").mkdir(parents=True)
    for n in range(0, len(games), 50):
        text = "\n".join(games[n : n + 50])
        if n % 100:
            write_zst(folder / "sub" / f"part{n:03d}.pgn.zst", text)
        else:
            (folder / f"part{n:03d}.pgn").write_text(text)
    (folder / "notes.txt").write_text("not an input")
    lake = tmp_path / "lake"
    done = load([folder], lake)
    assert done.returncode == 0, done.stderr
    (record,) = read_records(lake)
    assert len(record["inputs"]) == (len(games) + 49) // 50
    assert {i["compression"] for i in record["inputs"]} == {"pgn", "zstd"}
    assert sum(i["games_written"] for i in record["inputs"]) == record["games_written"] == SAMPLE_GAMES
    assert games_as_values(lake) == games_as_values(sample_lake)
    assert plies_as_values(lake) == plies_as_values(sample_lake)
    assert load([folder], lake).stdout.count("already loaded") == len(record["inputs"])
    # --force reloads the inputs of a load together, never one alone out of the files they share.
    one = str(folder / "part000.pgn")
    one_line_error(load([one], lake, "--force"), "part000.pgn", "--force reloads that load's inputs together")
    forced = load([folder], lake, "--force")
    assert forced.returncode == 0, forced.stderr
    assert "replaced load" in forced.stdout and len(read_records(lake)) == 2
    assert games_as_values(lake) == games_as_values(sample_lake)
    check_lake(lake)

    # A changed file (the same games, a blank line more between them) is noticed, loaded, its games
    # duplicates; the others are already loaded.
    changed = folder / "part000.pgn"
    changed.write_text("\n\n".join(games[:50]))
    again = load([folder], lake)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already loaded") == len(record["inputs"]) - 1
    last = max(read_records(lake), key=lambda r: r["finished"])
    assert (last["input"], last["games_seen"], last["games_duplicate"]) == (str(changed), 50, 50)
    assert games_as_values(lake) == games_as_values(sample_lake)
    check_lake(lake)


def test_a_refused_input_is_its_line_and_the_others_load(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    games = sample_games()
    (folder / "a.pgn").write_text("\n".join(games[:10]))
    (folder / "b.pgn").write_text('{"not": "pgn"}\n')
    (folder / "c.pgn").write_text("\n".join(games[10:20]))
    lake = tmp_path / "lake"
    done = load([folder], lake)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "b.pgn" in line
    (record,) = read_records(lake)
    assert sorted(Path(i["input"]).name for i in record["inputs"]) == ["a.pgn", "c.pgn"]
    assert record["games_written"] == 20


def test_inputs_read_a_chunk_at_a_time_make_the_same_one_load(
    sample_lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory stays bounded however many files a load reads: they are read and replayed a chunk at a time
    (here a file a chunk), one load all the same, with the same games."""
    studies = tmp_path / "studies"
    export_study(Lake.open(sample_lake), studies)
    files = sorted(str(p) for p in studies.glob("*.json"))[:60]
    monkeypatch.setattr(json_files, "CHUNK_BYTES", 1)
    chunks = []
    monkeypatch.setattr(
        json_files.JsonSource, "_read_chunk", counted(json_files.JsonSource._read_chunk, chunks)
    )
    lake = tmp_path / "lake"
    result = json_files.load_json_files(files, Lake.open(lake), jobs=1)
    assert len(chunks) == len(files) and len(read_records(lake)) == 1
    assert result.record.games_written == len(files) == len(result.record.inputs)
    assert games_as_values(lake) == games_of_files(sample_lake, files)


def bgn_lines_of(lake: Path, folder: Path) -> list[bytes]:
    """The BGN JSON lines of `lake`'s games, as `export_json` writes them into `folder`."""
    export_json(Lake.open(lake), folder, compression="zst")
    reader = zstandard.ZstdDecompressor()
    return [
        line
        for path in sorted(folder.rglob("*.json.zst"))
        for line in reader.decompressobj().decompress(path.read_bytes()).splitlines()
    ]


def test_one_input_over_many_chunks_is_one_load(
    sample_lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An input too big for one chunk goes on in the next ones (read and replayed a chunk at a time,
    memory bounded by the chunk, not by the input): one input of one load all the same, its games
    and plies those of the PGN load, its refused lines at their offsets and line numbers."""
    lines = bgn_lines_of(sample_lake, tmp_path / "bgn")
    bad = {10: b"{not json", 200: b'{"moves": "e4"}', 400: b"[1, 2"}
    for at in sorted(bad):  # each at its index in the end
        lines.insert(at, bad[at])
    path = tmp_path / "all.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.setattr(json_files, "BLOCK_BYTES", 64 << 10)
    monkeypatch.setattr(json_files, "CHUNK_BYTES", 1)
    chunks: list[object] = []
    monkeypatch.setattr(
        json_files.JsonSource, "_read_chunk", counted(json_files.JsonSource._read_chunk, chunks)
    )
    lake = tmp_path / "lake"
    result = json_files.load_json_files([str(path)], Lake.open(lake), jobs=1)
    assert len(chunks) > 10 and len(read_records(lake)) == 1
    record = result.record
    assert (record.games_seen, record.games_written, record.games_rejected) == (len(lines), SAMPLE_GAMES, 3)
    assert (record.input, record.inputs, record.size) == (str(path), [], path.stat().st_size)
    starts = [sum(len(line) + 1 for line in lines[:n]) for n in range(len(lines))]
    rejects = sorted((r["source_offset"], r["reason"].split(":")[0]) for r in read_rejects(lake))
    assert rejects == [(starts[at], f"line {at + 1}") for at in sorted(bad)]
    assert games_as_values(lake) == games_as_values(sample_lake)
    assert plies_as_values(lake) == plies_as_values(sample_lake)
    check_lake(lake)


def test_an_input_found_damaged_after_its_first_chunk_fails_the_load(
    sample_lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A damaged input is refused whole; one whose damage shows after a chunk of its games was read can
    no longer be: the load fails in one line and commits nothing."""
    text = b"\n".join(bgn_lines_of(sample_lake, tmp_path / "bgn")) + b"\n"
    data = bytearray(zstandard.ZstdCompressor().compress(text))
    data[-200:-100] = bytes(100)  # the end of the frame's data, damaged
    path = tmp_path / "damaged.jsonl.zst"
    path.write_bytes(bytes(data))
    monkeypatch.setattr(json_files, "BLOCK_BYTES", 64 << 10)
    monkeypatch.setattr(json_files, "CHUNK_BYTES", 1)
    lake = tmp_path / "lake"
    with pytest.raises(LoadError, match=r"damaged\.jsonl\.zst: damaged zstd data .* the load is abandoned"):
        json_files.load_json_files([str(path)], Lake.open(lake), jobs=1)
    assert read_records(lake) == [] and not list(lake.rglob("*.parquet"))


def counted(method: Any, calls: list[object]) -> Any:
    """`method`, each call appended to `calls`."""

    def wrapper(self: object, *args: Any) -> Any:
        calls.append(args)
        return method(self, *args)

    return wrapper


@pytest.fixture(scope="module")
def sample_studies(sample_lake: Path, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The sample's games exported one study file a game (named by game id: partitions in random order)."""
    studies = tmp_path_factory.mktemp("studies")
    export_study(Lake.open(sample_lake), studies)
    return sorted(map(str, studies.glob("*.json")))


def few_open(monkeypatch: pytest.MonkeyPatch, max_open: int) -> list[int]:
    """Loads (in this process) keep `max_open` partitions open; returns the files each load's writer
    staged, as they are appended, before the merge."""
    staged: list[int] = []
    merge = load_module.merge_reopened

    def counted(
        lake: Lake, op_id: str, file_rows: dict[str, int], ply_rows: dict[str, int], **options: Any
    ) -> Any:
        staged.append(len(file_rows))
        return merge(lake, op_id, file_rows, ply_rows, **options)

    monkeypatch.setattr(
        load_module, "PartitionWriter", functools.partial(parquet.PartitionWriter, max_open=max_open)
    )
    monkeypatch.setattr(load_module, "merge_reopened", counted)
    return staged


def assert_published_as_recorded(lake: Path) -> int:
    """The lake's one load published one `games/` file a partition with its `plies/` twin, exactly the
    files its record lists with their rows, the twins holding the plies of the same games in the same
    order, row groups of one kind; nothing left in staging. Returns the partitions."""
    (record,) = read_records(lake)
    games = sorted(str(p.relative_to(lake)) for p in (lake / "games").rglob("*.parquet"))
    plies = sorted(str(p.relative_to(lake)) for p in (lake / "plies").rglob("*.parquet"))
    assert sorted(record["files"]) == sorted(record["file_rows"]) == games
    assert sorted(record["ply_rows"]) == plies == sorted(map(plies_twin, games))
    partitions = {str(Path(f).parent) for f in games}
    assert len(games) == len(partitions)
    for rel in games:
        with pq.ParquetFile(lake / rel) as g, pq.ParquetFile(lake / plies_twin(rel)) as p:
            counts = g.metadata.num_rows, p.metadata.num_rows
            assert counts == (record["file_rows"][rel], record["ply_rows"][plies_twin(rel)]), rel
            keys = g.read(columns=["game_key", "n_plies"])
            expected = np.repeat(keys["game_key"].to_numpy(), keys["n_plies"].to_numpy())
            assert (p.read(columns=["game_key"])["game_key"].to_numpy() == expected).all(), rel
    assert sum(record["file_rows"].values()) == record["games_written"]
    assert_row_groups_by_kind(lake)
    assert not [p for p in (lake / "_staging").rglob("*") if p.is_file()]
    return len(partitions)


def test_a_load_merges_the_partitions_its_writer_reopened(
    sample_lake: Path, sample_studies: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Study files named by game id cycle through the partitions; a writer keeping fewer open than that
    closes and reopens them, several small files each, which the load merges into one a partition before
    it commits: the lake holds what the PGN load of the same games holds, value for value (issue 32)."""
    staged = few_open(monkeypatch, 2)
    lake = tmp_path / "lake"
    # The reader hands a partition's games over every 4 (else it holds the sample's 5 partitions whole).
    result = json_files.load_json_files(sample_studies, Lake.open(lake), jobs=1, batch_games=4)
    assert result.record.games_written == SAMPLE_GAMES
    partitions = assert_published_as_recorded(lake)
    assert staged[0] > 2 * partitions  # the writer did reopen partitions: there was something to merge
    # Row groups as the PGN load writes them: each partition's few games in one, the others then the analysed.
    kinds = assert_row_groups_by_kind(lake)
    assert kinds == assert_row_groups_by_kind(sample_lake) and kinds[1] > 0
    assert games_as_values(lake) == games_as_values(sample_lake)
    assert plies_as_values(lake) == plies_as_values(sample_lake)
    check_lake(lake)


def test_a_merge_packs_its_files_up_to_the_files_games(
    sample_lake: Path, sample_studies: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partition's staged files are packed in files of at most `FILE_GAMES` games, in the order written,
    as compaction packs them: two consecutive ones never fit in one."""
    staged = few_open(monkeypatch, 2)
    monkeypatch.setattr(merge, "FILE_GAMES", 50)
    lake = tmp_path / "lake"
    json_files.load_json_files(sample_studies, Lake.open(lake), jobs=1, batch_games=4)
    (record,) = read_records(lake)
    by_partition: dict[str, list[int]] = {}
    for rel, rows in record["file_rows"].items():
        by_partition.setdefault(str(Path(rel).parent), []).append(rows)
    assert staged[0] > len(record["file_rows"]) > len(by_partition)
    for files in by_partition.values():
        assert max(files) <= 50 and len(files) <= 2 * sum(files) // 50 + 1, files
    assert games_as_values(lake) == games_as_values(sample_lake)
    assert_row_groups_by_kind(lake)


def test_study_files_of_more_partitions_than_the_writer_keeps_open(tmp_path: Path) -> None:
    """Real games of a century of tournaments, one study file a game, imported by the command as one load
    with the writer's own limit of open partitions: one file a partition, as their PGN load."""
    (pgn,) = present(CORPORA / "tournament" / "scoutfish" / "famous_games.pgn")
    pgn_lake = loaded([pgn], tmp_path / "pgn")
    studies = tmp_path / "studies"
    export_study(Lake.open(pgn_lake), studies)
    lake = tmp_path / "lake"
    done = run_module("loaders.json2parquet", [str(studies), "--lake", str(lake)])
    assert done.returncode == 0, done.stderr
    assert assert_published_as_recorded(lake) > parquet.MAX_OPEN_PARTITIONS

    def tags_sorted(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # A study keeps a game's other tags, not their order among the ones it names (as before issue 32).
        return [g | {"headers": sorted(g["headers"] or [])} for g in games]

    assert tags_sorted(games_as_values(lake)) == tags_sorted(games_as_values(pgn_lake))
    assert plies_as_values(lake) == plies_as_values(pgn_lake)
    check_lake(lake)


# A load of study files with 2 partitions open, killed (SIGKILL) at `argv[1]` of its merge: after a
# partition's merged file is written, or at the first rename of a merged file (every file it replaces
# deleted).
_KILLED_MERGE = """
import functools, os, signal, sys
from warehouse.ingest import json_files, load, merge
from warehouse.lake import Lake, location, parquet

load.PartitionWriter = functools.partial(parquet.PartitionWriter, max_open=2)
def kill(*args):
    os.kill(os.getpid(), signal.SIGKILL)
if sys.argv[1] == "merged":
    merged = merge._merge
    merge._merge = lambda *args: (merged(*args), kill())
else:
    location.Lake.move = kill
json_files.load_json_files(sys.argv[3:], Lake.open(sys.argv[2]), jobs=1, batch_games=2)
"""


@pytest.mark.parametrize("moment", ["merged", "renaming"])
def test_a_load_killed_while_merging_leaves_nothing(
    sample_lake: Path,
    sample_studies: list[str],
    moment: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lake = tmp_path / "lake"
    files = sample_studies[:80]
    killed = run_command(python("-c", _KILLED_MERGE, moment, str(lake), *files))
    assert killed.returncode == -9, killed.stderr
    assert any(p.is_file() for p in (lake / "_staging").rglob("*.parquet"))  # it was merging
    assert not read_records(lake) and lake_counts(lake) == (0, 0)
    staged = few_open(monkeypatch, 2)
    json_files.load_json_files(files, Lake.open(lake), jobs=1, batch_games=2)
    assert staged[0] > assert_published_as_recorded(lake)
    assert games_as_values(lake) == games_of_files(sample_lake, files)


@pytest.mark.parametrize("kind", ["pgn", "json"])
def test_progress_counts_every_input(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `bgn load`'s and `bgn import`'s progress bar reads: the load's games and its inputs' compressed
    bytes, growing to every game and the inputs' size. It showed the reader reading now: each input of a
    PGN load, each chunk of a JSON load (64 MiB, 64 KiB here), started again at 0 of its own size."""
    monkeypatch.setattr(json_files, "CHUNK_BYTES", 1 << 16)
    sources = [write_zst(tmp_path / f"{m}.pgn.zst", make_games(600 * m, 600, month=m)) for m in (3, 4)]
    if kind == "pgn":
        inputs = [str(path) for path in sources]
    else:
        export_json(Lake.open(loaded(sources, tmp_path / "pgn_lake")), tmp_path / "bgn")
        inputs = sorted(str(path) for path in (tmp_path / "bgn").glob("**/*.json.bz2"))
    load = load_module.load_inputs if kind == "pgn" else json_files.load_json_files
    seen: list[tuple[int, int, int | None]] = []
    done = load(
        inputs,
        Lake.open(str(tmp_path / "lake")),
        progress=lambda r: seen.append((r.games_seen, r.raw_bytes_read, r.input_size)),
    )
    assert done.record.games_written == 1200
    games, raw, sizes = (list(column) for column in zip(*seen, strict=True))
    assert len(seen) > 4 and games == sorted(games) and raw == sorted(raw), seen
    assert set(sizes) == {sum(Path(path).stat().st_size for path in inputs)}
    assert games[-1] == 1200 and 0.9 * sizes[0] < raw[-1] <= sizes[0]
