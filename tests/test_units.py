"""The pure functions, in-process and fast: commit records, compaction's grouping and digest, the dedup id
index, the PGN export's tags and movetext, input names and fingerprints, the lake's layout, the commands'
option parsers and ending, the exports' variation walk. Every expected value is worked out by hand (or by
an independent computation: hashlib, a Python set), never taken from the function under test."""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import re
import signal
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from warehouse.errors import LakeError, NotPublished
from warehouse.ingest.inputs import EDGE_BYTES, file_sha256, fingerprint, input_stem
from warehouse.lake.dedup import IdSet, SortedIds
from warehouse.lake.layout import Partition, inside_lake, record_path, staged
from warehouse.lake.records import JSON, PGN, CompactRecord, LoadedInput, LoadRecord, Record, Records
from warehouse.lake.rewrite import groups
from warehouse.maintenance.compact import Digest

UTC = timezone.utc


@pytest.fixture
def cli() -> Iterator[Any]:
    """loaders.cli, with the test process's Ctrl-C handler put back after the test: importing the module
    installs its own (a command's), and `run` installs Python's default."""
    handler = signal.getsignal(signal.SIGINT)
    from loaders import cli

    signal.signal(signal.SIGINT, handler)
    yield cli
    signal.signal(signal.SIGINT, handler)


# --- warehouse.lake.records ---


def load_record(load_id: str, **fields: Any) -> LoadRecord:
    return LoadRecord(load_id=load_id, games_seen=1, games_written=1, games_rejected=0, **fields)


def test_same_input_is_a_live_load_by_checksum_else_by_fingerprint() -> None:
    first = load_record("a", sha256="s1", fingerprint="f1")
    replaced = load_record("b", sha256="s2", fingerprint="f2")
    forced = load_record("c", sha256="s2", fingerprint="f2", replaces=["b"])
    from_stdin = load_record("d", sha256="s4", fingerprint=None)
    records = Records([first, replaced, forced, from_stdin, CompactRecord(load_id="e")])
    assert records.loads == [first, forced, from_stdin]
    assert records.same_input("s1", "f1", PGN) == [first]
    assert records.same_input("s2", "f2", PGN) == [forced]  # not the load `--force` replaced
    assert records.same_input("zz", "f1", PGN) == []  # a known checksum decides alone
    assert records.same_input(None, "f1", PGN) == [first]
    assert records.same_input(None, None, PGN) == []  # no fingerprint matches a load without one


def test_same_input_is_a_load_of_the_same_format_older_records_told_by_what_they_hold() -> None:
    pgn = load_record("a", sha256="s1", fingerprint="f1", format=PGN)
    json_load = load_record("b", sha256="s1", fingerprint="f1", format=JSON)
    assert Records([pgn, json_load]).same_input("s1", None, JSON) == [json_load]
    # Records of older versions, without `format`: a JSON import of a PGN file (every game not JSON, the
    # file zstd or plain), a JSON import with another JSON kind, and a PGN load.
    older = [
        load_record("c", sha256="s2", compression="zstd", rejects_by_kind={"not_json": 1}),
        load_record("d", sha256="s2", compression="json"),
        load_record("e", sha256="s2", compression="gzip", rejects_by_kind={"disagrees": 1, "truncated": 1}),
        load_record("f", sha256="s2", compression="zstd", rejects_by_kind={"truncated": 1}),
    ]
    records = Records(older)
    assert [r.load_id for r in records.same_input("s2", None, JSON)] == ["c", "d", "e"]
    assert [r.load_id for r in records.same_input("s2", None, PGN)] == ["f"]


def test_a_load_of_several_inputs_is_known_by_each_and_round_trips() -> None:
    inputs = [
        LoadedInput(input="a.json", fingerprint="fa", sha256="sa", games_seen=2, games_written=2),
        LoadedInput(input="b.json", fingerprint="fb", sha256="sb", games_seen=1, games_rejected=1),
    ]
    both = load_record("a", input="studies", format=JSON, inputs=inputs)
    alone = load_record("b", input="c.json", format=JSON, sha256="sc", fingerprint="fc")
    records = Records([both, alone])
    assert records.same_input("sb", None, JSON) == [both]
    assert records.same_input(None, "fa", JSON) == [both]
    assert records.same_input("sa", None, PGN) == []
    assert records.same_input("sc", None, JSON) == [alone]
    assert [i.input for i in alone.input_files()] == ["c.json"] and alone.input_files()[0].sha256 == "sc"
    read = Record.from_json(both.to_json(), "a")
    assert read == both and isinstance(read, LoadRecord) and read.inputs == inputs
    damaged = json.loads(both.to_json())
    damaged["inputs"][1]["games_seen"] = "1"
    with pytest.raises(ValueError, match=r"^'games_seen' is not int"):
        Record.from_json(json.dumps(damaged), "a")
    damaged["inputs"] = ["a.json"]
    with pytest.raises(ValueError, match=r"^'inputs' is not a list of objects"):
        Record.from_json(json.dumps(damaged), "a")


def test_live_files_leave_out_what_later_operations_retired() -> None:
    records = Records(
        [
            load_record("a", file_rows={"games/p/a.parquet": 3}),
            load_record("b", file_rows={"games/p/b.parquet": 2}),
            load_record(
                "c", file_rows={"games/p/c.parquet": 2}, replaces=["b"], removes=["games/p/b.parquet"]
            ),
            CompactRecord(load_id="d", file_rows={"games/p/d.parquet": 3}, removes=["games/p/a.parquet"]),
        ]
    )
    assert records.live_files() == {"games/p/c.parquet": 2, "games/p/d.parquet": 3}


def test_records_round_trip_through_json() -> None:
    load = load_record(
        "20250501T120000-abcd1234",
        files=["games/type=blitz/year=2025/month=5/may-1.parquet"],
        file_rows={"games/type=blitz/year=2025/month=5/may-1.parquet": 10},
        started=datetime(2025, 5, 1, 12, tzinfo=UTC),
        finished=datetime(2025, 5, 1, 12, 0, 1, 500000, tzinfo=UTC),
        seconds=1.5,
        input="may.pgn.zst",
        sha256="ab" * 32,
        rejects_file="rejects/may.jsonl",
        rejects_by_kind={"illegal_move": 1},
    )
    text = load.to_json()
    data = json.loads(text)
    assert (data["kind"], data["started"], data["finished"]) == (
        "load",
        "2025-05-01T12:00:00.000000+00:00",
        "2025-05-01T12:00:01.500000+00:00",
    )
    assert Record.from_json(text, "20250501T120000-abcd1234") == load
    assert load.added_files() == [*load.files, "rejects/may.jsonl"]
    compaction = CompactRecord(
        load_id="op", removes=["games/p/a.parquet"], content={"games/p/n.parquet": "3:ff"}
    )
    read = Record.from_json(compaction.to_json(), "op")
    assert isinstance(read, CompactRecord) and read == compaction


def test_records_of_older_versions_read_the_same() -> None:
    """No `kind` (a load), whole-second times with or without an offset (UTC), a whole number of seconds,
    keys of a newer version ignored."""
    text = json.dumps(
        {
            "load_id": "old",
            "games_seen": 3,
            "games_written": 2,
            "games_rejected": 1,
            "started": "2025-05-01T12:00:00",
            "finished": "2025-05-01T12:00:02+00:00",
            "seconds": 2,
            "a_newer_key": [1],
        }
    )
    record = Record.from_json(text, "old")
    assert isinstance(record, LoadRecord) and record.reconciles()
    assert record.started == datetime(2025, 5, 1, 12, tzinfo=UTC)
    assert record.finished == datetime(2025, 5, 1, 12, 0, 2, tzinfo=UTC)
    assert record.seconds == 2


VALID = {"load_id": "op", "games_seen": 1, "games_written": 1, "games_rejected": 0}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"load_id": "op", "games_', "not JSON"),
        ("[" * 100_000, "not JSON"),
        ("[1, 2]", "a JSON list, not an object"),
        (json.dumps({**VALID, "kind": "merge"}), "unknown kind 'merge'"),
        (json.dumps({k: v for k, v in VALID.items() if k != "games_seen"}), "no 'games_seen'"),
        (json.dumps({**VALID, "games_seen": True}), "'games_seen' is not int"),
        (json.dumps({**VALID, "file_rows": ["x"]}), "'file_rows' is not dict[str, int]"),
        (json.dumps({**VALID, "started": "yesterday"}), "'started' is not datetime | None"),
        (
            json.dumps({**VALID, "removes": ["../../outside"]}),
            "'../../outside' is not a path inside the lake",
        ),
        (json.dumps({**VALID, "rejects_file": "/etc/passwd"}), "'/etc/passwd' is not a path inside the lake"),
        (json.dumps({**VALID, "load_id": "other"}), "load_id 'other' differs from the file's name"),
    ],
    ids=[
        "truncated",
        "nested-too-deep",
        "not-an-object",
        "unknown-kind",
        "missing-key",
        "bool-as-count",
        "wrong-type",
        "bad-time",
        "path-outside",
        "absolute-rejects-file",
        "renamed",
    ],
)
def test_damaged_records_are_refused_saying_why(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(problem)}"):
        Record.from_json(text, "op")


# --- warehouse.maintenance.compact ---


def test_groups_pack_consecutive_files_up_to_the_target() -> None:
    # a+b fill 6; c would make 9: a new group, which d (8) overflows again: c and d stay alone.
    assert groups([("a", 3), ("b", 3), ("c", 3), ("d", 5)], 6) == [["a", "b"]]
    # A file over the target is a group of its own (left alone); the small ones after it are packed.
    assert groups([("x", 10), ("y", 1), ("z", 1)], 4) == [["y", "z"]]
    assert groups([("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1)], 2) == [["a", "b"], ["c", "d"]]
    assert groups([("a", 1)], 10) == [] and groups([], 10) == []


def digest(*batches: pa.RecordBatch) -> tuple[int, int]:
    total = Digest()
    for batch in batches:
        total.add(batch)
    return total.rows, total.hash


def test_digest_is_independent_of_order_batches_and_encoding() -> None:
    table = pa.table({"game_id": ["a", "b", "c", "d"], "type": ["blitz", "blitz", "rapid", "blitz"]})
    rows = table.to_batches()[0]
    whole = digest(rows)
    assert whole[0] == 4
    assert digest(rows.slice(0, 1), rows.slice(1)) == whole
    assert digest(rows.slice(2), rows.slice(0, 2)) == whole  # another order
    encoded = pa.record_batch([rows["game_id"], rows["type"].dictionary_encode()], names=["game_id", "type"])
    assert digest(encoded) == whole  # dictionary columns hash by value, not by code
    changed = pa.record_batch([pa.array(["a", "b", "c", "e"]), rows["type"]], names=["game_id", "type"])
    assert digest(changed) != whole


# --- warehouse.lake.dedup ---


def uint64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


def test_sorted_ids_find_what_was_added_and_merge_runs() -> None:
    ids = SortedIds()
    assert not ids.contains(uint64(1)).any()  # empty
    ids.add(uint64(5, 1, 3))
    ids.add(uint64(2))
    ids.add(uint64())
    assert [run.tolist() for run in ids.runs] == [[1, 3, 5], [2]]  # 2 is under half of 3: its own run
    found = ids.contains(uint64(0, 1, 2, 3, 4, 5, 6, 2**64 - 1))
    assert found.tolist() == [False, True, True, True, False, True, False, False]
    ids.add(uint64(4, 6))  # [4, 6] merges with [2], then that run with [1, 3, 5]
    assert [run.tolist() for run in ids.runs] == [[1, 2, 3, 4, 5, 6]]


def test_sorted_ids_agree_with_a_set() -> None:
    rng = random.Random(9)
    ids, oracle = SortedIds(), set()
    for _ in range(200):
        batch = [
            rng.randrange(1 << 64) if rng.random() < 0.5 else rng.randrange(500)
            for _ in range(rng.randrange(9))
        ]
        probe = [rng.randrange(500) for _ in range(20)] + batch
        assert ids.contains(np.array(probe, dtype=np.uint64)).tolist() == [v in oracle for v in probe]
        ids.add(np.array(sorted(set(batch) - oracle), dtype=np.uint64))
        oracle |= set(batch)
        lengths = [len(run) for run in ids.runs]
        assert all(a > 2 * b for a, b in itertools.pairwise(lengths)), lengths  # O(log n) runs


def test_id_set_keeps_first_occurrences_of_new_ids() -> None:
    """Lichess ids (8 characters), content ids (16 hex digits) and any other id, each in its own index:
    "abcdefgh" read as a little-endian uint64 is 0x6867666564636261, the value of the content id
    "6867666564636261", and both are kept."""
    seen = IdSet()
    first = pa.array(
        ["abcdefgh", "abcdefgh", "6867666564636261", "not an id", "not an id", "ghijklmnopqrstuv"]
    )
    assert seen.add_new(first).tolist() == [True, False, True, True, False, True]
    again = pa.array(["6867666564636261", "abcdefgh", "zzzzzzzz", "not an id", "ghijklmnopqrstuv"])
    assert seen.add_new(again).tolist() == [False, False, True, False, False]
    sliced = pa.array(["abcdefgh", "qwertyui", "0000000000000001"]).slice(1)  # an array with an offset
    assert seen.add_new(sliced).tolist() == [True, True]
    assert seen.add_new(sliced).tolist() == [False, False]


# --- warehouse.ingest.inputs ---


@pytest.mark.parametrize(
    ("path", "stem"),
    [
        ("/data/lichess_db_standard_rated_2024-01.pgn.zst", "lichess_db_standard_rated_2024-01"),
        ("-", "stdin"),
        ("games.PGN.BZ2", "games"),
        ("a.pgn.txt.gz", "a"),
        ("my games (1).pgn", "my_games_1_"),
        ("café.pgn", "caf_"),
        ("x.tar", "x.tar"),
        (".pgn", "input"),
    ],
)
def test_input_stem(path: str, stem: str) -> None:
    assert input_stem(path) == stem


def test_fingerprint_is_size_head_and_tail(tmp_path: Path) -> None:
    small = tmp_path / "small.pgn"
    small.write_bytes(b"hello")
    digest = hashlib.sha256(b"hello").hexdigest()
    assert fingerprint(str(small)) == f"5:{digest}:{digest}"
    data = random.Random(3).randbytes(3 * EDGE_BYTES + 7)
    big = tmp_path / "big.pgn"
    big.write_bytes(data)
    head, tail = (hashlib.sha256(part).hexdigest() for part in (data[:EDGE_BYTES], data[-EDGE_BYTES:]))
    assert fingerprint(str(big)) == f"{len(data)}:{head}:{tail}"
    assert file_sha256(str(big)) == hashlib.sha256(data).hexdigest()
    assert fingerprint("-") is None and fingerprint(str(tmp_path)) is None


# --- warehouse.lake.layout ---


def test_layout_paths() -> None:
    assert Partition("blitz", 2025, 5).dir == "games/type=blitz/year=2025/month=5"
    assert staged("op1", "games/a.parquet") == "_staging/op1/games/a.parquet"
    assert record_path("op1") == "_loads/op1.json"


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("games/a.parquet", True),
        ("a..b/c", True),  # `..` only as a component leaves the lake
        ("", False),
        ("/etc/passwd", False),
        ("games/../../x", False),
        ("..", False),
        ("games/a\0.parquet", False),
        (5, False),
        (None, False),
    ],
)
def test_inside_lake(path: object, inside: bool) -> None:
    assert inside_lake(path) is inside


# --- loaders.cli ---


def usage_error(message: str) -> pytest.RaisesExc[argparse.ArgumentTypeError]:
    """The option's usage error, with exactly `message`."""
    return pytest.raises(argparse.ArgumentTypeError, match=f"^{re.escape(message)}$")


def test_whole_number_options(cli: Any) -> None:
    batch = cli.whole_number(1, 50_000)
    assert batch("1") == 1 and batch("50000") == 50_000
    for text, message in [
        ("0", "0 is not a whole number from 1 to 50,000"),
        ("50001", "50001 is not a whole number from 1 to 50,000"),
        ("x", "'x' is not a whole number"),
        ("1e3", "'1e3' is not a whole number"),
    ]:
        with usage_error(message):
            batch(text)
    with usage_error("1 is not at least 2"):
        cli.whole_number(2)("1")
    with usage_error("13 is not a month"):
        cli.whole_number(1, 12, "a month")("13")


def test_location_options(cli: Any) -> None:
    assert cli.location("s3://bucket/lake") == "s3://bucket/lake"
    with usage_error("empty path"):
        cli.location("")
    with usage_error("caf\\xe9: not a UTF-8 name; rename it"):
        cli.location("caf\udce9")  # the bytes caf\xe9 as Python receives them from argv


def test_help_paragraph(cli: Any) -> None:
    assert cli.paragraph("Title.\n\nWhat it does,\non two lines.\n\nMore.") == "What it does,\non two lines."


def test_parser_errors_are_one_line(cli: Any, capsys: pytest.CaptureFixture[str]) -> None:
    parser = cli.OneLineParser(prog="x")
    with pytest.raises(SystemExit) as ended:
        parser.parse_args(["--bad"])
    assert ended.value.code == 2
    assert capsys.readouterr().err == "error: unrecognized arguments: --bad (see --help)\n"


def raising(error: BaseException) -> Any:
    def command() -> int:
        raise error

    return command


@pytest.mark.parametrize(
    ("error", "code", "stderr"),
    [
        (LakeError("no such lake: x"), 2, "error: no such lake: x\n"),
        (OSError(28, "No space left on device", "/lake/f"), 2, "error: No space left on device (/lake/f)\n"),
        (KeyboardInterrupt(), 130, "interrupted: nothing was added\n"),
        (KeyboardInterrupt("half of it written"), 130, "interrupted: half of it written\n"),
        (
            NotPublished("in.pgn", "op1", KeyboardInterrupt()),
            130,
            "interrupted: in.pgn: committed as op1 but not fully published; run again to finish publishing\n",
        ),
        (
            NotPublished("in.pgn", "op1", OSError(5, "Input/output error")),
            2,
            "error: in.pgn: Input/output error; committed as op1 but not fully published; run again to "
            "finish publishing\n",
        ),
    ],
    ids=["user-error", "os-error", "ctrl-c", "ctrl-c-says-why", "interrupted-publish", "failed-publish"],
)
def test_run_ends_in_one_line(
    cli: Any, capsys: pytest.CaptureFixture[str], error: BaseException, code: int, stderr: str
) -> None:
    assert cli.run(raising(error), "nothing was added") == code
    assert capsys.readouterr().err == stderr


def test_run_passes_bugs_and_exit_codes_through(cli: Any) -> None:
    assert cli.run(lambda: 0, "x") == 0 and cli.run(lambda: 1, "x") == 1
    with pytest.raises(ValueError, match="a bug"):
        cli.run(raising(ValueError("a bug")), "x")
