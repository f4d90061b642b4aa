"""A real S3-compatible server for tests: moto in server mode, in a subprocess, on 127.0.0.1.

Tests take the `s3_server` fixture (tests/conftest.py), one server per test module, stopped at the
module's end::

    def test_round_trip(s3_server: S3Server) -> None:
        url = s3_server.bucket("my-test")              # creates a fresh bucket, returns "s3://my-test"
        ...  # warehouse.lake.Lake.open(url + "/lake") now reaches the server

While it runs, the AWS_* environment variables point at it (endpoint `AWS_ENDPOINT_URL`, fake credentials,
region), so code under test and the commands the tests run (they inherit the environment) reach it without
extra settings; the previous values are restored afterwards. moto's S3 is in memory: nothing persists
between modules.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from warehouse.lake.storage import filesystem, input_stream

ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    # The AWS SDK must not look for an EC2 instance role (a ~1 s timeout per client) or a config file.
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}
CLEARED = ("AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN", "AWS_PROFILE")
START_SECONDS = 30


@dataclass
class S3Server:
    endpoint: str

    def bucket(self, name: str) -> str:
        """Creates bucket `name` on the server and returns its URL, ``s3://<name>``."""
        import pyarrow.fs as pafs

        fs = pafs.S3FileSystem(
            endpoint_override=self.endpoint.removeprefix("http://"), scheme="http", allow_bucket_creation=True
        )
        fs.create_dir(name)
        return f"s3://{name}"

    def lake_copy(self, lake: str, bucket: str) -> str:
        """The local lake `lake` copied to a new bucket `bucket`: its URL, ``s3://<bucket>/lake``."""
        import pyarrow.fs as pafs

        url = self.bucket(bucket) + "/lake"
        fs, root = filesystem(url)  # the lake's own client, which the AWS_* settings point here
        pafs.copy_files(lake, root, destination_filesystem=fs)
        return url


class CutStream:
    """An S3 object's stream that fails, as a dropped connection does, after its first read."""

    def __init__(self, stream: Any):
        self.stream, self.reads = stream, 0

    def read(self, size: int) -> bytes:
        self.reads += 1
        if self.reads > 1:
            raise OSError("AWS Error NETWORK_CONNECTION during GetObject operation: connection reset")
        return bytes(self.stream.read(size))

    def close(self) -> None:
        self.stream.close()


def cut_copies(monkeypatch: Any, first_bytes: int) -> None:
    """Makes each S3 object streamed to a reader (`warehouse.ingest.s3_feed`) fail after its first
    `first_bytes`: the network dropping a long read."""
    from warehouse.ingest import s3_feed

    monkeypatch.setattr(s3_feed, "COPY_BYTES", first_bytes)
    monkeypatch.setattr(s3_feed, "input_stream", lambda fs, path: CutStream(input_stream(fs, path)))


# moto (werkzeug) prints the address it listens on once bound.
LISTENING = re.compile(rb"Running on (http://127\.0\.0\.1:[0-9]+)")


@contextlib.contextmanager
def moto_server() -> Iterator[S3Server]:
    """A moto server, the AWS_* variables pointing at it, until the block ends.

    The server binds a port the system picks (`-p 0`) and prints it: no window in which another process
    (a parallel test worker's server) could take a port chosen for it beforehand."""
    saved = {name: os.environ.get(name) for name in [*ENV, *CLEARED, "AWS_ENDPOINT_URL"]}
    # The server logs every request: to a file, as a pipe nobody reads would fill and block it.
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", "0"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            endpoint = wait_until_up(process, log)
            os.environ.update(ENV, AWS_ENDPOINT_URL=endpoint)
            for name in CLEARED:
                os.environ.pop(name, None)
            yield S3Server(endpoint)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_until_up(process: subprocess.Popen[bytes], log: IO[bytes]) -> str:
    """The server's endpoint, once it answers there."""
    deadline = time.monotonic() + START_SECONDS
    endpoint = None
    while time.monotonic() < deadline:
        # pread: the server writes through the same open file, whose offset must stay at its end.
        output = os.pread(log.fileno(), os.fstat(log.fileno()).st_size, 0)
        if process.poll() is not None:
            text = output.decode(errors="replace")
            raise RuntimeError(f"moto server exited with {process.returncode}: {text[-2000:]}")
        if endpoint is None and (match := LISTENING.search(output)):
            endpoint = match.group(1).decode()
        if endpoint is not None:
            try:
                with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1):
                    return endpoint
            except OSError:
                pass
        time.sleep(0.1)
    raise RuntimeError(f"moto server did not answer on {endpoint or 'its port'} within {START_SECONDS} s")
