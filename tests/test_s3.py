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
from support import Run, run_module

from warehouse.export_json import export_json
from warehouse.export_pgn import pgn_games
from warehouse.lake import Lake
from warehouse.lake.storage import filesystem


@pytest.fixture(scope="module")
def s3_lake(s3_server: S3Server, sample_lake: Path) -> str:
    """The sample lake copied to s3://lake-bucket/lake."""
    url = s3_server.bucket("lake-bucket") + "/lake"
    fs, root = filesystem(url)
    pafs.copy_files(str(sample_lake), root, destination_filesystem=fs)
    return url


def read_s3(url: str) -> bytes:
    fs, path = filesystem(url)
    with fs.open_input_stream(path) as f:
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
