"""Where a lake (or an export) lives: a local directory or an ``s3://bucket/prefix`` URL.

`lake_filesystem` is the one place that turns such a location into a `pyarrow.fs.FileSystem` and the path
to use on it, so the loader, the exports and the tests agree on how S3 is reached::

    fs, root = lake_filesystem("s3://chess/lake")      # S3FileSystem, "chess/lake"
    fs, root = lake_filesystem("lake")                 # LocalFileSystem, "/abs/path/to/lake"
    dataset = pyarrow.dataset.dataset(f"{root}/games", filesystem=fs, format="parquet", partitioning="hive")

S3 is configured the way the AWS tools are, from the environment:

- credentials: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN`` (else
  ``~/.aws/credentials``, else the instance's role), read by the AWS SDK inside pyarrow;
- region: ``AWS_REGION``, else ``AWS_DEFAULT_REGION``; without either, the bucket's own region is asked
  of AWS (``us-east-1`` when an endpoint is set: local servers ignore it);
- endpoint: ``AWS_ENDPOINT_URL_S3``, else ``AWS_ENDPOINT_URL`` (e.g. ``http://127.0.0.1:9000`` for MinIO
  or moto); its scheme decides between HTTP and HTTPS.

Paths on the returned filesystem are ``/``-separated and have no trailing slash; join with ``f"{root}/x"``.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow.fs as pafs

__all__ = ["StorageError", "is_s3", "lake_filesystem"]

S3_SCHEME = "s3"
# Used when an endpoint is set and no region is: S3-compatible servers accept any region.
ENDPOINT_DEFAULT_REGION = "us-east-1"


class StorageError(ValueError):
    """A location that cannot be used (bad URL, unknown scheme, bad endpoint); the message is one line."""


def is_s3(location: str | os.PathLike[str]) -> bool:
    """Whether `location` is an ``s3://`` URL (any case of the scheme)."""
    return isinstance(location, str) and location[:5].lower() == "s3://"


def lake_filesystem(location: str | os.PathLike[str]) -> tuple[pafs.FileSystem, str]:
    """The filesystem holding `location` and `location`'s path on it.

    `location` is a local path (relative paths are made absolute; ``file://`` URLs are accepted) or
    ``s3://bucket[/prefix]``. Nothing is read or created: a missing directory or bucket shows on first use
    (as `FileNotFoundError` / `OSError` from pyarrow).

    :raises StorageError: for a URL of another scheme (``gs://``, ``http://``), an ``s3://`` URL without
        a bucket, or an unusable ``AWS_ENDPOINT_URL``.
    """
    if not isinstance(location, str):
        return pafs.LocalFileSystem(), _local_path(location)
    scheme, sep, rest = location.partition("://")
    if not sep:
        return pafs.LocalFileSystem(), _local_path(location)
    scheme = scheme.lower()
    if scheme == "file":
        return pafs.LocalFileSystem(), _local_path(urlsplit(location).path)
    if scheme != S3_SCHEME:
        raise StorageError(f"{location}: unsupported location (use a local path or s3://bucket/prefix)")
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise StorageError(f"{location}: no bucket in the S3 URL (use s3://bucket/prefix)")
    path = "/".join(part for part in [bucket, *prefix.split("/")] if part)
    return _s3_filesystem(bucket, location), path


def _local_path(location: str | os.PathLike[str]) -> str:
    return Path(location).expanduser().absolute().as_posix()


def _s3_filesystem(bucket: str, location: str) -> pafs.S3FileSystem:
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not endpoint:
        return pafs.S3FileSystem(region=region or _bucket_region(bucket))
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise StorageError(f"{location}: AWS_ENDPOINT_URL {endpoint!r} is not an http(s)://host[:port] URL")
    return pafs.S3FileSystem(
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
