"""Exports read a lake on S3 and write to S3, against a real S3-compatible server (moto, in server mode,
on 127.0.0.1): what comes back from S3 is what the same export writes locally."""

from __future__ import annotations

import bz2
import hashlib
import io
from pathlib import Path

import pyarrow.fs as pafs
import pytest
import zstandard
from s3_server import S3Server, cut_copies
from support import (
    SAMPLE,
    Run,
    games_as_values,
    one_line_error,
    plies_as_values,
    python,
    read_games,
    read_records,
    run_command,
    run_module,
)

from warehouse.errors import InputError
from warehouse.exports.bgn_json import export_json
from warehouse.exports.pgn import pgn_games
from warehouse.ingest.load import load_input
from warehouse.lake import Lake
from warehouse.lake.storage import filesystem, input_stream, output_stream


@pytest.fixture(scope="module")
def s3_lake(s3_server: S3Server, sample_lake: Path) -> str:
    """The sample lake copied to s3://lake-bucket/lake."""
    return s3_server.lake_copy(str(sample_lake), "lake-bucket")


def read_s3(url: str) -> bytes:
    """The object's bytes as stored (as any S3 client gets them: not decompressed by its name)."""
    fs, path = filesystem(url)
    with input_stream(fs, path) as f:
        return f.read()


def run_cli(module: str, *args: str) -> Run:
    # The command inherits os.environ, which holds the server's AWS_* settings while the fixture runs.
    return run_module(module, list(args), timeout=300)


def test_json_export_from_s3_to_s3(
    s3_server: S3Server,
    s3_lake: str,
    sample_lake: Path,
    tmp_path: Path,
) -> None:
    out = s3_server.bucket("json-bucket") + "/bgn"
    remote = export_json(Lake.open(s3_lake), out, games_per_file=150)
    local = export_json(Lake.open(sample_lake), tmp_path / "bgn", games_per_file=150)
    assert remote.games == local.games == 438
    names = [path.removeprefix("json-bucket/bgn/") for path in remote.files]
    assert names == [str(Path(path).relative_to(tmp_path / "bgn")) for path in local.files]
    fs, root = filesystem(out)
    listed = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    assert sorted(i.path for i in listed if i.type == pafs.FileType.File) == sorted(remote.files)
    for name in names:
        assert bz2.decompress(read_s3(f"{out}/{name}")) == bz2.decompress(
            (tmp_path / "bgn" / name).read_bytes()
        )


def test_pgn_cli_from_s3_to_s3(s3_server: S3Server, s3_lake: str, sample_lake: Path) -> None:
    out = s3_server.bucket("pgn-bucket") + "/exports/sample.pgn.zst"
    process = run_cli("loaders.parquet2pgn", "--lake", s3_lake, out)
    assert process.returncode == 0, process.stderr
    text = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(read_s3(out))).read().decode()
    assert text == "".join(pgn for _, _, pgn in pgn_games(Lake.open(sample_lake)))


def test_json_cli_to_s3(s3_server: S3Server, s3_lake: str) -> None:
    out = s3_server.bucket("cli-bucket") + "/bgn"
    process = run_cli("loaders.parquet2json", "--lake", s3_lake, out, "--type", "classical")
    assert process.returncode == 0, process.stderr
    lines = bz2.decompress(read_s3(f"{out}/classical/2025/5/G.0.classical.json.bz2")).decode().splitlines()
    assert len(lines) == 3


def test_pgn_load_of_an_s3_prefix(s3_server: S3Server, sample_lake: Path, tmp_path: Path) -> None:
    """`pgn2parquet s3://bucket/prefix/` is one load of the prefix's PGN files, each read as stored
    (through a pipe to the Rust reader): the lake equal to the local load's but for `source_file`, each
    input's checksum its object's, a rerun a no-op, a file that is not PGN one line."""
    prefix = s3_server.bucket("pgn-inputs") + "/months"
    fs, root = filesystem(prefix)
    text = zstandard.ZstdDecompressor().stream_reader(SAMPLE.read_bytes(), read_across_frames=True).read()
    objects = {"a.pgn.zst": SAMPLE.read_bytes(), "b.pgn": text[: len(text) // 2], "c.pgn": b'{"x": 1}\n'}
    for name, data in objects.items():
        with output_stream(fs, f"{root}/{name}") as out:
            out.write(data)
    lake = tmp_path / "lake"
    done = run_cli("loaders.pgn2parquet", f"{prefix}/", "--lake", str(lake))
    one_line_error(done, f"{prefix}/c.pgn", "JSON, not PGN")
    (record,) = read_records(lake)
    inputs = {i["input"]: i for i in record["inputs"]}
    assert sorted(inputs) == [f"{prefix}/a.pgn.zst", f"{prefix}/b.pgn"]
    for name in ("a.pgn.zst", "b.pgn"):
        given = inputs[f"{prefix}/{name}"]
        assert given["sha256"] == hashlib.sha256(objects[name]).hexdigest()
        assert given["size"] == len(objects[name])
    assert inputs[f"{prefix}/a.pgn.zst"]["compression"] == "zstd"
    b_games = inputs[f"{prefix}/b.pgn"]
    assert b_games["games_seen"] == b_games["games_duplicate"] + b_games["games_rejected"] > 0
    assert games_as_values(lake) == games_as_values(sample_lake)
    assert plies_as_values(lake) == plies_as_values(sample_lake)
    sources = {g["source_file"] for g in read_games(lake, ["source_file"])}
    assert sources == {f"{prefix}/a.pgn.zst"}
    again = run_cli("loaders.pgn2parquet", f"{prefix}/*.pgn*", "--lake", str(lake))
    assert again.stdout.count("already loaded") == 2 and len(read_records(lake)) == 1
    missing = run_cli("loaders.pgn2parquet", f"{prefix}/none.pgn", "--lake", str(lake))
    one_line_error(missing, f"{prefix}/none.pgn", "no such file")
    assert missing.stderr.count(f"{prefix}/none.pgn") == 1, missing.stderr


def test_an_s3_pgn_input_cut_short_fails_the_load(
    s3_server: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An object's copy that fails part-way (the network) reaches the reader as the end of its text: the
    load fails in one error naming the object, and the lake holds nothing of it."""
    url = s3_server.bucket("cut-inputs") + "/sample.pgn"
    fs, key = filesystem(url)
    text = zstandard.ZstdDecompressor().stream_reader(SAMPLE.read_bytes(), read_across_frames=True).read()
    with output_stream(fs, key) as out:
        out.write(text)

    cut_copies(monkeypatch, len(text) // 3)
    lake = tmp_path / "lake"
    with pytest.raises(InputError, match="connection reset") as raised:
        load_input(url, Lake.open(str(lake), creating=True), jobs=1)
    assert str(raised.value).startswith(url)
    assert read_records(lake) == []
    assert not list(lake.rglob("*.parquet"))


@pytest.mark.parametrize(
    ("lake", "message"),
    [("s3://lake-bucket/nothing-here", "not a lake"), ("s3://no-such-bucket/lake", "not a lake")],
)
def test_missing_s3_lake_is_one_line(s3_lake: str, tmp_path: Path, lake: str, message: str) -> None:
    process = run_cli("loaders.parquet2json", "--lake", lake, str(tmp_path / "out"))
    assert process.returncode == 2
    assert message in process.stderr
    assert len(process.stderr.strip().splitlines()) == 1, process.stderr


# --- issue 26, item 5: S3 keys with `.`/`..`, and URLs with a mistyped `://` ---


@pytest.fixture(scope="module")
def dots_bucket(s3_server: S3Server) -> str:
    return s3_server.bucket("dots")


def s3_objects(url: str) -> list[str]:
    fs, root = filesystem(url)
    listed = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    return sorted(i.path for i in listed if i.type == pafs.FileType.File)


@pytest.mark.parametrize("key", ["x/../lake", "./lake", "a/./lake", "lake/..", "a//lake"])
def test_s3_keys_with_dot_segments_are_refused(dots_bucket: str, sample_lake: Path, key: str) -> None:
    """A load into, and an export to, such a key: one line, before any object is written (objects landed
    under `lake/` while listings kept the `..`: publishing failed, and each rerun loaded the input again)."""
    shown = "//" if "//" in key else ("`..`" if ".." in key.split("/") else "`.`")
    load_run = run_cli("loaders.pgn2parquet", str(SAMPLE), "--lake", f"{dots_bucket}/{key}")
    one_line_error(load_run, f"{dots_bucket}/{key}", shown.strip("`"))
    export_run = run_cli("loaders.parquet2pgn", f"{dots_bucket}/{key}/out.pgn", "--lake", str(sample_lake))
    one_line_error(export_run, f"{dots_bucket}/{key}/out.pgn")
    assert s3_objects(dots_bucket) == []


def run_in(folder: Path, module: str, *args: str) -> Run:
    """`python -m MODULE ARGS` run from `folder`: where a relative location would land."""
    code = "import os, runpy, sys\nos.chdir(sys.argv[1])\nsys.argv = sys.argv[2:]\n"
    code += "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)\n"
    return run_command(python("-c", code, str(folder), module, *args))


@pytest.mark.parametrize(
    "location", ["s3:/bucket/lake", "s3:bucket/lake", "S3:/bucket/lake", "gs:/b/lake", "http:/h/x"]
)
def test_urls_with_a_mistyped_separator_are_refused(location: str, sample_lake: Path, tmp_path: Path) -> None:
    """As a lake or an output: one line, and no local folder named `s3:` (or `gs:`…) made."""
    one_line_error(run_in(tmp_path, "loaders.pgn2parquet", str(SAMPLE), "--lake", location), location, "://")
    one_line_error(
        run_in(tmp_path, "loaders.parquet2pgn", f"{location}.pgn", "--lake", str(sample_lake)), "://"
    )
    one_line_error(run_in(tmp_path, "loaders.parquet2json", location, "--lake", str(sample_lake)), "://")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("module", ["loaders.parquet2pgn", "loaders.parquet2json"])
def test_an_output_inside_an_s3_lake_is_refused(s3_lake: str, module: str) -> None:
    """Issue 26, item 11, on S3: an output under the lake's prefix, by its key."""
    before = s3_objects(s3_lake)
    run = run_cli(module, f"{s3_lake}/games/type=blitz/out.pgn", "--lake", s3_lake)
    one_line_error(run, "inside the lake")
    assert s3_objects(s3_lake) == before
