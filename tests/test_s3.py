"""Exports read a lake on S3 and write to S3, against a real S3-compatible server (moto, in server mode,
on 127.0.0.1): what comes back from S3 is what the same export writes locally."""

from __future__ import annotations

import bz2
import io
from pathlib import Path

import pyarrow.fs as pafs
import pytest
import zstandard
from s3_server import S3Server
from support import SAMPLE, Run, one_line_error, python, run_command, run_module

from warehouse.exports.bgn_json import export_json
from warehouse.exports.pgn import pgn_games
from warehouse.lake import Lake
from warehouse.lake.storage import filesystem, input_stream


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
