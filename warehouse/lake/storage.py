"""Where a lake (or an export) lives: a local directory or an ``s3://bucket/prefix`` URL.

`filesystem` is the one place that turns such a location into a `pyarrow.fs.FileSystem` and the path to
use on it, so that lakes (`warehouse.lake.Lake.open`), exports' outputs and the tests agree on how S3 is
reached::

    fs, root = filesystem("s3://chess/lake")      # S3FileSystem, "chess/lake"
    fs, root = filesystem("lake")                 # LocalFileSystem, "/abs/path/to/lake"

S3 is configured the way the AWS tools are, from the environment:

- credentials: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN`` (else
  ``~/.aws/credentials``, else the instance's role), read by the AWS SDK inside pyarrow;
- region: ``AWS_REGION``, else ``AWS_DEFAULT_REGION``; without either, the bucket's own region is asked
  of AWS (``us-east-1`` when an endpoint is set: local servers ignore it);
- endpoint: ``AWS_ENDPOINT_URL_S3``, else ``AWS_ENDPOINT_URL`` (e.g. ``http://127.0.0.1:9000`` for MinIO
  or moto); its scheme decides between HTTP and HTTPS;
- how long to wait (so that a dead or stalled endpoint ends a run with an error instead of hanging):
  ``CHESS_S3_CONNECT_TIMEOUT`` seconds to connect (default 10), ``CHESS_S3_REQUEST_TIMEOUT`` seconds
  without a byte moving on an open connection (default 30) and ``CHESS_S3_ATTEMPTS`` tries of each
  request (default 3, with backoff): a request to an endpoint that stopped answering fails after about
  attempts times (connect or request timeout).

Paths on the returned filesystem are ``/``-separated and have no trailing slash; join with ``f"{root}/x"``.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from warehouse.errors import StorageError

S3_SCHEME = "s3"
GLOB_CHARS = re.compile(r"[*?\[]")
# A URL scheme and a colon not followed by `//` (`s3:/bucket`, `S3:bucket`, `gs:/x`). Two characters at
# least: `c:` is a drive letter elsewhere.
MISTYPED_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):(?!//)")
# Used when an endpoint is set and no region is: S3-compatible servers accept any region.
ENDPOINT_DEFAULT_REGION = "us-east-1"


@dataclass(frozen=True)
class S3Limit:
    """A bound on S3 requests, read from an environment variable."""

    variable: str
    default: float
    low: float
    high: float
    integer: bool = False

    def value(self) -> float:
        text = os.environ.get(self.variable, "").strip()
        if not text:
            return self.default
        try:
            value: float | None = int(text) if self.integer else float(text)
        except ValueError:
            value = None
        if value is None or not self.low <= value <= self.high:
            kind = "a whole number" if self.integer else "a number of seconds"
            raise StorageError(
                f"{self.variable}={text!r}: expected {kind} from {self.low:g} to {self.high:g}"
            )
        return value


# Long enough for a slow link or a server-side copy of a big file (S3 sends nothing until it is done),
# short enough that a stalled endpoint fails the run instead of hanging it.
S3_CONNECT_TIMEOUT = S3Limit("CHESS_S3_CONNECT_TIMEOUT", 10, 0.1, 3600)
S3_REQUEST_TIMEOUT = S3Limit("CHESS_S3_REQUEST_TIMEOUT", 30, 1, 3600)
S3_ATTEMPTS = S3Limit("CHESS_S3_ATTEMPTS", 3, 1, 100, integer=True)


def filesystem(location: str | os.PathLike[str]) -> tuple[pafs.FileSystem, str]:
    """The filesystem holding `location` and `location`'s path on it.

    `location` is a local path (relative paths are made absolute; ``file://`` URLs are accepted) or
    ``s3://bucket[/prefix]``. Nothing is read or created: a missing directory or bucket shows on first use
    (as `FileNotFoundError` / `OSError` from pyarrow).

    :raises StorageError: for a URL of another scheme (``gs://``, ``http://``), one whose ``://`` is
        mistyped (``s3:/bucket``, ``s3:bucket``: else a local folder named ``s3:``), an ``s3://`` URL
        without a bucket or with a ``.``, ``..`` or empty segment in its key (S3 keeps them as written, so
        that the objects written and those listed would differ), or an unusable ``AWS_ENDPOINT_URL``.
    """
    if not isinstance(location, str):
        location = os.fsdecode(location)
    if not is_utf8(location):
        # pyarrow takes paths as UTF-8 text only: refused here rather than failing in the middle of a run.
        raise StorageError(f"{printable(location)}: the name is not valid UTF-8; rename it")
    scheme, sep, rest = location.partition("://")
    if not sep:
        if mistyped := MISTYPED_URL.match(location):
            raise StorageError(
                f"{location}: a URL whose `://` is mistyped (write {mistyped[1]}://…); a local path "
                f"of that name goes as ./{location}"
            )
        return pafs.LocalFileSystem(), _local_path(location)
    scheme = scheme.lower()
    if scheme == "file":
        return pafs.LocalFileSystem(), _local_path(urlsplit(location).path)
    if scheme != S3_SCHEME:
        raise StorageError(f"{location}: unsupported location (use a local path or s3://bucket/prefix)")
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise StorageError(f"{location}: no bucket in the S3 URL (use s3://bucket/prefix)")
    segments = [bucket, *prefix.removesuffix("/").split("/")] if prefix else [bucket]
    if odd := [segment for segment in segments if segment in ("", ".", "..")]:
        raise StorageError(
            f"{location}: no `{odd[0] or '//'}` in an S3 key (S3 would store objects under other keys "
            "than it lists); name the prefix without it"
        )
    return _s3_filesystem(bucket, location), "/".join(segments)


def input_stream(fs: pafs.FileSystem, path: str) -> pa.NativeFile:
    """The bytes of the file at `path` as stored. pyarrow's own default would decompress a file named
    `.bz2`, `.zst` or `.gz` on the fly: an input's checksum would then be taken over other bytes than the
    file's, and a compressed input's magic would never be seen."""
    return fs.open_input_stream(path, compression=None)


def output_stream(fs: pafs.FileSystem, path: str) -> pa.NativeFile:
    """A new file at `path` holding the bytes written, as written. pyarrow's own default would compress
    again what is written to a file named `.bz2`, `.zst` or `.gz`: the output would be compressed twice."""
    return fs.open_output_stream(path, compression=None)


def is_s3(location: str) -> bool:
    return location.lower().startswith(f"{S3_SCHEME}://")


def s3_files(given: str) -> list[str]:
    """The objects an ``s3://`` URL names, sorted: the object itself, every object under it (a prefix), or
    those matching it (a glob: ``*``, ``?``, ``[…]`` in its key).

    :raises StorageError: when the bucket cannot be listed."""
    match = GLOB_CHARS.search(given)
    base = given[: match.start()].rsplit("/", 1)[0] if match else given.rstrip("/")
    fs, root = filesystem(base)
    if not match and fs.get_file_info(root).type == pafs.FileType.File:
        return [given]
    try:
        listed = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    except OSError as e:
        raise StorageError(f"{given}: {e}") from e
    names = [f"{base}/{entry.path[len(root) + 1 :]}" for entry in listed if entry.type == pafs.FileType.File]
    return sorted(n for n in names if not match or fnmatch.fnmatchcase(n, given))


def is_utf8(name: str) -> bool:
    """False for a name given as bytes that are not UTF-8 (Python keeps them as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(name: str) -> str:
    """`name` for a message: bytes that are not UTF-8 shown as `\\xNN`."""
    return os.fsencode(name).decode("utf-8", errors="backslashreplace")


def _local_path(location: str) -> str:
    return Path(location).expanduser().absolute().as_posix()


def _s3_filesystem(bucket: str, location: str) -> pafs.S3FileSystem:
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    limits = {
        "connect_timeout": S3_CONNECT_TIMEOUT.value(),
        "request_timeout": S3_REQUEST_TIMEOUT.value(),
        "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=int(S3_ATTEMPTS.value())),
    }
    if not endpoint:
        return pafs.S3FileSystem(region=region or _bucket_region(bucket), **limits)
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise StorageError(f"{location}: AWS_ENDPOINT_URL {endpoint!r} is not an http(s)://host[:port] URL")
    return pafs.S3FileSystem(
        **limits,
        region=region or ENDPOINT_DEFAULT_REGION,
        scheme=parts.scheme,
        endpoint_override=parts.netloc,
        # Local servers (moto, MinIO) serve buckets by path; virtual hosts would need DNS for each bucket.
        force_virtual_addressing=False,
    )


def _bucket_region(bucket: str) -> str | None:
    """The bucket's region as AWS reports it, or None (the SDK's default) when it cannot be asked."""
    try:
        return pafs.resolve_s3_region(bucket)
    except OSError:
        return None
