"""Where exports write: files on a local disk or S3, compressed (bz2 in parallel, zstd) or plain.

bz2 is slow (~10 MB/s a core) and the bottleneck of a JSON export, so `Bz2Writer` cuts the text into
chunks and compresses them on a thread pool (`bz2.compress` releases the GIL), writing the compressed
chunks in order as independent bz2 streams, one after the other. A file of concatenated bz2 streams is a
valid bz2 file: `bzip2 -d`, Python's `bz2`, and Hadoop's codec (Spark's `spark.read.json`) read them all.

Local files are written under a hidden temporary name (``.<name>.tmp``, skipped by Spark's and DuckDB's
globs) and renamed when complete; an S3 object only appears when its upload completes.
"""

from __future__ import annotations

import bz2
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Protocol

import pyarrow.fs as pafs
import zstandard

# Text per bz2 stream: a few of bz2's 900 kB blocks, so streams cost no ratio and keep every core busy.
BZ2_CHUNK_BYTES = 4 << 20
BZ2_LEVEL = 9


class Sink(Protocol):
    def write(self, data: bytes) -> object: ...

    def close(self) -> object: ...


class Bz2Writer:
    """Writes bz2 to `out`: chunks of `chunk_bytes` compressed on `pool`, written in order.

    At most two chunks per pool thread are in flight, so memory stays bounded whatever the input size.
    """

    def __init__(self, out: Sink, pool: ThreadPoolExecutor, chunk_bytes: int | None = None):
        self.out, self.pool = out, pool
        self.chunk_bytes = chunk_bytes or BZ2_CHUNK_BYTES
        self.buffer: list[bytes] = []
        self.buffered = 0
        self.pending: deque[Future[bytes]] = deque()
        self.max_pending = 2 * (os.cpu_count() or 1)

    def write(self, data: bytes) -> None:
        self.buffer.append(data)
        self.buffered += len(data)
        if self.buffered >= self.chunk_bytes:
            data = b"".join(self.buffer)
            whole = len(data) - len(data) % self.chunk_bytes
            for start in range(0, whole, self.chunk_bytes):
                self._submit(data[start : start + self.chunk_bytes])
            self.buffer, self.buffered = [data[whole:]], len(data) - whole

    def _submit(self, chunk: bytes) -> None:
        """Queues `chunk` (any bytes: streams need not end at a line) and writes the finished ones."""
        if chunk:
            self.pending.append(self.pool.submit(bz2.compress, chunk, BZ2_LEVEL))
        while len(self.pending) > self.max_pending or (self.pending and self.pending[0].done()):
            self.out.write(self.pending.popleft().result())

    def close(self) -> None:
        self._submit(b"".join(self.buffer))
        self.buffer, self.buffered = [], 0
        while self.pending:
            self.out.write(self.pending.popleft().result())
        self.out.close()


class OutputFile:
    """A file being written on `fs` at `path`, compressed by its name's suffix (.bz2, .zst, else plain),
    visible at `path` only once `close()` returns."""

    def __init__(self, fs: pafs.FileSystem, path: str, pool: ThreadPoolExecutor):
        self.fs, self.path = fs, path
        self.local = isinstance(fs, pafs.LocalFileSystem)
        if self.local:
            fs.create_dir(parent(path), recursive=True)
        self.written = temp_path(path) if self.local else path
        raw = fs.open_output_stream(self.written)
        self.sink: Sink = compressor(path, raw, pool)

    def write(self, data: bytes) -> None:
        self.sink.write(data)

    def close(self) -> int:
        """Finishes the file and moves it into place; returns its size in bytes."""
        self.sink.close()
        if self.local:
            self.fs.move(self.written, self.path)
        return self.fs.get_file_info(self.path).size or 0

    def abort(self) -> None:
        """Drops a local file's temporary copy (an unfinished S3 upload is never visible)."""
        try:
            self.sink.close()
        finally:
            if self.local:
                self.fs.delete_file(self.written)


def compressor(path: str, raw: IO[bytes] | Sink, pool: ThreadPoolExecutor) -> Sink:
    if path.endswith(".bz2"):
        return Bz2Writer(raw, pool)
    if path.endswith(".zst"):
        # zstd's own worker threads; `closefd` closes `raw` with the writer.
        return zstandard.ZstdCompressor(level=6, threads=-1).stream_writer(raw, closefd=True)
    return raw


def temp_path(path: str) -> str:
    head, _, name = path.rpartition("/")
    return f"{head}/.{name}.tmp"


def parent(path: str) -> str:
    return path.rpartition("/")[0]


def thread_pool() -> ThreadPoolExecutor:
    """The compression pool of one export: one thread per core."""
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="compress")


def is_empty(fs: pafs.FileSystem, path: str) -> bool:
    """Whether nothing exists at `path` (or it is an empty directory)."""
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.NotFound:
        return True
    if info.type != pafs.FileType.Directory:
        return False
    return not fs.get_file_info(pafs.FileSelector(path, recursive=False))
